import assert from "node:assert/strict";
import { compareText } from "./compare_text.ts";

Deno.test("compareText orders by code point, the same everywhere", () => {
  assert.deepEqual(["b", "A", "a", "知识", "Z", "10", "9"].sort(compareText), ["10", "9", "A", "Z", "a", "b", "知识"]);
  assert.equal(compareText("x", "x"), 0);
});
