import assert from "node:assert/strict";
import { openMemoryDb } from "../database.ts";
import { normalizeName, SynonymIndex } from "./synonyms.ts";

Deno.test("names normalise to one key for format variants, and only for those", () => {
  assert.equal(normalizeName("客厅的灯"), normalizeName("客厅灯"));
  assert.notEqual(normalizeName("客厅灯"), normalizeName("卧室灯"));
  assert.equal(normalizeName("the Living-Room Lamp"), "livingroomlamp");
  assert.equal(normalizeName("Mom's car"), normalizeName("moms car"));
  assert.notEqual(normalizeName("Mr. Wang"), normalizeName("Mrs. Wang"));
  assert.equal(normalizeName("电视机"), normalizeName("电视"));
  assert.notEqual(normalizeName("电视柜"), normalizeName("电视"));
  assert.equal(normalizeName("ＴＶ"), "tv");
});

Deno.test("the index merges within a type, catches long typos through LSH, and never merges across types", () => {
  const db = openMemoryDb(":memory:");
  const index = new SynonymIndex(db);
  index.add(1, "客厅灯", "device");
  index.add(2, "thermostat", "device");
  index.add(3, "Lily", "person");
  assert.equal(index.probe("客厅的灯", "device"), 1);
  assert.equal(index.probe("卧室灯", "device"), undefined);
  assert.equal(index.probe("thermsotat", "device"), 2, "two neighbouring letters swapped in a long name");
  assert.equal(index.probe("thermostatt", "device"), 2, "a doubled letter");
  assert.equal(index.probe("thermostst", "device"), undefined, "a substituted letter may be another word");
  index.add(4, "grandpa's medicine", "thing");
  index.add(5, "living room lamp 101", "device");
  assert.equal(index.probe("grandma's medicine", "thing"), undefined);
  assert.equal(index.probe("living room lamp 1001", "device"), undefined, "digits are never a typo");
  assert.equal(index.probe("living room lamp 110", "device"), undefined);
  assert.equal(index.probe("thermostat", "thing"), undefined, "blocked by type");
  assert.equal(index.probe("Lucy", "person"), undefined, "short names need an exact key");
  assert.equal(index.probe("lily", "person"), 3);
  db.close();
});

Deno.test("the index is rows of the database: a key refiled to another entity, names removed, a rollback undoes add", () => {
  const db = openMemoryDb(":memory:");
  const index = new SynonymIndex(db);
  const rows = () =>
    db.prepare(
      `SELECT (SELECT COUNT(*) FROM synonym_keys) AS keys, (SELECT COUNT(*) FROM synonym_buckets) AS buckets`,
    ).get() as { keys: number; buckets: number };
  index.add(1, "thermostat", "device");
  index.add(1, "客厅灯", "device");
  assert.deepEqual(
    { ...rows() },
    { keys: 2, buckets: 8 },
    "eight buckets for a long Latin key, none for a Chinese one",
  );
  index.add(2, "Thermostat", "device");
  assert.equal(index.probe("thermostat", "device"), 2, "the last entity filed with a key owns it");
  assert.equal(index.probe("thermsotat", "device"), 2, "and is the one a typo of it merges with");
  index.remove(1, ["thermostat", "客厅灯"], "device");
  assert.equal(index.probe("客厅的灯", "device"), undefined);
  assert.equal(index.probe("thermsotat", "device"), 2, "entity 2's key, refiled to it, is not entity 1's to remove");
  index.remove(2, ["Thermostat"], "device");
  assert.equal(index.probe("thermsotat", "device"), undefined);
  assert.deepEqual({ ...rows() }, { keys: 0, buckets: 0 });
  db.exec("BEGIN");
  index.add(3, "living room lamp", "device");
  assert.equal(index.probe("livign room lamp", "device"), 3);
  db.exec("ROLLBACK");
  assert.equal(index.probe("livign room lamp", "device"), undefined);
  assert.deepEqual({ ...rows() }, { keys: 0, buckets: 0 });
  db.close();
});
