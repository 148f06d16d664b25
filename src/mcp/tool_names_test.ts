/**
 * Tests of the names MCP tools get among homed's: the `mcp__<server>__<tool>` form, characters the LLM APIs refuse
 * replaced, and long names shortened deterministically without two of them colliding.
 *
 * @module
 */

import assert from "node:assert/strict";
import { TOOL_NAME } from "../tools/tool.ts";
import { fnv1a32Hex, MAX_TOOL_NAME, mcpToolName } from "./tool_names.ts";

Deno.test("a short name is mcp__<server>__<tool> as it is", () => {
  assert.equal(mcpToolName("everything", "get-sum"), "mcp__everything__get-sum");
  assert.equal(mcpToolName("fs", "read_text_file"), "mcp__fs__read_text_file");
});

Deno.test("characters outside A-Z, a-z, 0-9, _ and - become _", () => {
  assert.equal(mcpToolName("fs", "read.file"), "mcp__fs__read_file");
  assert.equal(mcpToolName("ha", "lights/turn on ✓"), "mcp__ha__lights_turn_on__");
  assert.match(mcpToolName("ha", "lights/turn on ✓"), TOOL_NAME);
});

Deno.test("a name over 64 characters is cut to 64 and ends in _ and 8 hex digits of the full name's hash", () => {
  const tool = "set_the_brightness_of_every_light_in_the_whole_living_room_area";
  const name = mcpToolName("home-assistant", tool);
  assert.equal(name.length, MAX_TOOL_NAME);
  assert.match(name, TOOL_NAME);
  assert.equal(name.slice(-9), `_${fnv1a32Hex(`mcp__home-assistant__${tool}`)}`);
  assert.ok(name.startsWith("mcp__home-assistant__set_the_brightness"), name);
});

Deno.test("shortening is deterministic, and long names that share their start stay distinct", () => {
  const a = "x".repeat(80) + "_on";
  const b = "x".repeat(80) + "_off";
  assert.equal(mcpToolName("s", a), mcpToolName("s", a));
  assert.notEqual(mcpToolName("s", a), mcpToolName("s", b));
  assert.equal(mcpToolName("s", a).slice(0, 55), mcpToolName("s", b).slice(0, 55));
});

Deno.test("hashed: a short name gets the suffix too, different from the plain one", () => {
  const hashed = mcpToolName("fs", "read.file", { hashed: true });
  assert.equal(hashed, `mcp__fs__read_file_${fnv1a32Hex("mcp__fs__read.file")}`);
  assert.notEqual(hashed, mcpToolName("fs", "read_file", { hashed: true }));
});

Deno.test("FNV-1a 32-bit matches the published test vectors", () => {
  assert.equal(fnv1a32Hex(""), "811c9dc5");
  assert.equal(fnv1a32Hex("a"), "e40c292c");
  assert.equal(fnv1a32Hex("foobar"), "bf9cf968");
});
