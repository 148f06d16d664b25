import assert from "node:assert/strict";
import { getLogger } from "@logtape/logtape";
import { RecordingDevice } from "../../tests/support/recording_device.ts";
import { testToolContext } from "../../tests/support/tool_context.ts";
import { systemClock } from "../clock.ts";
import { ToolRegistry } from "../tools/registry.ts";
import { IOManager } from "./io_manager.ts";
import { outputTools } from "./output_tools.ts";
import { RouteTable } from "./route_table.ts";

async function setup() {
  const tools = new ToolRegistry();
  const io = new IOManager({
    clock: systemClock,
    routes: new RouteTable({}, {}, undefined),
    tools,
    logger: getLogger(["test"]),
  });
  for (const tool of outputTools(io, getLogger(["test"]))) tools.register(tool);
  await io.replaceDevices([new RecordingDevice("http"), new RecordingDevice("qq")]);
  return { io, tools };
}

Deno.test("remember by a household member routes only her own messages from that source; the owner's, everyone's", async () => {
  const { io, tools } = await setup();
  const alice = { ...testToolContext("http", "household"), sender: "alice" };
  const remember = (channel: string) => JSON.stringify({ channel, remember: true });
  assert.deepEqual(await tools.call("output_set_channel", remember("qq:private:30003000"), alice), {
    ok: true,
    content: "The reply will go to qq:private:30003000; from now on, replies to alice's messages from http go there " +
      "(only alice's: a route for everyone on http is the owner's to set)",
  });
  assert.deepEqual(alice.switched, ["qq:private:30003000"]);
  assert.equal(io.routes.resolve("http", "alice"), "qq:private:30003000");
  assert.equal(io.routes.resolve("http", "owner"), "http", "the owner's reply is not taken to her chat");
  assert.equal(io.routes.resolve("http", "bob"), "http");

  const owner = testToolContext("http", "owner");
  assert.equal(
    (await tools.call("output_set_channel", remember("qq:private:20002000"), owner)).content,
    "The reply will go to qq:private:20002000; http now routes there",
  );
  assert.equal(io.routes.resolve("http", "owner"), "qq:private:20002000");
  assert.equal(io.routes.resolve("http", "bob"), "qq:private:20002000");
  assert.equal(io.routes.resolve("http", "alice"), "qq:private:30003000", "her own route comes first for her");

  // output_list_channels shows a sender's own route to that sender and the owner only.
  const listed = async (context: ReturnType<typeof testToolContext>) =>
    JSON.parse((await tools.call("output_list_channels", "{}", context)).content).routes;
  const ownerRoute = { source: "http", channel: "qq:private:20002000", origin: "runtime" };
  const aliceRoute = { source: "http", sender: "alice", channel: "qq:private:30003000", origin: "runtime" };
  assert.deepEqual(await listed(owner), [ownerRoute, aliceRoute]);
  assert.deepEqual(await listed(alice), [ownerRoute, aliceRoute]);
  assert.deepEqual(await listed({ ...testToolContext("http", "guest"), sender: "visitor" }), [ownerRoute]);
  assert.deepEqual(await listed({ ...testToolContext("qq:private:30003000", "household"), sender: "alice" }), [
    ownerRoute,
  ]);
  await io.close();
});
