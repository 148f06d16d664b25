import assert from "node:assert/strict";
import { checkRequest } from "../../../tests/support/fake_llm.ts";
import type { ChatMessage } from "../provider/provider.ts";
import { ContextWindow } from "./context.ts";

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
  const context = new ContextWindow(30);
  for (let n = 0; n < 200; n++) {
    context.appendTurn(n % 3 === 0 ? toolTurn(n, 1 + (n % 4)) : [user(n), { role: "assistant", content: `a${n}` }]);
    const entries = context.entries();
    assert.ok(entries.length <= 30, `turn ${n}: ${entries.length} entries`);
    assert.equal(entries[0]!.role, "user");
    const problems = checkRequest({ messages: [{ role: "system", content: "p" }, ...entries, user(999)] }, {});
    assert.deepEqual(problems, [], `turn ${n}`);
  }
});

Deno.test("a single turn longer than the window is kept whole rather than cut", () => {
  const context = new ContextWindow(4);
  context.appendTurn([user(1), { role: "assistant", content: "a1" }]);
  context.appendTurn(toolTurn(2, 5));
  assert.equal(context.size, 8);
  assert.equal(context.entries()[0]!.content, "u2");
});

Deno.test("bad input is refused", () => {
  assert.throws(() => new ContextWindow(1), /maxEntries must be a whole number of at least 2, got 1/);
  assert.throws(
    () => new ContextWindow(4).appendTurn([{ role: "assistant", content: "x" }]),
    /must start with a user message/,
  );
});
