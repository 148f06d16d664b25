import assert from "node:assert/strict";
import { join } from "node:path";
import { checkpointMemoryDb, openMemoryDb, readMeta } from "./database.ts";
import { DatabaseSync } from "node:sqlite";

const walBytes = (path: string) => Deno.statSync(`${path}-wal`).size;

Deno.test("memory.db's commits leave the log to checkpointMemoryDb, which folds it in; the log starts over, cut back to 4 MB", async () => {
  const dir = await Deno.makeTempDir();
  const path = join(dir, "memory.db");
  const db = openMemoryDb(path);
  try {
    const value = "x".repeat(4_000);
    const insert = db.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)");
    assert.equal((db.prepare("PRAGMA wal_autocheckpoint").get() as Record<string, number>).wal_autocheckpoint, 10_000);
    // 1,500 commits of a page each: past the 1,000 pages at which SQLite checkpoints by default.
    for (let i = 0; i < 1_500; i++) insert.run(`k${i}`, value);
    const grown = walBytes(path);
    assert.ok(grown > 1_400 * 4_096, `the log holds every commit (${grown} bytes)`);

    const copied = checkpointMemoryDb(db);
    assert.ok(copied >= 1_500, `pages copied: ${copied}`);
    // Another connection sees the rows in the file itself.
    const reader = new DatabaseSync(path, { readOnly: true });
    assert.equal(
      (reader.prepare("SELECT count(*) AS n FROM meta WHERE key LIKE 'k%'").get() as { n: number }).n,
      1_500,
    );
    reader.close();

    for (let i = 0; i < 100; i++) insert.run(`later${i}`, value);
    assert.equal(walBytes(path), 4 * 1024 * 1024, "the log was cut back to 4 MB and written again from its beginning");
    assert.equal(readMeta(db, "later99"), value);
  } finally {
    db.close();
    await Deno.remove(dir, { recursive: true });
  }
});
