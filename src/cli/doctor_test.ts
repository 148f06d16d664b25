import assert from "node:assert/strict";
import { toolRoom } from "./doctor.ts";

Deno.test("doctor says when the MCP servers' tools pass llm.max_tools, and what to do", () => {
  const fits = toolRoom(40, 128);
  assert.equal(fits.ok, true);
  assert.match(fits.detail, /^the MCP servers offer 40 tools; a request offers at most 128 \(llm\.max_tools\)/);
  const over = toolRoom(300, 128);
  assert.equal(over.ok, false);
  assert.match(
    over.detail,
    /offer 300 tools, more than llm\.max_tools \(128\) by themselves: each turn leaves out at least 173/,
  );
  assert.match(over.detail, /mcp\.servers\.<name>\.include$/);
});
