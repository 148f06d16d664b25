import assert from "node:assert/strict";
import { testToolContext } from "../../tests/support/tool_context.ts";
import { ToolRegistry } from "./registry.ts";
import { statusTool } from "./status_tool.ts";

Deno.test("a status tool answers anyone with the device's status of the moment, and takes no arguments", async () => {
  let connected = false;
  const registry = new ToolRegistry();
  registry.register(statusTool("chat_status", "Whether the chat is connected.", () => ({ connected })));
  const guest = testToolContext("qq:private:30003", "guest");
  assert.deepEqual(await registry.call("chat_status", "{}", guest), { ok: true, content: '{"connected":false}' });
  connected = true;
  assert.deepEqual(await registry.call("chat_status", "{}", guest), { ok: true, content: '{"connected":true}' });
  const extra = await registry.call("chat_status", '{"verbose":true}', guest);
  assert.equal(extra.ok, false);
  assert.match(extra.content, /chat_status/);
  assert.match(extra.content, /verbose/);
});
