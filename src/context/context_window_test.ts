import assert from "node:assert/strict";
import { checkRequest } from "../../tests/support/fake_llm.ts";
import type { ChatMessage } from "../provider/provider.ts";
import { ContextWindow } from "./context_window.ts";

const ORIGIN = { eventId: "e", time: 0, source: "http", sender: "owner" };
const user = (n: number): ChatMessage => ({ role: "user", content: `u${n}` });
const toolTurn = (n: number, calls: number): ChatMessage[] => [
  user(n),
  {
    role: "assistant",
    content: null,
    tool_calls: Array.from({ length: calls }, (_, i) => ({
      id: `c${n}_${i}`,
      type: "function" as const,
      function: { name: "t", arguments: "{}" },
    })),
  },
  ...Array.from({ length: calls }, (_, i): ChatMessage => ({ role: "tool", tool_call_id: `c${n}_${i}`, content: "r" })),
  { role: "assistant", content: `a${n}` },
];

Deno.test("keeps at most maxEntries and always starts at a user message", () => {
  const context = new ContextWindow({ maxEntries: 30 });
  for (let n = 0; n < 200; n++) {
    context.appendTurn(
      n % 3 === 0 ? toolTurn(n, 1 + (n % 4)) : [user(n), { role: "assistant", content: `a${n}` }],
      ORIGIN,
    );
    const entries = context.entries();
    assert.ok(entries.length <= 30, `turn ${n}: ${entries.length} entries`);
    assert.equal(entries[0]!.role, "user");
    const problems = checkRequest({ messages: [{ role: "system", content: "p" }, ...entries, user(999)] }, {});
    assert.deepEqual(problems, [], `turn ${n}`);
  }
});

Deno.test("a single turn longer than the window is kept whole rather than cut", () => {
  const context = new ContextWindow({ maxEntries: 4 });
  context.appendTurn([user(1), { role: "assistant", content: "a1" }], ORIGIN);
  context.appendTurn(toolTurn(2, 5), ORIGIN);
  assert.equal(context.size, 8);
  assert.equal(context.entries()[0]!.content, "u2");
});

Deno.test("bad input is refused", () => {
  assert.throws(() => new ContextWindow({ maxEntries: 1 }), /maxEntries must be a whole number of at least 2, got 1/);
  assert.throws(
    () => new ContextWindow({ maxEntries: 4 }).appendTurn([{ role: "assistant", content: "x" }], ORIGIN),
    /must start with a user message/,
  );
});

Deno.test("over the token bound a batch of the oldest exchanges goes at once, down to two thirds", () => {
  const context = new ContextWindow({ maxEntries: 100, maxTokens: 1_000 });
  const long = (n: number): ChatMessage[] => [user(n), { role: "assistant", content: "x".repeat(396) }]; // ≈ 110 tokens
  const sizes: number[] = [];
  for (let n = 0; n < 30; n++) {
    context.appendTurn(long(n), ORIGIN);
    sizes.push(context.size);
    assert.ok(context.tokens <= 1_000, `turn ${n}: ${context.tokens} tokens`);
  }
  // Steady growth, then a drop by several exchanges at once — not one entry per turn.
  const drops = sizes.flatMap((size, i) => i > 0 && size < sizes[i - 1]! ? [sizes[i - 1]! - size] : []);
  assert.ok(drops.length >= 2 && drops.every((d) => d >= 4), `drops: ${drops.join(", ")}`);
  assert.ok(context.tokens <= 1_000);
  assert.equal(context.entries()[0]!.role, "user");
  assert.equal(context.shrinks, drops.length);
});

Deno.test("between shrinks the entries only grow at the end, so each request extends the last one", () => {
  const context = new ContextWindow({ maxEntries: 12, maxTokens: 100_000 });
  let previous = context.entries();
  let shrinksSeen = 0;
  for (let n = 0; n < 40; n++) {
    const shrinksBefore = context.shrinks;
    context.appendTurn([user(n), { role: "assistant", content: `a${n}` }], ORIGIN);
    const now = context.entries();
    if (context.shrinks === shrinksBefore) {
      // No shrink: the last request's entries, unchanged and in place, then this exchange.
      assert.equal(now.length, previous.length + 2, `turn ${n}: two entries more`);
      previous.forEach((entry, i) => assert.equal(now[i], entry, `turn ${n}: entry ${i} kept in place`));
    } else {
      shrinksSeen++;
      assert.ok(now.length <= 8, `turn ${n}: a shrink goes down to two thirds (8 entries), got ${now.length}`);
      assert.deepEqual(now.at(-1), { role: "assistant", content: `a${n}` }, `turn ${n}: the newest exchange stays`);
    }
    previous = now;
  }
  // 40 exchanges (80 entries) through a window of 12 that shrinks to 8: a shrink every third turn or so.
  assert.ok(shrinksSeen >= 10, `shrinks happened: ${shrinksSeen}`);
  assert.equal(shrinksSeen, context.shrinks);
});

