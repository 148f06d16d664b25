/**
 * Issue 38, "the data dir remounted read-only mid-run: answers continue, degraded status, recovery after remount rw".
 * `mount -o remount,ro` itself cannot be used: the kernel refuses it (EBUSY) while a process holds files open for
 * writing there, and homed's SQLite databases are always open read-write. So two honest ways, one test each:
 *
 * 1. A real kernel read-only file system, the way an SD card fails: the data dir is ext4 on a loop device
 *    (`errors=remount-ro`) whose image lives on a small tmpfs ({@link LoopExt4}). Filling that tmpfs makes the
 *    device's writes fail, jbd2 aborts the journal and ext4 turns read-only (real `EROFS`). Once the journal is
 *    aborted `remount,rw` does not bring it back (see tests/support/loop_ext4.ts), so recovery is the one an owner
 *    does: stop homed, unmount, `e2fsck -fy`, mount, start homed.
 * 2. Read-only mid-run and back without a restart: strace attaches to the running homed and fails every write-type
 *    system call on the data dir's files with `EROFS` (syscall fault injection, restricted with `-P` to those files
 *    — the replies still reach their sockets); stopping strace is the "remount rw".
 *
 * Both check: every chat (HTTP, and the owner's on QQ) is answered while the disk is read-only; `/api/status`
 * `storage.degraded` names the stores that cannot write; after recovery the next turn is remembered and no store is
 * degraded, no partial file is left and every database passes `PRAGMA integrity_check`.
 *
 * Both need root (mount, ptrace); outside CI they are ignored without it, under `CI=true` they run and must pass.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import type { Daemon } from "../src/daemon.ts";
import { FakeLlm } from "./support/fake_llm.ts";
import { LoopExt4, loopExt4 } from "./support/loop_ext4.ts";
import type { OneBotSim } from "./support/onebot_sim.ts";
import { outsideNeed, programRuns } from "./support/outside_tool.ts";
import { connectOwner, sentToOwner, startOwnerDaemon } from "./support/owner_daemon.ts";
import { assertWhole, chat, chatOnQq, degraded, filesUnder } from "./support/storage_checks.ts";
import { teardown } from "./support/teardown.ts";
import { waitFor } from "./support/wait.ts";

const strace = await outsideNeed("strace (root, to attach to this process)", () => programRuns("strace", ["-V"]));

Deno.test({
  name: "ext4 turns read-only under homed (its device fails): answers go on, degraded, e2fsck and restart recover",
  ignore: loopExt4.ignore,
  fn: async () => {
    loopExt4.assertAvailable();
    const fake = FakeLlm.start();
    const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-read-only-ext4-" });
    let disk: LoopExt4 | undefined;
    let daemon: Daemon | undefined;
    let sim: OneBotSim | undefined;
    try {
      // An "SD card" of 24 MB under an ext4 of 64 MB: homed's files fit; the filler takes the rest.
      disk = await LoopExt4.create(dir, { tmpfsSize: "24m", imageSize: "64m" });
      const data = disk.mountPoint;
      const journal = join(data, "memory", "candidates.jsonl");
      // The heartbeat (the context's save, the store re-check) every second.
      daemon = await startOwnerDaemon({ dir, llm: fake, daemon: { heartbeat_interval: "1s" } });
      sim = await connectOwner(daemon);
      await chat(daemon, fake, "The spare key is under the blue flowerpot");
      await waitFor(
        async () => (await Deno.readTextFile(journal)).includes("blue flowerpot"),
        "the first chat journaled",
      );
      // Before the device fails, what is journaled is on it (an owner's sync, or homed's own).
      await Deno.open(journal).then((file) => file.sync().finally(() => file.close()));

      await disk.failBacking();
      // Each chat appends to the journal: its next commit meets the failing device, ext4 aborts its journal and
      // turns read-only; from then on the journal's writes fail with EROFS.
      const long = (n: number) => `Message ${n} while the card fails: ${"the weather is fine today. ".repeat(100)}`;
      let n = 0;
      await waitFor(
        async () => {
          await chat(daemon!, fake, long(++n));
          return (await degraded(daemon!)).some((entry) => entry.store === "memory journal");
        },
        "the memory journal degraded",
        { limitMs: 30_000, everyMs: 200 },
      );
      // The kernel's read-only, not homed's idea of it: a new file cannot be made either.
      await assert.rejects(() => Deno.writeTextFile(join(data, "after"), "x"), (error: Error) => {
        assert.equal((error as { code?: string }).code, "EROFS", error.message);
        return true;
      });
      // Answers go on, over HTTP and on QQ.
      await chat(daemon, fake, "Is the light in the hall still on?");
      await chatOnQq(sim, fake, "What is for dinner?");
      // The journal's appends meet the read-only file system; a store whose fsync met the failing device first
      // reads the loop device's error, ENOSPC from the full tmpfs under it ("disk_full"): the first error of the
      // episode is the one shown.
      const stores = await degraded(daemon);
      const journalEntry = stores.find((entry) => entry.store === "memory journal");
      assert.equal(journalEntry?.kind, "read_only", JSON.stringify(stores));
      assert.match(journalEntry!.error, /Read-only file system/);
      for (const entry of stores) {
        assert.ok(["read_only", "io_error", "disk_full"].includes(entry.kind), JSON.stringify(entry));
        assert.ok(entry.path.startsWith(data), entry.path);
      }
      const toOwner = () => sentToOwner(sim!).filter((text) => text.includes("cannot write to its disk"));
      await waitFor(() => toOwner().length > 0, "the owner was told");

      // The way back: stop homed, unmount, e2fsck, mount, start homed on the same data dir.
      await sim.close();
      sim = undefined;
      await daemon.stop();
      daemon = undefined;
      await disk.repair();
      daemon = await startOwnerDaemon({ dir, llm: fake, daemon: { heartbeat_interval: "1s" } });
      sim = await connectOwner(daemon);
      await chat(daemon, fake, "After the repair: we eat dumplings tonight");
      await chatOnQq(sim, fake, "Remember: the plumber comes on Friday");
      await waitFor(async () => {
        const text = await Deno.readTextFile(journal);
        return text.includes("we eat dumplings tonight") && text.includes("the plumber comes on Friday") &&
          (await degraded(daemon!)).length === 0;
      }, "the next turns journaled and no store degraded");
      await sim.close();
      sim = undefined;
      await daemon.stop();
      daemon = undefined;

      const lines = await assertWhole(data);
      // What was journaled before the device failed is still there.
      assert.match(lines.join("\n"), /blue flowerpot/);
    } finally {
      await teardown(
        () => sim?.close(),
        () => daemon?.stop(),
        () => fake.close(),
        () => disk?.destroy(),
        () => Deno.remove(dir, { recursive: true }),
      );
    }
  },
});

/** The system calls that write, make, rename or remove a file — each fails with EROFS on a read-only file system. */
const WRITES = [
  "write",
  "writev",
  "pwrite64",
  "pwritev",
  "pwritev2",
  "fsync",
  "fdatasync",
  "ftruncate",
  "fallocate",
  "openat",
  "rename",
  "renameat",
  "renameat2",
  "unlink",
  "unlinkat",
  "mkdir",
  "mkdirat",
  "link",
  "linkat",
].join(",");

