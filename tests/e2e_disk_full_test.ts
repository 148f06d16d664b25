/**
 * Issue 38.2, "a full disk never breaks a turn": a real homed (in this process, with the fake LLM and the owner on a
 * simulated QQ) keeps its data dir on a small tmpfs — a real disk that fills up — and the disk is filled to the last
 * byte while people chat over HTTP. Every message is still answered; `/api/status` names the stores that cannot
 * write; the owner is told once; once the filler is deleted, what is said is remembered again without a restart and
 * no store is degraded; every database passes `PRAGMA integrity_check`, the journal has no torn line, and no
 * temporary or partial file is left.
 *
 * Mounting needs root: outside CI the test is ignored without it; under `CI=true` it runs and fails without it.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { FakeClock } from "./support/fake_clock.ts";
import { StoreHealth } from "../src/fs/store_health.ts";
import { MediaCache } from "../src/media/media_cache.ts";
import type { Daemon } from "../src/daemon.ts";
import { FakeLlm } from "./support/fake_llm.ts";
import type { OneBotSim } from "./support/onebot_sim.ts";
import { connectOwner, sentToOwner, startOwnerDaemon } from "./support/owner_daemon.ts";
import { assertWhole, chat, degraded } from "./support/storage_checks.ts";
import { teardown } from "./support/teardown.ts";
import { waitFor } from "./support/wait.ts";
import { fillDisk, run, tmpfs } from "./support/tmpfs.ts";
import { checkRunning } from "../src/cli/doctor_running.ts";
import { parseConfig } from "../src/config/load.ts";

/** A config that points `homed doctor` at `daemon` (its real port; no token, as the daemon has none). */
const doctorConfig = (daemon: Daemon) =>
  parseConfig({
    text: `daemon: { listen_addr: "127.0.0.1:${new URL(daemon.url).port}" }`,
    location: { path: "/etc/homed/homed.yaml", origin: "--config" },
    readEnv: () => undefined,
    cwd: "/",
  });

