import assert from "node:assert/strict";
import { join } from "node:path";
import { getLogger } from "@logtape/logtape";
import { MARK_EVERY, TextMemory } from "./text_memory.ts";

const entry = (n: number) => ({
  eventId: `e${n}`,
  time: n,
  role: n % 2 ? "assistant" as const : "user" as const,
  source: "qq:private:20002000",
  sender: n % 2 ? "butler" : "20002000",
  text: `第${n}句 line ${n}`,
});

Deno.test("entries survive reopening; a torn last line is cut, a bad line skipped, nothing acknowledged lost", async () => {
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-textmemory-" });
  const path = join(dir, "candidates.jsonl");
  const journal = await TextMemory.open(path, getLogger(["test"]));
  for (let n = 0; n < 5; n++) await journal.append(entry(n));
  await journal.close();
  // A write interrupted by kill -9 (no newline), and a line that is not an entry.
  await Deno.writeTextFile(path, '{"not":"an entry"}\n{"eventId":"e5","ti', { append: true });
  const reopened = await TextMemory.open(path, getLogger(["test"]));
  assert.equal(reopened.count, 5);
  assert.deepEqual(await reopened.entries(), [0, 1, 2, 3, 4].map(entry));
  await reopened.append(entry(5));
  assert.deepEqual((await reopened.entries()).map((e) => e.eventId), ["e0", "e1", "e2", "e3", "e4", "e5"]);
  assert.ok((await Deno.readTextFile(path)).endsWith(`${JSON.stringify(entry(5))}\n`), "the torn bytes are gone");
  await reopened.close();
  await Deno.remove(dir, { recursive: true });
});

Deno.test("lookup finds both halves of the exchanges asked for, after the appends in progress, and nothing else", async () => {
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-textmemory-" });
  const journal = await TextMemory.open(join(dir, "candidates.jsonl"), getLogger(["test"]));
  const turn = (id: string, role: "user" | "assistant") => ({ ...entry(role === "user" ? 0 : 1), eventId: id });
  const writes = [
    journal.append(turn("a", "user")),
    journal.append(turn("a", "assistant")),
    journal.append(turn("b", "user")),
  ];
  const found = await journal.lookup(new Set(["a", "b", "missing"])); // not awaiting the appends first
  await Promise.all(writes);
  assert.deepEqual([...found.keys()], ["a", "b"]);
  assert.deepEqual(found.get("a")!.map((e) => e.role), ["user", "assistant"]);
  assert.equal((await journal.lookup(new Set())).size, 0);
  await journal.close();
  await Deno.remove(dir, { recursive: true });
});

Deno.test("a journal larger than one read: lines across chunk boundaries, from a cursor, the last few, a torn end", async () => {
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-textmemory-" });
  const path = join(dir, "candidates.jsonl");
  // ≈ 1.5 MB of lines of varying length, Chinese and English: many lines straddle the 256 KiB reads.
  const long = (n: number) => ({ ...entry(n), text: `${entry(n).text} ${"词语 words ".repeat(n % 37)}` });
  const lines = Array.from({ length: 6_000 }, (_, n) => `${JSON.stringify(long(n))}\n`).join("");
  await Deno.writeTextFile(path, `${lines}{"eventId":"torn","ti`);
  const journal = await TextMemory.open(path, getLogger(["test"]));
  assert.equal(journal.count, 6_000);
  assert.deepEqual((await journal.from(5_997)).map((e) => e.eventId), ["e5997", "e5998", "e5999"]);
  assert.deepEqual(await journal.last(2), [long(5_998), long(5_999)]);
  const all = await journal.entries();
  assert.equal(all.length, 6_000);
  assert.deepEqual(all[4_321], long(4_321));
  assert.equal((await Deno.stat(path)).size, new TextEncoder().encode(lines).length, "the torn end cut");
  await journal.close();
  await Deno.remove(dir, { recursive: true });
});

