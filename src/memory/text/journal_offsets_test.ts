import assert from "node:assert/strict";
import { join } from "node:path";
import { getLogger } from "@logtape/logtape";
import { DamagedFiles } from "../../fs/set_aside.ts";
import { INDEX_SUFFIX } from "./journal_index.ts";
import { type MemoryEntry, TextMemory } from "./text_memory.ts";

const logger = getLogger(["test"]);

/** Entry `n`: both halves of exchange `x<n / 2>`, with texts of varying length. */
const entry = (n: number): MemoryEntry => ({
  eventId: `x${Math.floor(n / 2)}`,
  time: n,
  role: n % 2 ? "assistant" : "user",
  source: "qq:private:20002000",
  sender: n % 2 ? "butler" : "20002000",
  text: `第${n}句 ${"词 words ".repeat(n % 13)}`,
});

/** What a read of the whole journal answers: the reference `lookup` must match. */
async function byScan(journal: TextMemory, ids: ReadonlySet<string>): Promise<Map<string, MemoryEntry[]>> {
  const found = new Map<string, MemoryEntry[]>();
  for (const e of await journal.entries()) {
    if (ids.has(e.eventId)) found.set(e.eventId, [...(found.get(e.eventId) ?? []), e]);
  }
  return found;
}

async function journalOf(count: number): Promise<{ dir: string; path: string; journal: TextMemory }> {
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-offsets-" });
  const path = join(dir, "candidates.jsonl");
  const journal = await TextMemory.open(path, logger);
  for (let n = 0; n < count; n++) await journal.append(entry(n));
  return { dir, path, journal };
}

/** Looks up a spread of ids (some missing) and checks the answer against a whole read, order included. */
async function agrees(journal: TextMemory, ids: string[]): Promise<Map<string, MemoryEntry[]>> {
  const asked = new Set(ids);
  const found = await journal.lookup(asked);
  assert.deepEqual([...found], [...await byScan(journal, asked)]);
  return found;
}

Deno.test("the offsets are saved at sync, read at the next open's first lookup, and kept up by appends", async () => {
  const { dir, path, journal } = await journalOf(3_000);
  await agrees(journal, ["x0", "x777", "x1499", "missing"]);
  await journal.sync();
  const saved = (await Deno.stat(`${path}${INDEX_SUFFIX}`)).size;
  assert.equal(saved, 24 + 16 * 3_000 + 4, "one batch of 3000 records");
  await journal.append(entry(3_000));
  await journal.append(entry(3_001));
  assert.equal((await journal.lookup(new Set(["x1500"]))).get("x1500")!.length, 2, "appends found after loading");
  await journal.close();
  assert.equal((await Deno.stat(`${path}${INDEX_SUFFIX}`)).size, saved + 24 + 16 * 2 + 4, "a second batch appended");

  const reopened = await TextMemory.open(path, logger);
  await Deno.writeTextFile(path, `${JSON.stringify(entry(3_002))}\n`, { append: true }); // after the marks
  const again = await TextMemory.open(path, logger);
  await reopened.close();
  const found = await agrees(again, ["x3", "x1500", "x1501", "x1200"]);
  assert.deepEqual(found.get("x3")!.map((e) => e.role), ["user", "assistant"]);
  assert.equal(found.get("x1501")!.length, 1, "the line past the offsets was indexed from the journal");
  await again.close();
  await Deno.remove(dir, { recursive: true });
});