Deno.test({
  name: "a full disk: every message is answered, the stores are degraded, the owner told once, writing resumes",
  ignore: tmpfs.ignore,
  fn: async () => {
    tmpfs.assertAvailable();
    const fake = FakeLlm.start();
    const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-disk-full-" });
    const data = join(dir, "data");
    const journal = join(data, "memory", "candidates.jsonl");
    const filler = join(data, "filler");
    await Deno.mkdir(data);
    await run("mount", ["-t", "tmpfs", "-o", "size=16m", "tmpfs", data]);
    let daemon: Daemon | undefined;
    let sim: OneBotSim | undefined;
    try {
      // A homed on `dir/data`; the heartbeat (the context's save) every second.
      daemon = await startOwnerDaemon({ dir, llm: fake, daemon: { heartbeat_interval: "1s" } });
      sim = await connectOwner(daemon);
      await chat(daemon, fake, "The spare key is under the blue flowerpot");
      await waitFor(
        async () => (await Deno.readTextFile(journal)).includes("blue flowerpot"),
        "the first chat journaled",
      );

      assert.ok(await fillDisk(filler) > 0);
      // Long messages, so each one needs new pages of the disk: a journal line no longer fits.
      const long = (n: number) => `Message ${n} while the disk is full: ${"the weather is fine today. ".repeat(200)}`;
      let n = 0;
      await waitFor(async () => {
        await chat(daemon!, fake, long(++n));
        return (await degraded(daemon!)).some((entry) => entry.store === "memory journal");
      }, "the memory journal degraded");
      // The heartbeat saves the context: it cannot either.
      await waitFor(async () => {
        await chat(daemon!, fake, long(++n));
        return (await degraded(daemon!)).some((entry) => entry.store === "context.json");
      }, "context.json degraded");
      for (const entry of await degraded(daemon)) {
        assert.equal(entry.kind, "disk_full", JSON.stringify(entry));
        assert.match(entry.error, /No space left on device|database or disk is full/);
        assert.ok(entry.path.startsWith(data), entry.path);
      }
      const toOwner = () => sentToOwner(sim!).filter((text) => text.includes("cannot write to its disk"));
      await waitFor(() => toOwner().length > 0, "the owner was told");
      // `homed doctor` beside it says the same, from the daemon's own status.
      const doctorSees = async () =>
        (await checkRunning(doctorConfig(daemon!))).find((check) => check.name === "stores");
      const seen = await doctorSees();
      assert.equal(seen?.ok, false);
      assert.match(
        seen?.detail ?? "",
        /memory journal cannot write .* \(the disk is full: delete files that are not needed/,
      );

      await Deno.remove(filler);
      await waitFor(async () => {
        await chat(daemon!, fake, "After the disk was freed: we eat dumplings tonight");
        return (await Deno.readTextFile(journal)).includes("we eat dumplings tonight") &&
          (await degraded(daemon!)).length === 0;
      }, "writing resumed and no store is degraded");
      assert.deepEqual(await doctorSees(), {
        ok: true,
        name: "stores",
        detail: "every store of the running homed writes",
      });
      assert.equal(toOwner().length, 1, toOwner().join("\n"));
      assert.match(toOwner()[0]!, /the disk is full/);

      await daemon.stop();
      daemon = undefined;
      assert.match((await assertWhole(data)).join("\n"), /blue flowerpot/);
    } finally {
      await teardown(
        () => sim?.close(),
        () => daemon?.stop(),
        () => fake.close(),
        () => run("umount", [data]),
        () => Deno.remove(dir, { recursive: true }),
      );
    }
  },
});

Deno.test({
  name: "the media cache on a full disk gives back its oldest files first, then refuses; read-only is refused too",
  ignore: tmpfs.ignore,
  fn: async () => {
    tmpfs.assertAvailable();
    const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-media-full-" });
    const media = join(dir, "media");
    await Deno.mkdir(media);
    await run("mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", media]);
    try {
      const clock = new FakeClock(Date.parse("2026-12-04T02:00:00Z"));
      const health = new StoreHealth(() => clock.now());
      const cache = await MediaCache.open({ dir: media, maxBytes: 100 * 1024 * 1024, clock, health });
      const bytes = (fill: number) => new Uint8Array(200 * 1024).fill(fill);
      const oldest = await cache.put(bytes(1), "application/octet-stream");
      clock.advance(1000);
      const older = await cache.put(bytes(2), "application/octet-stream");
      clock.advance(1000);
      await fillDisk(join(media, "filler"));
      const newest = await cache.put(bytes(3), "application/octet-stream");
      assert.equal(await cache.has(oldest.id), false, "the oldest file gave its space back");
      assert.equal(await cache.has(newest.id), true);
      assert.equal(health.degraded.length, 0);
      // Nothing older left to give back once those go: refused, naming the disk.
      await assert.rejects(
        () => cache.put(new Uint8Array(900 * 1024).fill(4), "application/octet-stream"),
        (error: Error) => {
          assert.match(error.message, /media cache cannot keep a file/);
          assert.ok(error.message.includes(media), error.message);
          assert.match(error.message, /disk is full/);
          return true;
        },
      );
      assert.equal(await cache.has(older.id), false);
      assert.deepEqual(health.degraded.map((entry) => [entry.store, entry.kind]), [["media cache", "disk_full"]]);
      await Deno.remove(join(media, "filler"));
      await cache.put(bytes(5), "application/octet-stream");
      assert.equal(health.degraded.length, 0);

      await run("mount", ["-o", "remount,ro", media]);
      await assert.rejects(() => cache.put(bytes(6), "application/octet-stream"), /read-only/);
      assert.deepEqual(health.degraded.map((entry) => [entry.store, entry.kind]), [["media cache", "read_only"]]);
      await run("mount", ["-o", "remount,rw", media]);
      await cache.put(bytes(6), "application/octet-stream");
      assert.equal(health.degraded.length, 0);
      const left = [...Deno.readDirSync(media)].map((entry) => entry.name).filter((name) => name.endsWith(".tmp"));
      assert.deepEqual(left, []);
    } finally {
      await teardown(
        () => run("umount", [media]),
        () => Deno.remove(dir, { recursive: true }),
      );
    }
  },
});