/**
 * Makes the data dir read-only for this process (homed runs in it) until the returned stop: strace attaches to every
 * thread and fails each {@link WRITES} call on `paths` with EROFS. `-P` matches exact paths only (a call's path
 * argument, or the path of its file descriptor), so `paths` lists every file and folder under the data dir and the
 * names SQLite and the search index make next to them; a file with a fresh random name (a temporary file of an
 * atomic write) can still be made, but its rename over a listed file fails, as its write would.
 */
async function readOnlyUnderStrace(paths: string[]): Promise<() => Promise<void>> {
  const args = ["-f", "-p", String(Deno.pid), "-o", "/dev/null", "-e", `trace=${WRITES}`];
  args.push("-e", `inject=${WRITES}:error=EROFS`, ...paths.flatMap((path) => ["-P", path]));
  const tracer = new Deno.Command("strace", { args, stdin: "null", stdout: "null", stderr: "piped" }).spawn();
  const messages = tracer.stderr.pipeThrough(new TextDecoderStream()).getReader();
  let said = "";
  while (!/attached/.test(said)) {
    const { value, done } = await messages.read();
    if (done) throw new Error(`strace did not attach to this process (pid ${Deno.pid}): ${said}`);
    said += value;
  }
  const drained = (async () => {
    while (!(await messages.read()).done);
  })();
  return async () => {
    // SIGINT: strace detaches from every thread and exits; the process goes on untraced.
    tracer.kill("SIGINT");
    await tracer.status;
    await drained;
  };
}

