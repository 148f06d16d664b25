import assert from "node:assert/strict";
import { getLogger } from "@logtape/logtape";
import { RecordingDevice } from "../../tests/support/recording_device.ts";
import { testToolContext } from "../../tests/support/tool_context.ts";
import { systemClock } from "../clock.ts";
import { ToolRegistry } from "../tools/registry.ts";
import { IOManager } from "./io_manager.ts";
import { type FetchOutgoing, outputTools } from "./output_tools.ts";
import { Capability } from "./event.ts";
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

const HELD = `${"a".repeat(64)}.png`;

/** The IO manager with a QQ-like device that takes images, and output_send over an injected media fetch. */
async function sendSetup(fetchMedia?: FetchOutgoing) {
  const tools = new ToolRegistry();
  const io = new IOManager({
    clock: systemClock,
    routes: new RouteTable({}, {}, undefined),
    tools,
    logger: getLogger(["test"]),
  });
  const qq = new RecordingDevice("qq", { capabilities: Capability.Text | Capability.Image | Capability.File });
  for (const tool of outputTools(io, getLogger(["test"]), fetchMedia ? { fetchMedia } : {})) tools.register(tool);
  await io.replaceDevices([new RecordingDevice("http"), qq]);
  return { io, tools, qq };
}

const send = (args: Record<string, unknown>) => JSON.stringify({ channel: "qq", ...args });

Deno.test("output_send: a url is fetched by homed and what homed then holds is sent; the device never sees the url", async () => {
  const asked: Array<[string, string]> = [];
  const { io, tools, qq } = await sendSetup((url, type) => {
    asked.push([url, type]);
    return Promise.resolve(HELD);
  });
  const household = testToolContext("qq:private:30003000", "household");
  const result = await tools.call(
    "output_send",
    send({ type: "image", url: "https://gchat.qpic.cn/plant.png", text: "here" }),
    household,
  );
  assert.deepEqual(result, { ok: true, content: "Queued image for qq" });
  assert.deepEqual(asked, [["https://gchat.qpic.cn/plant.png", "image"]]);
  await waitFor(() => qq.sent.length === 1);
  assert.deepEqual(qq.sent[0]!.payload, { media: HELD, text: "here" }, "the held media, never the url");
  await io.close();
});

Deno.test("output_send: a url homed refuses or cannot fetch is an error result naming the url and the rule; nothing is sent", async () => {
  const refusal =
    'url "file:///etc/homed/homed.yaml" was refused: the scheme file: is not allowed (only http: and https:)';
  const { io, tools, qq } = await sendSetup(() => Promise.reject(new Error(refusal)));
  const result = await tools.call(
    "output_send",
    send({ type: "file", url: "file:///etc/homed/homed.yaml" }),
    testToolContext("qq:private:30003000", "household"),
  );
  assert.deepEqual(result, { ok: false, content: `Error: tool "output_send" failed: ${refusal}` });
  assert.deepEqual(qq.sent, []);
  await io.close();
});

Deno.test("output_send: without homed's media to fetch it, a url is refused; held media still goes", async () => {
  const { io, tools, qq } = await sendSetup();
  const context = testToolContext("qq:private:30003000", "household");
  const refused = await tools.call(
    "output_send",
    send({ type: "image", url: "http://169.254.169.254/x.png" }),
    context,
  );
  assert.deepEqual(refused, {
    ok: false,
    content:
      'Error: tool "output_send" failed: url "http://169.254.169.254/x.png" was refused: homed sends only media it holds ' +
      'here (nothing fetches and checks a url for it); give "media", the id of media homed holds',
  });
  assert.deepEqual(await tools.call("output_send", send({ type: "image", media: HELD }), context), {
    ok: true,
    content: "Queued image for qq",
  });
  await waitFor(() => qq.sent.length === 1);
  assert.deepEqual(qq.sent[0]!.payload, { media: HELD });
  await io.close();
});

async function waitFor(done: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !done(); i++) await new Promise((resolve) => setTimeout(resolve, 5));
  assert.ok(done(), "in time");
}
