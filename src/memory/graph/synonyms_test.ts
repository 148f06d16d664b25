import assert from "node:assert/strict";
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
  const index = new SynonymIndex();
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
});
