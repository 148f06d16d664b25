import assert from "node:assert/strict";
import { join } from "node:path";
import { getLogger } from "@logtape/logtape";
import { TextMemory } from "./text_memory.ts";

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
