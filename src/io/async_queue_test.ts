import assert from "node:assert/strict";
import { AsyncQueue } from "./async_queue.ts";

Deno.test("items come out in the order they went in, waiting or not", async () => {
  const queue = new AsyncQueue<number>();
  const early = queue.next();
  for (let i = 0; i < 3000; i++) queue.push(i);
  const out = [await early];
  for (let i = 1; i < 3000; i++) out.push((await queue.next())!);
  assert.deepEqual(out, Array.from({ length: 3000 }, (_, i) => i));
  assert.equal(queue.size, 0);
});

Deno.test("close wakes waiters, keeps queued items, refuses pushes", async () => {
  const queue = new AsyncQueue<string>();
  const waiting = queue.next();
  queue.close();
  assert.equal(await waiting, undefined);
  assert.throws(() => queue.push("x"), /The queue is closed/);
  const other = new AsyncQueue<string>();
  other.push("kept");
  other.close();
  assert.equal(await other.next(), "kept");
  assert.equal(await other.next(), undefined);
});

Deno.test("an aborted wait returns undefined and does not swallow a later item", async () => {
  const queue = new AsyncQueue<string>();
  const controller = new AbortController();
  const waiting = queue.next(controller.signal);
  controller.abort();
  assert.equal(await waiting, undefined);
  queue.push("after");
  assert.equal(await queue.next(), "after");
});
