import assert from "node:assert/strict";
import { join } from "node:path";
import { stringify } from "yaml";
import { getLogger } from "@logtape/logtape";
import { parseConfig } from "../config/load.ts";
import { FakeClock } from "../../tests/support/fake_clock.ts";
import { readBackupList, takeBackup } from "./auto_backup.ts";
import { BackupService } from "./backup_service.ts";
import { StoreHealth } from "../fs/store_health.ts";
import { fillDisk, run, tmpfs } from "../../tests/support/tmpfs.ts";

/** A data dir with a little in it and a config whose backups go to `usb/`. */
async function home() {
  const dir = await Deno.makeTempDir({ prefix: "homed-backup-service-" });
  await Deno.mkdir(join(dir, "data", "memory"), { recursive: true });
  // Enough to take several writes of the archive: the stop lands between two of them.
  const noise = crypto.getRandomValues(new Uint8Array(60_000));
  for (let i = 0; i < 40; i++) await Deno.writeFile(join(dir, "data", "memory", `note-${i}.bin`), noise);
  const text = stringify({
    daemon: { data_dir: "data", timezone: "Asia/Shanghai" },
    backup: { dir: join(dir, "usb") },
    paths: { knowledge: "knowledge", plugins: "plugins", personal: "personal.md" },
  });
  const loaded = parseConfig({
    text,
    location: { path: join(dir, "homed.yaml"), origin: "--config" },
    readEnv: () => undefined,
    cwd: dir,
  });
  return { dir, loaded };
}

async function namesIn(dir: string): Promise<string[]> {
  const names: string[] = [];
  for await (const entry of Deno.readDir(dir)) names.push(entry.name);
  return names.sort();
}

Deno.test("a backup stopped by its signal rejects with the reason and leaves no partial archive and no list", async () => {
  const { dir, loaded } = await home();
  try {
    const abort = new AbortController();
    abort.abort(new Error("homed is stopping"));
    await assert.rejects(
      () => takeBackup({ loaded, now: Date.now, version: "test", timezone: "Asia/Shanghai", signal: abort.signal }),
      /homed is stopping/,
    );
    assert.deepEqual(await namesIn(join(dir, "usb")), []);
    assert.deepEqual(await readBackupList(join(dir, "usb")), []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("BackupService.stop ends a backup in progress: the run fails with the reason, no partial file, the next one still runs", async () => {
  const { dir, loaded } = await home();
  try {
    const service = new BackupService({ loaded, clock: new FakeClock(0), logger: getLogger("test"), version: "test" });
    const running = service.runNow();
    await service.stop();
    assert.equal(await running, undefined);
    assert.match(String(service.backups().last_error), /homed is stopping: the backup in progress was stopped/);
    assert.deepEqual((await namesIn(join(dir, "usb"))).filter((name) => name.endsWith(".partial")), []);

    // A backup not stopped completes and verifies (the gate passes every byte on).
    const other = new BackupService({ loaded, clock: new FakeClock(0), logger: getLogger("test"), version: "test" });
    const run = await other.runNow();
    await other.stop();
    assert.ok(run?.record.verified, JSON.stringify(other.backups()));
    assert.equal(run.record.files, 40);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test({
  name: "a full backup.dir: the run fails soft, `backups` is degraded naming the folder; the next backup clears it",
  ignore: tmpfs.ignore,
  fn: async () => {
    tmpfs.assertAvailable();
    const { dir, loaded } = await home();
    const usb = join(dir, "usb");
    await Deno.mkdir(usb);
    await run("mount", ["-t", "tmpfs", "-o", "size=8m", "tmpfs", usb]);
    try {
      const health = new StoreHealth();
      const service = new BackupService({
        loaded,
        clock: new FakeClock(0),
        logger: getLogger("test"),
        version: "test",
        health,
      });
      assert.ok(await fillDisk(join(usb, "filler")) > 0);
      assert.equal(await service.runNow(), undefined);
      assert.match(String(service.backups().last_error), /No space left|ENOSPC|os error 28/i);
      assert.deepEqual(health.degraded.map(({ store, path, kind }) => ({ store, path, kind })), [
        { store: "backups", path: join(usb, "homed-backups.json"), kind: "disk_full" },
      ]);
      assert.deepEqual((await namesIn(usb)).filter((name) => name.endsWith(".partial")), [], "no partial archive");

      await Deno.remove(join(usb, "filler"));
      const run2 = await service.runNow();
      await service.stop();
      assert.ok(run2?.record.verified, String(service.backups().last_error));
      assert.deepEqual(health.degraded, []);
    } finally {
      await run("umount", [usb]);
      await Deno.remove(dir, { recursive: true });
    }
  },
});
