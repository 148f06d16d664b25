import assert from "node:assert/strict";
import { cutToTokens, estimateTokens, messageTokens } from "./tokens.ts";

Deno.test("CJK counts one token per character, other text one per four characters", () => {
  assert.equal(estimateTokens(""), 0);
  assert.equal(estimateTokens("abcd"), 1);
  assert.equal(estimateTokens("abcde"), 2);
  assert.equal(estimateTokens("客厅的灯"), 4);
  assert.equal(estimateTokens("把客厅的灯 off"), 5 + 1);
  assert.equal(estimateTokens("こんにちは안녕"), 7);
  assert.equal(estimateTokens("，。！"), 3, "full-width punctuation counts as CJK");
});

Deno.test("a message counts its framing and its tool calls", () => {
  assert.equal(messageTokens({ role: "user", content: "abcd" }), 5);
  assert.equal(
    messageTokens({
      role: "assistant",
      content: null,
      tool_calls: [{ id: "c", type: "function", function: { name: "lamp_set", arguments: '{"on":true}' } }],
    }),
    4 + 4 + 2 + 3,
  );
});

Deno.test("cutToTokens leaves short text alone and cuts long text with a visible marker", () => {
  assert.equal(cutToTokens("short", 10), "short");
  const cut = cutToTokens("x".repeat(40_000), 1_000);
  assert.ok(cut.startsWith("x".repeat(3_840)));
  assert.match(
    cut,
    /\n\[… homed cut this result: it had 40,000 characters \(≈10,000 tokens\); only the first 3,840 are shown …\]$/,
  );
  assert.ok(estimateTokens(cut) <= 1_000 + 60);
  const zh = cutToTokens("灯".repeat(5_000), 1_000);
  assert.match(zh, /only the first 960 are shown/);
});