Deno.test({
  name: "the data dir read-only mid-run under strace: answers go on, degraded, and writing resumes without a restart",
  ignore: strace.ignore,
  fn: async () => {
    strace.assertAvailable();
    const fake = FakeLlm.start();
    const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-read-only-strace-" });
    const data = join(dir, "data");
    const journal = join(data, "memory", "candidates.jsonl");
    let daemon: Daemon | undefined;
    let sim: OneBotSim | undefined;
    let writable: (() => Promise<void>) | undefined;
    try {
      // No heartbeat within the test: the test runs the context's save and the store re-check itself (below).
      daemon = await startOwnerDaemon({ dir, llm: fake, daemon: { heartbeat_interval: "1h" } });
      sim = await connectOwner(daemon);
      await chat(daemon, fake, "The spare key is under the blue flowerpot");
      await waitFor(
        async () => (await Deno.readTextFile(journal)).includes("blue flowerpot"),
        "the first chat journaled",
      );

      const existing = await filesUnder(data);
      const next = existing.flatMap((path) =>
        path.endsWith(".db") ? [`${path}-journal`, `${path}-wal`, `${path}-shm`] : [`${path}.tmp`]
      );
      writable = await readOnlyUnderStrace([data, ...existing, ...next]);
      // While it is read-only the test reads nothing under the data dir either (its openat fails there too).
      await chat(daemon, fake, "Message 1 while the disk is read-only: the weather is fine today");
      await chatOnQq(sim, fake, "What is for dinner?");
      await chat(daemon, fake, "Message 2 while the disk is read-only: the cat was fed");
      const stores = await degraded(daemon);
      assert.ok(stores.some((entry) => entry.store === "memory journal"), JSON.stringify(stores));
      for (const entry of stores) {
        assert.equal(entry.kind, "read_only", JSON.stringify(entry));
        assert.match(entry.error, /Read-only file system|readonly database/);
        assert.ok(entry.path.startsWith(data), entry.path);
      }
      const toOwner = () => sentToOwner(sim!).filter((text) => text.includes("cannot write to its disk"));
      await waitFor(() => toOwner().length > 0, "the owner was told");
      assert.match(toOwner()[0]!, /read-only/);

      // "remount rw": strace lets go. The next turn is remembered; the store re-check (each heartbeat) clears what
      // does not write by itself.
      await writable();
      writable = undefined;
      await chat(daemon, fake, "After the remount: we eat dumplings tonight");
      await waitFor(
        async () => (await Deno.readTextFile(journal)).includes("we eat dumplings tonight"),
        "the next turn journaled",
      );
      await daemon.services.job("disk.heartbeat")!.runOnce();
      assert.deepEqual(await degraded(daemon), []);
      await chatOnQq(sim, fake, "Remember: the plumber comes on Friday");
      await waitFor(
        async () => (await Deno.readTextFile(journal)).includes("the plumber comes on Friday"),
        "the QQ turn journaled",
      );
      assert.equal(toOwner().length, 1, toOwner().join("\n"));
      await sim.close();
      sim = undefined;
      await daemon.stop();
      daemon = undefined;

      const lines = await assertWhole(data);
      assert.match(lines.join("\n"), /blue flowerpot/);
    } finally {
      await teardown(
        () => writable?.(),
        () => sim?.close(),
        () => daemon?.stop(),
        () => fake.close(),
        () => Deno.remove(dir, { recursive: true }),
      );
    }
  },
});
