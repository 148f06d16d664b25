import assert from "node:assert/strict";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { getLogger } from "@logtape/logtape";
import { systemClock } from "../clock.ts";
import { readMeta } from "./database.ts";
import { openMemory } from "./memory.ts";

Deno.test("close on a read-only disk: every store is closed anyway, the error thrown, memory.db not marked clean", async () => {
  const dir = await Deno.makeTempDir();
  const memory = await openMemory({ dir, clock: systemClock, logger: getLogger(["test"]) });
  const sync = Deno.FsFile.prototype.syncDataSync;
  // ext4 after its journal aborted fails the indexes' last sync: before the fix the first failure left the other
  // index logs and memory.db open, so the disk could not be unmounted for e2fsck (the resource sanitizer fails this
  // test on a file left open).
  Deno.FsFile.prototype.syncDataSync = () => {
    throw Object.assign(new Error("Read-only file system (os error 30)"), { code: "EROFS" });
  };
  try {
    await assert.rejects(() => memory.close(), /Read-only file system/);
  } finally {
    Deno.FsFile.prototype.syncDataSync = sync;
  }
  const db = new DatabaseSync(join(dir, "memory.db"));
  try {
    // The indexes did not sync: the next start checks them against memory.db instead of trusting them.
    assert.equal(readMeta(db, "closed_cleanly"), "0");
  } finally {
    db.close();
  }
  await Deno.remove(dir, { recursive: true });
});