Deno.test("offsets of another journal, or damaged, are never trusted: lookup answers as a whole read", async () => {
  const { dir, path, journal } = await journalOf(400);
  await journal.lookup(new Set(["x1"]));
  await journal.close();
  const offsets = await Deno.readFile(`${path}${INDEX_SUFFIX}`);
  // Another journal where the old one was: the same ids, lines of other lengths.
  const other = Array.from({ length: 400 }, (_, n) => `${JSON.stringify({ ...entry(n), text: `${n}` })}\n`);
  await Deno.writeTextFile(path, other.join(""));
  let reopened = await TextMemory.open(path, logger);
  await agrees(reopened, ["x0", "x10", "x150", "x199"]);
  await reopened.close();
  // The same journal with the offsets' last batch torn, then with a flipped bit in a record.
  await Deno.writeTextFile(path, Array.from({ length: 400 }, (_, n) => `${JSON.stringify(entry(n))}\n`).join(""));
  await Deno.writeFile(`${path}${INDEX_SUFFIX}`, offsets.subarray(0, offsets.length - 7));
  reopened = await TextMemory.open(path, logger);
  await agrees(reopened, ["x5", "x199"]);
  await reopened.close();
  assert.deepEqual(await Deno.readFile(`${path}${INDEX_SUFFIX}`), offsets, "rewritten whole at close");
  const flipped = offsets.slice();
  flipped[24 + 16 * 100 + 8]! ^= 0x40; // record 100's offset
  await Deno.writeFile(`${path}${INDEX_SUFFIX}`, flipped);
  reopened = await TextMemory.open(path, logger);
  await agrees(reopened, ["x50", "x51", "x150"]);
  await reopened.close();
  await Deno.remove(dir, { recursive: true });
});

Deno.test("a line damaged in place under good offsets: lookup rebuilds them and answers as a whole read", async () => {
  const { dir, path, journal } = await journalOf(200);
  await journal.lookup(new Set(["x1"]));
  await journal.close();
  const bytes = await Deno.readFile(path);
  bytes[bytes.indexOf(0x7b, 2_000)] = "X".charCodeAt(0); // the "{" of a line in the middle
  await Deno.writeFile(path, bytes);
  const reopened = await TextMemory.open(path, logger); // the marks say it is whole: not read at open
  const ids = Array.from({ length: 100 }, (_, n) => `x${n}`);
  const found = await agrees(reopened, ids);
  assert.equal([...found.values()].flat().length, 199, "the damaged line is the only one missing");
  await reopened.close();
  await Deno.remove(dir, { recursive: true });
});

Deno.test("forgetting rewrites the offsets with the journal; a journal set aside loses its offsets", async () => {
  const { dir, path, journal } = await journalOf(600);
  await journal.lookup(new Set(["x1"]));
  await journal.sync();
  await journal.forget(new Set(["x10", "x200"]));
  assert.equal((await journal.lookup(new Set(["x10", "x200"]))).size, 0);
  await agrees(journal, ["x9", "x11", "x201", "x299"]);
  await journal.append(entry(600));
  await journal.close();
  let reopened = await TextMemory.open(path, logger);
  await agrees(reopened, ["x9", "x11", "x201", "x300", "x10"]);
  await reopened.close();
  // Damaged lines after the marks: the journal is set aside and rewritten, and its offsets removed with it.
  await Deno.writeTextFile(path, `not an entry\n${JSON.stringify(entry(602))}\n`, { append: true });
  const damaged = new DamagedFiles();
  reopened = await TextMemory.open(path, logger, damaged);
  assert.equal(damaged.entries.length, 1);
  await agrees(reopened, ["x9", "x301", "x300"]);
  await reopened.close();
  await Deno.remove(dir, { recursive: true });
});

Deno.test("lookups while appends and a forget run answer as whole reads at their end", async () => {
  const { dir, journal } = await journalOf(100);
  const writes: Promise<unknown>[] = [];
  const asked: Array<Promise<Map<string, MemoryEntry[]>>> = [];
  for (let n = 100; n < 300; n++) {
    writes.push(journal.append(entry(n)));
    if (n % 50 === 0) asked.push(journal.lookup(new Set([`x${n / 2 - 1}`, "x3"])));
    if (n === 200) writes.push(journal.forget(new Set(["x20"])));
  }
  await Promise.all(writes);
  for (const found of await Promise.all(asked)) assert.equal(found.get("x3")!.length, 2);
  await agrees(journal, Array.from({ length: 150 }, (_, n) => `x${n}`));
  await journal.close();
  await Deno.remove(dir, { recursive: true });
});
