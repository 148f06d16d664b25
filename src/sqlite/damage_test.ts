import assert from "node:assert/strict";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { checkIntact, DamagedDatabase, databaseDamage } from "./damage.ts";

function filled(path: string): void {
  const db = new DatabaseSync(path);
  db.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)");
  const insert = db.prepare("INSERT INTO t (v) VALUES (?)");
  for (let i = 0; i < 500; i++) insert.run("x".repeat(200) + i);
  db.close();
}

Deno.test("checkIntact passes a whole or missing file and names what is wrong with a damaged one", async () => {
  const dir = await Deno.makeTempDir({ dir: "/tmp" });
  const path = join(dir, "a.db");
  checkIntact(path);
  filled(path);
  checkIntact(path);
  const bytes = await Deno.readFile(path);
  bytes.fill(0x41, 4096 * 3, 4096 * 4);
  await Deno.writeFile(path, bytes);
  const error = (() => {
    try {
      checkIntact(path);
    } catch (error) {
      return error;
    }
  })();
  assert.match(databaseDamage(error) ?? "", /database disk image is malformed/);
  await Deno.writeTextFile(path, "not a database at all, just text\n".repeat(200));
  assert.throws(() => checkIntact(path), (error: Error) => databaseDamage(error) === "file is not a database");
  await Deno.remove(dir, { recursive: true });
});

Deno.test("databaseDamage tells damage from other SQLite failures", () => {
  assert.equal(
    databaseDamage(new DamagedDatabase("/d/x.db", "database disk image is malformed (page 3)")),
    "database disk image is malformed (page 3)",
  );
  assert.equal(databaseDamage(new Error("database is locked")), undefined);
  assert.equal(databaseDamage("file is not a database"), undefined, "not an Error");
});
