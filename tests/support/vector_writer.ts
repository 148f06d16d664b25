/**
 * A child process for the crash test: applies the operations of {@link writerOps} to a vector store from a given
 * index on, printing `ack <index>` after each write returns, compacting often, until it is killed.
 *
 * Usage: deno run --allow-read=DIR --allow-write=DIR tests/support/vector_writer.ts DIR START
 */

import { VectorStore } from "../../src/search/store.ts";

/** The text of document `n`, the same in the writer and the checker. */
export function writerText(n: number): string {
  const rooms = ["客厅", "卧室", "kitchen", "garage", "书房"];
  return `note ${n}: ${rooms[n % rooms.length]} 的灯 ${n * 7 % 13} 点 switch ${n % 2 ? "on" : "off"} 记录${n}`;
}

const OPS: Array<{ op: "put" | "del"; n: number }> = [];
for (let n = 0; OPS.length < 200_000; n++) {
  OPS.push({ op: "put", n });
  if (n >= 9 && n % 9 === 0) OPS.push({ op: "del", n: n - 5 });
}

/** Operation `index` of the fixed sequence: put 0, put 1, …, and after every ninth put, delete the put five back. */
export function writerOp(index: number): { op: "put" | "del"; n: number } {
  return OPS[index]!;
}

if (import.meta.main) {
  const [dir, start] = [Deno.args[0]!, Number(Deno.args[1])];
  const store = await VectorStore.open(dir, { compactEvery: 40 });
  const out = (line: string) => Deno.stdout.writeSync(new TextEncoder().encode(`${line}\n`));
  for (let index = start;; index++) {
    const { op, n } = writerOp(index);
    if (op === "put") store.put(`d${n}`, writerText(n), { n });
    else store.delete(`d${n}`);
    out(`ack ${index}`);
  }
}
