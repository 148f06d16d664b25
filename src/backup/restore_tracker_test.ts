/**
 * Restore checks the tracker's manifest inside the archive (issue 18 point 25) with the tracker's own check, in the
 * validation phase: a real commit's manifest edited to hold a `..` entry makes the whole restore refused, naming the
 * entry, before anything moves; an unedited one restores and the tracker reads it.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { stringify } from "yaml";
import type { LoadedConfig } from "../config/load.ts";
import { trackerFor } from "../tracker/tracker_for.ts";
import { archiveOf, loadHome, treeFiles } from "../../tests/support/backup_home.ts";
import { ArchiveError, restoreBackup } from "./restore.ts";

async function home(): Promise<{ dir: string; loaded: LoadedConfig }> {
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-restore-tracker-" });
  const configPath = join(dir, "homed.yaml");
  await Deno.writeTextFile(configPath, stringify({ daemon: { listen_addr: "127.0.0.1:0" } }));
  await Deno.writeTextFile(join(dir, "personal.md"), "I am the butler.\n");
  await Deno.mkdir(join(dir, "knowledge", "tea"), { recursive: true });
  await Deno.writeTextFile(join(dir, "knowledge", "tea", "content.md"), "# Tea\nGreen, 80 °C.\n");
  await Deno.mkdir(join(dir, "plugins"));
  await Deno.mkdir(join(dir, "data"));
  return { dir, loaded: await loadHome(dir) };
}

async function restore(loaded: LoadedConfig, bytes: Uint8Array) {
  return await restoreBackup({ loaded, input: new Blob([bytes as BlobPart]).stream(), label: "x", now: () => 1 });
}

Deno.test("point 25: restore refuses an archive whose tracker manifest has a '..' entry, naming it; nothing moves", async () => {
  const { dir, loaded } = await home();
  try {
    assert.equal(await trackerFor(loaded, () => 0).commit(), 3);
    const path = join(dir, "data", "tracker", "manifest.json");
    const manifest = JSON.parse(await Deno.readTextFile(path));
    manifest.files["knowledge/../../../etc/cron.d/evil"] = manifest.files["knowledge/tea/content.md"];
    await Deno.writeTextFile(path, JSON.stringify(manifest, null, 1));
    const edited = (await archiveOf(loaded)).bytes;
    manifest.files["/etc/passwd"] = { deleted: true };
    manifest.files["knowledge/x"] = { link: 5 };
    await Deno.writeTextFile(path, JSON.stringify(manifest, null, 1));
    const threeBad = (await archiveOf(loaded)).bytes;
    await Deno.writeTextFile(join(dir, "knowledge", "tea", "content.md"), "changed since the backup\n");
    const before = await treeFiles(dir);

    await assert.rejects(restore(loaded, edited), (error) => {
      assert.ok(error instanceof ArchiveError);
      assert.equal(
        error.message,
        'x: data/tracker/manifest.json: entry "knowledge/../../../etc/cron.d/evil" has a ".." segment in its path, ' +
          "which homed never writes; nothing was restored",
      );
      return true;
    });
    await assert.rejects(restore(loaded, threeBad), {
      message: 'x: data/tracker/manifest.json: entry "knowledge/../../../etc/cron.d/evil" has a ".." segment in its ' +
        "path, which homed never writes (and 2 more bad entries); nothing was restored",
    });
    assert.deepEqual(await treeFiles(dir), before, "nothing moved, no staging left");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("point 25: an archive with a sound tracker manifest restores, and the tracker reads it without warnings", async () => {
  const { dir, loaded } = await home();
  try {
    assert.equal(await trackerFor(loaded, () => 0).commit(), 3);
    const bytes = (await archiveOf(loaded)).bytes;
    await Deno.writeTextFile(join(dir, "knowledge", "tea", "content.md"), "changed since the backup\n");
    await Deno.remove(join(dir, "data", "tracker"), { recursive: true });
    await restore(loaded, bytes);
    const status = await trackerFor(loaded, () => 0).status();
    assert.deepEqual(status.changes, []);
    assert.deepEqual(status.warnings, []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
