import assert from "node:assert/strict";
import { getLogger } from "@logtape/logtape";
import { RecordingDevice } from "../../tests/support/recording_device.ts";
import { FakeClock } from "../../tests/support/fake_clock.ts";
import { type Clock, systemClock } from "../clock.ts";
import { ToolRegistry } from "../tools/registry.ts";
import { testToolContext } from "../../tests/support/tool_context.ts";
import { addressBook } from "../config/people.ts";
import { configSchema } from "../config/schema.ts";
import { Capability, refOf } from "./event.ts";
import { ChannelError, IOManager } from "./io_manager.ts";
import { outputTools } from "./output_tools.ts";
import { RouteTable } from "./route_table.ts";
import { ShuttingDown } from "./turn_error.ts";

function setup(options: { routes?: Record<string, string>; clock?: Clock; sendTimeoutMs?: number } = {}) {
  let n = 0;
  const tools = new ToolRegistry();
  const io = new IOManager({
    clock: options.clock ?? { ...systemClock, now: () => 1000 },
    routes: new RouteTable(options.routes ?? {}, {}, undefined),
    tools,
    logger: getLogger(["test"]),
    newId: () => `e${++n}`,
    ...(options.sendTimeoutMs ? { sendTimeoutMs: options.sendTimeoutMs } : {}),
  });
  for (const tool of outputTools(io, getLogger(["test"]))) tools.register(tool);
  return { io, tools };
}

const toolContext = (source = "tv") => testToolContext(source);

Deno.test("inputs get ids and clock time and come out in arrival order", async () => {
  const { io } = setup();
  const tv = new RecordingDevice("tv");
  await io.replaceDevices([tv]);
  tv.emit("one");
  tv.emit("two", "bob");
  tv.emit("21.5", "sensor", "tv", "temperature");
  const got = [await io.next(), await io.next(), await io.next()];
  assert.deepEqual(got, [
    { id: "e1", time: 1000, source: "tv", sender: "owner", trust: "owner", type: "message", payload: { text: "one" } },
    { id: "e2", time: 1000, source: "tv", sender: "bob", trust: "owner", type: "message", payload: { text: "two" } },
    {
      id: "e3",
      time: 1000,
      source: "tv",
      sender: "sensor",
      trust: "owner",
      type: "temperature",
      payload: { value: "21.5" },
    },
  ]);
  await io.close();
});

Deno.test("an input after the input side closed is refused with ShuttingDown, not a RangeError", async () => {
  const { io } = setup();
  io.closeInputs();
  assert.throws(
    () => io.submit({ source: "tv", sender: "owner", trust: "owner", type: "message", payload: { text: "late" } }),
    (error: unknown) =>
      error instanceof ShuttingDown && !(error instanceof RangeError) &&
      error.message === "homed is shutting down and takes no new input",
  );
  await io.close();
});

Deno.test("the reply channel is decided in one place: own route, then the source's, then the device's ask, then the source", () => {
  const io = new IOManager({
    clock: systemClock,
    routes: new RouteTable({ "qq:group:": "qq:private:1" }, {}, undefined, { http: { alice: "qq:private:2" } }),
    tools: new ToolRegistry(),
    logger: getLogger(["test"]),
  });
  assert.equal(io.replyChannel({ source: "http", sender: "alice", reply: "tv" }), "qq:private:2");
  assert.equal(io.replyChannel({ source: "qq:group:42", sender: "bob", reply: "tv" }), "qq:private:1");
  assert.equal(io.replyChannel({ source: "timer", sender: "owner", reply: "tv" }), "tv");
  assert.equal(io.replyChannel({ source: "http", sender: "owner" }), "http");
});

Deno.test("replaceDevices starts new devices before the swap and stops the old ones after", async () => {
  const { io, tools } = setup();
  const spec = { name: "tv_power", description: "power", parameters: { type: "object" } };
  const tv = new RecordingDevice("tv", { tools: [spec] });
  const lamp = new RecordingDevice("lamp");
  await io.replaceDevices([tv, lamp]);
  assert.ok(tools.has("tv_power"));
  const tv2 = new RecordingDevice("tv", { tools: [{ ...spec, name: "tv_input" }] });
  await io.replaceDevices([tv2, lamp]);
  assert.deepEqual([tv.started, tv.stopped, tv2.started, lamp.started, lamp.stopped], [1, 1, 1, 1, 0]);
  assert.ok(!tools.has("tv_power"));
  assert.equal((await tools.call("tv_input", "{}", toolContext())).content, "tv ran tv_input");
  assert.deepEqual(io.channels().map((c) => c.name), ["tv", "lamp"]);
  await io.close();
  assert.equal(lamp.stopped, 1);
});

