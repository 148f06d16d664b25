import assert from "node:assert/strict";
import { FakeClock } from "../../tests/support/fake_clock.ts";
import { encodeSse, SseStream } from "./sse_writer.ts";

const decoder = new TextDecoder();

Deno.test("a message's lines become data lines; an event name cannot add a line", () => {
  assert.equal(decoder.decode(encodeSse({ data: "a\nb\r\nc" })), "data: a\ndata: b\ndata: c\n\n");
  assert.equal(decoder.decode(encodeSse({ event: "x\ny", data: "" })), "event: xy\ndata: \n\n");
});

Deno.test("what waits is bounded in bytes; a taken chunk no longer counts; end drains, then the body ends", async () => {
  const stream = new SseStream({ maxWaitingBytes: 30, keepAliveMs: 0 });
  assert.equal(stream.send({ data: "0123456789" }), "sent"); // 18 bytes wait
  assert.equal(stream.send({ data: "0123456789" }), "over", "36 would");
  assert.equal(stream.waitingBytes, 18);
  const reader = stream.body.getReader();
  assert.equal(decoder.decode((await reader.read()).value), "data: 0123456789\n\n");
  assert.equal(stream.waitingBytes, 0);
  const next = reader.read(); // the server waits for bytes: the next message goes straight to it
  await new Promise((resolve) => setTimeout(resolve, 0));
  assert.equal(stream.send({ data: "x".repeat(100) }), "sent", "nothing waits: a large one is taken");
  assert.equal(decoder.decode((await next).value).length, 108);
  stream.send({ data: "last" });
  stream.end();
  assert.equal(stream.send({ data: "after" }), "closed");
  assert.equal(decoder.decode((await reader.read()).value), "data: last\n\n");
  assert.equal((await reader.read()).done, true);
  assert.equal(stream.peakWaitingBytes, 18);
});

Deno.test("abort drops what waits and fails the body; a cancelled body tells its owner", async () => {
  const stream = new SseStream({ maxWaitingBytes: 1_000, keepAliveMs: 0 });
  stream.send({ data: "waiting" });
  stream.abort("let go");
  assert.equal(stream.waitingBytes, 0);
  assert.equal(stream.open, false);
  await assert.rejects(stream.body.getReader().read(), (error) => error === "let go");

  let cancelled = 0;
  const other = new SseStream({ maxWaitingBytes: 1_000, keepAliveMs: 0, onCancel: () => cancelled++ });
  await other.body.cancel();
  assert.equal(cancelled, 1);
  assert.equal(other.send({ data: "x" }), "closed");
});

Deno.test("a quiet stream gets a keep-alive comment on the clock; none after it ends", async () => {
  const clock = new FakeClock();
  const stream = new SseStream({ maxWaitingBytes: 1_000, keepAliveMs: 15_000, clock });
  const reader = stream.body.getReader();
  const first = reader.read();
  clock.advance(15_000);
  assert.equal(decoder.decode((await first).value), ": keep-alive\n\n");
  stream.end();
  assert.equal(clock.pendingTimers, 0);
  assert.equal((await reader.read()).done, true);
});