Deno.test("shrinkTo keeps the newest exchange even when it alone is over", () => {
  const context = new ContextWindow({ maxEntries: 30, maxTokens: 100_000 });
  context.appendTurn([user(1), { role: "assistant", content: "a1" }], ORIGIN);
  context.appendTurn([user(2), { role: "assistant", content: "x".repeat(4_000) }], ORIGIN);
  assert.equal(context.shrinkTo(30, 10), 2);
  assert.deepEqual(context.entries().map((e) => e.content?.slice(0, 2)), ["u2", "xx"]);
  assert.equal(context.shrinkTo(30, 10), 0, "nothing more can go");
});

Deno.test("entries keep their provenance; what a shrink removes goes to onEvict, oldest first", () => {
  const evicted: string[][] = [];
  const context = new ContextWindow({
    maxEntries: 6,
    onEvict: (gone) => evicted.push(gone.map((entry) => `${entry.eventId}:${entry.message.content}`)),
  });
  for (let n = 0; n < 4; n++) {
    context.appendTurn([user(n), { role: "assistant", content: `a${n}` }], {
      eventId: `e${n}`,
      time: n,
      source: "qq:private:1",
      sender: "1",
    });
  }
  assert.deepEqual(evicted, [["e0:u0", "e0:a0", "e1:u1", "e1:a1"]], "at 8 > 6 entries, down to 4 in one batch");
  assert.deepEqual(context.records().map((entry) => [entry.eventId, entry.source, entry.message.content]), [
    ["e2", "qq:private:1", "u2"],
    ["e2", "qq:private:1", "a2"],
    ["e3", "qq:private:1", "u3"],
    ["e3", "qq:private:1", "a3"],
  ]);
  assert.equal(context.size, 4);
  const restored = new ContextWindow({ maxEntries: 6, entries: context.records() });
  assert.deepEqual(restored.entries(), context.entries());
  assert.throws(
    () => new ContextWindow({ maxEntries: 6, entries: context.records().slice(1) }),
    /A restored context must start with a user message/,
  );
});

Deno.test("when full, the exchanges least related to the current input move out; the rest keep their order", () => {
  const evicted: string[] = [];
  const context = new ContextWindow({
    maxEntries: 10,
    onEvict: (gone) =>
      evicted.push(...gone.filter((e) => e.message.role === "user").map((e) => String(e.message.content))),
  });
  const exchange = (text: string, reply: string, n: number) =>
    context.appendTurn([{ role: "user", content: text }, { role: "assistant", content: reply }], {
      ...ORIGIN,
      eventId: `e${n}`,
    });
  exchange("客厅的灯坏了，一直闪", "我记下了：客厅灯闪烁。", 1);
  exchange("今晚吃饺子还是面条？", "饺子吧。", 2);
  exchange("What is the weather tomorrow?", "Sunny, 21 degrees.", 3);
  exchange("明天早上七点提醒我倒垃圾", "好的，七点提醒你。", 4);
  exchange("Buy milk on the way home", "Added milk to the list.", 5);
  // The sixth exchange passes 10 entries: down to 6 entries, keeping what relates to the living room lamp.
  exchange("客厅的灯还在闪吗？", "我去看看客厅灯。", 6);
  assert.equal(evicted.length, 3, "12 entries down to 6: three exchanges in one batch");
  const kept = context.records().filter((e) => e.message.role === "user").map((e) => e.eventId);
  assert.ok(kept.includes("e1"), `the lamp exchange stays (kept ${kept.join(", ")})`);
  assert.ok(kept.includes("e6"), "the newest exchange always stays");
  assert.deepEqual(kept, [...kept].sort(), "chronological order");
  assert.equal(context.size, 6);
});

Deno.test("forget removes an event's exchange and nothing goes to onEvict", () => {
  const evicted: unknown[] = [];
  const context = new ContextWindow({ maxEntries: 30, onEvict: (gone) => evicted.push(...gone) });
  for (let n = 0; n < 3; n++) {
    context.appendTurn([user(n), { role: "assistant", content: `a${n}` }], { ...ORIGIN, eventId: `e${n}` });
  }
  assert.equal(context.forget(new Set(["e1"])), 2);
  assert.deepEqual(context.records().map((entry) => entry.eventId), ["e0", "e0", "e2", "e2"]);
  assert.equal(context.forget(new Set(["nope"])), 0);
  assert.deepEqual(evicted, []);
});