Deno.test("a device's tools are registered as they are, household trust where the device set none", async () => {
  const { io, tools } = setup();
  let stuck = 0;
  const tv = new RecordingDevice("tv", {
    tools: [
      { name: "tv_power", description: "power", parameters: { type: "object" } },
      { name: "tv_guide", description: "guide", parameters: { type: "object" }, allow: "anyone" },
    ],
  });
  const remote = new RecordingDevice("remote", {
    tools: [{
      name: "remote_wait",
      description: "waits",
      parameters: { type: "object" },
      timeoutMs: 20,
      execute: () => new Promise(() => stuck++),
    }],
  });
  await io.replaceDevices([tv, remote]);
  const guest = testToolContext("tv", "guest");
  assert.match((await tools.call("tv_power", "{}", guest)).content, /is for .*household/);
  assert.equal((await tools.call("tv_guide", "{}", guest)).content, "tv ran tv_guide");
  assert.deepEqual(tv.calls, [{ name: "tv_guide", args: {}, source: "tv" }]);
  assert.match(
    (await tools.call("remote_wait", "{}", toolContext())).content,
    /did not finish within .* \(the tool's own timeout\)/,
  );
  assert.equal(stuck, 1);
  await io.close();
});

Deno.test("a device that fails to start leaves the old table in place", async () => {
  const { io, tools } = setup();
  const tv = new RecordingDevice("tv", {
    tools: [{ name: "tv_power", description: "p", parameters: { type: "object" } }],
  });
  await io.replaceDevices([tv]);
  const good = new RecordingDevice("lamp", {
    tools: [{ name: "lamp_dim", description: "dim", parameters: { type: "object" } }],
  });
  const broken = new RecordingDevice("radio", { failStart: "no such port /dev/ttyUSB9" });
  await assert.rejects(io.replaceDevices([good, broken]), /no such port \/dev\/ttyUSB9/);
  assert.deepEqual(io.channels().map((c) => c.name), ["tv"]);
  assert.ok(tools.has("tv_power"));
  assert.ok(!tools.has("lamp_dim"), "no tool of a device that is not in the table");
  assert.equal(good.stopped, 1, "the device started for the failed swap is stopped again");
  await assert.rejects(
    io.replaceDevices([new RecordingDevice("bad name")]),
    /Device name "bad name" is invalid/,
  );
  await assert.rejects(
    io.replaceDevices([
      new RecordingDevice("x", { tools: [{ name: "x.y", description: "", parameters: { type: "object" } }] }),
    ]),
    /Device "x" offers a tool with an invalid name "x\.y"/,
  );
  await io.close();
});

Deno.test("outputs are delivered in order, capability checked, with clear errors", async () => {
  const { io } = setup();
  const tv = new RecordingDevice("tv", { capabilities: Capability.Text | Capability.Image });
  const broken = new RecordingDevice("fax", { failSend: "paper jam" });
  await io.replaceDevices([tv, broken]);
  await Promise.all([
    io.send({ target: "tv", type: "message", payload: { text: "1" } }),
    io.send({ target: "tv:room2", type: "image", payload: { url: "u" } }),
  ]);
  assert.deepEqual(tv.sent.map((e) => e.target), ["tv", "tv:room2"]);
  await assert.rejects(io.send({ target: "tv", type: "audio", payload: {} }), (error) => {
    assert.ok(error instanceof ChannelError);
    assert.equal(error.message, 'Channel "tv" cannot carry audio output; it carries: text, image');
    return true;
  });
  await assert.rejects(
    io.send({ target: "radio", type: "message", payload: {} }),
    /Channel "radio" does not exist; channels: tv, fax/,
  );
  await assert.rejects(
    io.send({ target: "fax", type: "message", payload: {} }),
    /Channel "fax" failed to deliver: paper jam/,
  );
  await io.close();
});

Deno.test("each device has its own queue: a hung send delays no other device and times out clearly", async () => {
  const clock = new FakeClock();
  const { io } = setup({ clock, sendTimeoutMs: 5_000 });
  const stuck = new RecordingDevice("stuck", { hangSend: true });
  const tv = new RecordingDevice("tv");
  await io.replaceDevices([stuck, tv]);
  const first = io.send({ target: "stuck", type: "message", payload: { text: "1" } });
  const second = io.send({ target: "stuck", type: "message", payload: { text: "2" } });
  await io.send({ target: "tv", type: "message", payload: { text: "not held up" } });
  assert.deepEqual(tv.sent.map((e) => e.payload.text), ["not held up"]);
  assert.equal(stuck.hung, 1, "the second output waits behind the first on its own device");
  clock.advance(5_000);
  await assert.rejects(
    first,
    /^ChannelError: Channel "stuck" did not take the output within 5s \(io\.send_timeout\); it was given up$/,
  );
  assert.equal(stuck.hung, 2, "after the timeout the next output goes");
  clock.advance(5_000);
  await assert.rejects(second, /did not take the output within 5s/);
  assert.deepEqual((io.status().devices as Record<string, { outbox: unknown }>).stuck!.outbox, {
    queued: 0,
    sent: 0,
    failed: 0,
    timed_out: 2,
  });
  const closing = io.close();
  clock.advance(5_000);
  await closing;
});

Deno.test("output tools list, switch and send, refusing what a channel cannot carry", async () => {
  const { io, tools } = setup({ routes: { "tv:": "lamp" } });
  const tv = new RecordingDevice("tv");
  const lamp = new RecordingDevice("lamp", { capabilities: Capability.Text | Capability.Structured });
  await io.replaceDevices([tv, lamp]);
  const listed = JSON.parse((await tools.call("output_list_channels", "{}", toolContext())).content);
  assert.deepEqual(listed.channels.map((c: { name: string; capabilities: string[] }) => [c.name, c.capabilities]), [
    ["tv", ["text"]],
    ["lamp", ["text", "structured"]],
  ]);
  assert.deepEqual(listed.routes, [{ source: "tv:", channel: "lamp", origin: "config" }]);

  const ctx = toolContext("tv");
  assert.deepEqual(await tools.call("output_set_channel", '{"channel":"lamp"}', ctx), {
    ok: true,
    content: "The reply will go to lamp",
  });
  assert.deepEqual(ctx.switched, ["lamp"]);
  assert.match(
    (await tools.call("output_set_channel", '{"channel":"fridge"}', ctx)).content,
    /Channel "fridge" does not exist/,
  );
  const remembered = await tools.call("output_set_channel", '{"channel":"lamp","remember":true}', ctx);
  assert.equal(remembered.content, "The reply will go to lamp; tv now routes there");
  assert.equal(io.routes.resolve("tv"), "lamp");

  assert.equal(
    (await tools.call("output_send", '{"channel":"lamp","type":"structured","data":{"a":1}}', ctx)).content,
    "Queued structured for lamp",
  );
  const refused = await tools.call("output_send", '{"channel":"tv","type":"structured","data":{}}', ctx);
  assert.equal(refused.ok, false);
  assert.match(refused.content, /Channel "tv" cannot carry structured output; it carries: text/);
  assert.match(
    (await tools.call("output_send", '{"channel":"tv"}', ctx)).content,
    /type "message" needs a non-empty "text"/,
  );
  assert.match(
    (await tools.call("output_send", '{"channel":"tv","type":"image"}', ctx)).content,
    /type "image" needs "media" \(an id of media homed holds\) or a non-empty "url"/,
  );
  await io.close();
  assert.deepEqual(lamp.sent, [{
    target: "lamp",
    type: "structured",
    payload: { data: { a: 1 } },
    replyTo: { id: "e1", source: "tv", sender: "owner" },
  }]);
});

Deno.test("device owners: each group is replaced alone, changes are serialised, a failed change leaves the table", async () => {
  const { io, tools } = setup();
  const http = new RecordingDevice("http");
  await io.setDevices("core", [http]);
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  const slow = new RecordingDevice("slow", {
    startGate: gate,
    tools: [{ name: "slow_tool", description: "s", parameters: { type: "object" } }],
  });
  const quick = new RecordingDevice("quick");
  const order: string[] = [];
  const first = io.setDevices("plugins", [slow]).then(() => order.push("plugins"));
  const second = io.setDevices("core", [http, quick]).then(() => order.push("core"));
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal(quick.started, 0, "the second change waits while the first awaits its device's start");
  open();
  await Promise.all([first, second]);
  assert.deepEqual(order, ["plugins", "core"]);
  assert.deepEqual(io.channels().map((channel) => channel.name).sort(), ["http", "quick", "slow"]);
  assert.ok(tools.has("slow_tool"));
  await io.setDevices("plugins", []);
  assert.deepEqual(io.channels().map((channel) => channel.name).sort(), ["http", "quick"]);
  assert.equal(tools.has("slow_tool"), false);
  assert.equal(slow.stopped, 1);
  await assert.rejects(io.setDevices("plugins", [new RecordingDevice("broken", { failStart: "no bulb" })]), /no bulb/);
  assert.deepEqual(io.channels().map((channel) => channel.name).sort(), ["http", "quick"], "unchanged");
  await io.close();
});

Deno.test("a schedule's firings wait their turn beside the owner's live messages: a flood of them never starves a member", async () => {
  const { io } = setup();
  const submit = (source: string, sender: string, trust: "owner" | "household", text: string) =>
    io.submit({ source, sender, trust, type: "message", payload: { text } });
  for (let i = 0; i < 5; i++) submit(`timer:${i}`, "owner", "owner", `fired ${i}`);
  submit("qq:private:2", "mia", "household", "member");
  submit("qq:private:1", "owner", "owner", "live");
  const order: string[] = [];
  for (let i = 0; i < 4; i++) order.push(String((await io.next())!.payload.text));
  // The owner's live message first; then the firings and the member take turns.
  assert.deepEqual(order, ["live", "fired 0", "member", "fired 1"]);
  await io.close();
});

Deno.test("a device whose heartbeat hangs holds back no other device's, is reported by name and is not called again on top of itself", async () => {
  const clock = new FakeClock(1_000);
  const { io } = setup({ clock });
  const hung = Object.assign(new RecordingDevice("hall"), {
    calls: 0,
    heartbeat() {
      hung.calls++;
      return new Promise<void>(() => {});
    },
  });
  const timer = Object.assign(new RecordingDevice("timer"), {
    beats: 0,
    heartbeat() {
      timer.beats++;
    },
  });
  await io.replaceDevices([hung, timer]);
  const first = io.heartbeat();
  await clock.timersArmed();
  assert.equal(timer.beats, 1, "the other device's heartbeat ran at once");
  await new Promise((resolve) => setTimeout(resolve, 0)); // its end reaches the race, as before any real timer
  clock.advance(5_000);
  await assert.rejects(first, /^Error: device heartbeat failed \(hall: its heartbeat did not end within 5 s\)$/);
  await assert.rejects(io.heartbeat(), /^Error: device heartbeat failed \(hall: its last heartbeat has not ended\)$/);
  assert.equal(hung.calls, 1);
  assert.equal(timer.beats, 2);
  await io.close();
});

Deno.test("people: a listed sender is named by their person's name on every chat, their chat's name kept as the address", async () => {
  const people = addressBook(configSchema.parse({
    people: { wei: { trust: "owner", qq: "10001", telegram: "777000" } },
  }));
  let n = 0;
  const io = new IOManager({
    clock: { ...systemClock, now: () => 1000 },
    routes: new RouteTable({}, {}, undefined),
    tools: new ToolRegistry(),
    logger: getLogger(["test"]),
    newId: () => `e${++n}`,
    people,
  });
  const said = (source: string, sender: string) =>
    io.submit({ source, sender, trust: "owner", type: "message", payload: { text: "hi" } });
  const onQq = said("qq:private:10001", "10001");
  const onTelegram = said("telegram:private:777000", "777000");
  assert.deepEqual([onQq.sender, onQq.address], ["wei", "10001"]);
  assert.deepEqual([onTelegram.sender, onTelegram.address], ["wei", "777000"]);
  assert.equal(onTelegram.trust, "owner", "the trust is the chat's, which authenticated the sender");
  assert.deepEqual(refOf(onQq), { id: "e1", source: "qq:private:10001", sender: "wei", address: "10001" });
  const stranger = said("qq:private:10003", "10003");
  assert.deepEqual([stranger.sender, stranger.address], ["10003", undefined], "unlisted: the chat's own name");
  await io.close();
});

Deno.test("a message a chat refuses for good goes to the person's other chat; with none, the owner's policy hears and the caller gets the refusal", async () => {
  const told: string[] = [];
  let n = 0;
  const io = new IOManager({
    clock: { ...systemClock, now: () => Date.UTC(2026, 11, 5) },
    routes: new RouteTable({}, {}, undefined),
    tools: new ToolRegistry(),
    logger: getLogger(["test"]),
    newId: () => `e${++n}`,
    undeliverable: {
      elsewhere: (target) => target === "weixin:private:lin" ? ["weixin:private:lin", "qq:private:10002"] : [],
      tell: (failure) => told.push(`${failure.target}: ${failure.reason} (${failure.text})`),
    },
  });
  const weixin = new RecordingDevice("weixin", { refuseSend: "no recent message from them" });
  const qq = new RecordingDevice("qq");
  await io.replaceDevices([weixin, qq]);
  await io.send({ target: "weixin:private:lin", type: "message", payload: { text: "dentist at 3" } });
  assert.deepEqual(qq.sent.map((event) => [event.target, event.payload.text]), [["qq:private:10002", "dentist at 3"]]);
  await assert.rejects(
    io.send({ target: "weixin:private:wei", type: "message", payload: { text: "take the pills" } }),
    (error: Error) => error instanceof ChannelError && /no recent message from them/.test(error.message),
  );
  assert.deepEqual(told, ["weixin:private:wei: no recent message from them (take the pills)"]);
  assert.deepEqual(
    (io.status().undeliverable as Array<Record<string, unknown>>).map((entry) => [entry.target, entry.delivered_on]),
    [["weixin:private:wei", null], ["weixin:private:lin", "qq:private:10002"]],
    "newest first",
  );
  await io.close();
});
