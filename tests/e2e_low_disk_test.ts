/**
 * Issue 38.6, the low-disk warning before the failure, on a real file system: the data dir is on a small tmpfs of its
 * own, a real homed (in this process, with the fake LLM and the owner on a simulated QQ) reads its free space on every
 * heartbeat, and when a file fills the disk below `daemon.low_disk`, `/api/status` says `storage.low` with the free
 * and total bytes statfs gives, and the owner is told once — not on every heartbeat — and it is not low again once the
 * room is back. Mounting needs root (CAP_SYS_ADMIN): under `CI=true` (`.ci/run` is root) the test always runs and
 * fails when it cannot mount; elsewhere it is ignored with the reason printed.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import type { Daemon } from "../src/daemon.ts";
import { FakeLlm } from "./support/fake_llm.ts";
import type { OneBotSim } from "./support/onebot_sim.ts";
import { outsideNeed } from "./support/outside_tool.ts";
import { connectOwner, OWNER, sentToOwner, startOwnerDaemon } from "./support/owner_daemon.ts";
import { teardown } from "./support/teardown.ts";
import { waitFor } from "./support/wait.ts";

const MB = 1024 ** 2;
const DISK_BYTES = 16 * MB;
const LOW_BELOW = 8 * MB;

async function sh(program: string, args: string[]): Promise<{ ok: boolean; said: string }> {
  const out = await new Deno.Command(program, { args, stdin: "null", stdout: "piped", stderr: "piped" }).output();
  return { ok: out.success, said: new TextDecoder().decode(out.stderr) + new TextDecoder().decode(out.stdout) };
}

/** Mounts a tmpfs of `bytes` on `dir`; why it could not, or undefined. */
async function mountTmpfs(dir: string, bytes: number): Promise<string | undefined> {
  try {
    const mount = await sh("mount", ["-t", "tmpfs", "-o", `size=${bytes}`, "tmpfs", dir]);
    return mount.ok ? undefined : `cannot mount a tmpfs here (needs root and CAP_SYS_ADMIN): ${mount.said.trim()}`;
  } catch (error) {
    return `mount cannot be run (${(error as Error).message})`;
  }
}

/** A tmpfs mount of its own (`.ci/run` runs as root and can mount): outside CI the test is ignored where it cannot. */
const tmpfs = await outsideNeed("a tmpfs mount (root)", async () => {
  // Mounting is the probe (Deno.uid() would need another --allow-sys right): it fails when not root.
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-tmpfs-probe-" });
  try {
    const why = await mountTmpfs(dir, MB);
    if (why === undefined) await sh("umount", [dir]);
    return why;
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

async function storage(daemon: Daemon): Promise<Record<string, unknown>> {
  return (await (await fetch(`${daemon.url}/api/status`)).json()).storage;
}

Deno.test({
  name:
    "a data dir's disk filled below daemon.low_disk: /api/status says low, the owner is told once, room again is not low",
  ignore: tmpfs.ignore,
  fn: async () => {
    tmpfs.assertAvailable();
    const fake = FakeLlm.start();
    const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-low-disk-" });
    const disk = join(dir, "disk");
    await Deno.mkdir(disk);
    const why = await mountTmpfs(disk, DISK_BYTES);
    assert.equal(why, undefined, why);
    let daemon: Daemon | undefined;
    let sim: OneBotSim | undefined;
    try {
      daemon = await startOwnerDaemon({
        dir,
        llm: fake,
        dataDir: join(disk, "data"),
        daemon: { heartbeat_interval: "1s", low_disk: "8MB" },
        sections: { backup: { schedule: "" } },
      });
      sim = await connectOwner(daemon);
      const before = await storage(daemon);
      assert.equal(before.total_bytes, DISK_BYTES, JSON.stringify(before));
      assert.equal(before.low, false, JSON.stringify(before));
      assert.equal(before.low_below, LOW_BELOW);
      assert.ok((before.free_bytes as number) > LOW_BELOW, JSON.stringify(before));

      // A file fills the disk to 3 MB free (a video copied into the wrong folder, say).
      const filler = join(disk, "filler.bin");
      await Deno.writeFile(filler, new Uint8Array((before.free_bytes as number) - 3 * MB));
      await waitFor(async () => (await storage(daemon!)).low === true, "storage.low after a heartbeat");
      const low = await storage(daemon);
      assert.ok((low.free_bytes as number) < LOW_BELOW, JSON.stringify(low));
      assert.equal(low.total_bytes, DISK_BYTES);
      const toOwner = () => sentToOwner(sim!).filter((sent) => sent.includes("nearly full") || sent.includes("快满了"));
      await waitFor(() => toOwner().length > 0, "the owner was told");
      assert.match(toOwner()[0]!, new RegExp(`${OWNER}`));
      assert.match(toOwner()[0]!, /MB free of 16 MB|共 16 MB/);
      // Three more heartbeats, still low: told once only (at most once a day).
      const checked = low.checked_at;
      await waitFor(async () => (await storage(daemon!)).checked_at !== checked, "another heartbeat");
      await new Promise((resolve) => setTimeout(resolve, 2_500));
      assert.equal(toOwner().length, 1, toOwner().join("\n"));

      await Deno.remove(filler);
      await waitFor(async () => (await storage(daemon!)).low === false, "not low once the room is back");
    } finally {
      await teardown(
        () => sim?.close(),
        () => daemon?.stop(),
        () => fake.close(),
        async () => {
          const unmount = await sh("umount", [disk]);
          if (!unmount.ok) throw new Error(`umount ${disk}: ${unmount.said}`);
        },
        () => Deno.remove(dir, { recursive: true }),
      );
    }
  },
});