/** A journal in a fresh folder holding entries 0 … `count` − 1 (open, for the test to go on with). */
async function journalOf(count: number): Promise<{ dir: string; path: string; journal: TextMemory }> {
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-textmemory-" });
  const path = join(dir, "candidates.jsonl");
  const journal = await TextMemory.open(path, getLogger(["test"]));
  for (let n = 0; n < count; n++) await journal.append(entry(n));
  return { dir, path, journal };
}

Deno.test("after a sync, opening reads only what came after the marks; reads from a cursor start at a mark", async () => {
  const { dir, path, journal } = await journalOf(3_000);
  await journal.sync();
  await journal.close();
  const marks = JSON.parse(await Deno.readTextFile(`${path}.marks`));
  assert.deepEqual({ count: marks.count, marks: marks.marks.map(([index]: [number]) => index) }, {
    count: 3_000,
    marks: [0, MARK_EVERY, 2 * MARK_EVERY],
  });
  // Lines appended after the sync (a kill before the next one), and an early line damaged in place: a whole read
  // would skip it, a read from the marks never sees it.
  await Deno.writeTextFile(path, [3_000, 3_001].map((n) => `${JSON.stringify(entry(n))}\n`).join(""), { append: true });
  const bytes = await Deno.readFile(path);
  bytes[bytes.indexOf(0x7b, 300)] = "X".charCodeAt(0); // the "{" of an early line
  await Deno.writeFile(path, bytes);
  const reopened = await TextMemory.open(path, getLogger(["test"]));
  assert.equal(reopened.count, 3_002, "the damaged early line was not read at open");
  assert.deepEqual((await reopened.from(2_999)).map((e) => e.eventId), ["e2999", "e3000", "e3001"]);
  assert.deepEqual(await reopened.last(2), [entry(3_000), entry(3_001)]);
  assert.equal((await reopened.from(2_050))[0]!.eventId, "e2050", "from the mark at 2048, counted on from there");
  assert.equal((await reopened.entries()).length, 3_001, "a whole read skips the damaged line");
  await reopened.close();
  await Deno.remove(dir, { recursive: true });
});

Deno.test("marks that do not match the journal are ignored and it is read whole", async () => {
  const { dir, path, journal } = await journalOf(40);
  await journal.close();
  const goodMarks = await Deno.readTextFile(`${path}.marks`);
  // Another journal of about the same size where the marks say the old one ends.
  await Deno.writeTextFile(path, Array.from({ length: 45 }, (_, n) => `${JSON.stringify(entry(n + 100))}\n`).join(""));
  let reopened = await TextMemory.open(path, getLogger(["test"]));
  assert.equal(reopened.count, 45);
  assert.deepEqual((await reopened.last(1)).map((e) => e.eventId), ["e144"]);
  await reopened.close();
  // A journal shorter than the marks say, and marks that are not JSON.
  await Deno.writeTextFile(path, `${JSON.stringify(entry(7))}\n`);
  await Deno.writeTextFile(`${path}.marks`, goodMarks);
  reopened = await TextMemory.open(path, getLogger(["test"]));
  assert.equal(reopened.count, 1);
  await reopened.close();
  await Deno.writeTextFile(`${path}.marks`, "{not json");
  reopened = await TextMemory.open(path, getLogger(["test"]));
  assert.deepEqual(await reopened.entries(), [entry(7)]);
  await reopened.close();
  await Deno.remove(dir, { recursive: true });
});

Deno.test("forgetting rewrites the marks with the journal", async () => {
  const { dir, path, journal } = await journalOf(2_100);
  await journal.sync();
  assert.deepEqual(await journal.forget(new Set(["e0", "e1500"])), [0, 1_500]);
  await journal.append(entry(2_100));
  await journal.close();
  const reopened = await TextMemory.open(path, getLogger(["test"]));
  assert.equal(reopened.count, 2_099);
  assert.deepEqual((await reopened.from(2_096)).map((e) => e.eventId), ["e2098", "e2099", "e2100"]);
  assert.equal((await reopened.from(1_499))[0]!.eventId, "e1501");
  await reopened.close();
  await Deno.remove(dir, { recursive: true });
});
