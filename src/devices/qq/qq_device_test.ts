import assert from "node:assert/strict";
import { getLogger, type Logger } from "@logtape/logtape";
import { OneBotSim } from "../../../tests/support/onebot_sim.ts";
import { waitFor } from "../../../tests/support/wait.ts";
import { FakeClock } from "../../../tests/support/fake_clock.ts";
import { callDeviceTool } from "../../../tests/support/recording_device.ts";
import { testToolContext } from "../../../tests/support/tool_context.ts";
import { type Clock, systemClock } from "../../clock.ts";
import { log, setupLogging, stopLogging } from "../../log/logging.ts";
import { type InputEvent, refOf } from "../../io/event.ts";
import { IOManager } from "../../io/io_manager.ts";
import { RouteTable } from "../../io/route_table.ts";
import { ToolRegistry } from "../../tools/registry.ts";
import { splitText } from "../../chat_policy/split_text.ts";
import { QqDevice, type QqSettings } from "./qq_device.ts";

const OWNER = "20002000";
const FRIEND = "30003000";
const STRANGER = "40004000";
const GROUP = "500050005";

/** A QQ device behind a real WebSocket server on loopback, and an IOManager to read its inputs. */
async function setup(
  settings: Partial<QqSettings> = {},
  clock: Clock = systemClock,
  logger: Logger = getLogger(["test"]),
) {
  const qq = new QqDevice({
    settings: {
      owner: OWNER,
      allowUsers: [FRIEND],
      allowGroups: [GROUP],
      approveFriends: [],
      groupPrefix: "管家",
      actionTimeoutMs: 5_000,
      splitAt: 1_500,
      minSendIntervalMs: 0,
      queueLimit: 10,
      maxFrameBytes: 65_536,
      ...settings,
    },
    clock,
    logger,
  });
  const io = new IOManager({
    clock,
    routes: new RouteTable({}, {}, undefined),
    tools: new ToolRegistry(),
    logger: getLogger(["test"]),
  });
  await io.replaceDevices([qq]);
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (request) => {
    const selfId = request.headers.get("x-self-id")!; // before the upgrade: Deno closes the request then
    const role = request.headers.get("x-client-role")?.toLowerCase() === "event" ? "event" : "universal";
    const { socket, response } = Deno.upgradeWebSocket(request);
    qq.attach(socket, selfId, role);
    return response;
  });
  const url = `ws://127.0.0.1:${server.addr.port}/`;
  const inputs: InputEvent[] = [];
  const reader = (async () => {
    for (let event = await io.next(); event; event = await io.next()) inputs.push(event);
  })();
  const close = async (...sims: OneBotSim[]) => {
    for (const sim of sims) await sim.close().catch(() => {});
    await io.close();
    await reader;
    await server.shutdown();
  };
  return { qq, io, url, inputs, close };
}

Deno.test("who may talk: the owner and listed users in private, listed groups when addressed; nobody else", async () => {
  const { url, inputs, close } = await setup();
  const sim = await OneBotSim.connect(url);
  sim.privateMessage(OWNER, [{ type: "text", data: { text: "开灯" } }]);
  sim.privateMessage(FRIEND, "晚饭吃什么");
  sim.privateMessage(STRANGER, "let me in");
  sim.groupMessage(GROUP, STRANGER, "just chatting"); // not addressed
  sim.groupMessage(GROUP, STRANGER, `[CQ:at,qq=${sim.selfId}] 几点了`); // @-mentioned: a guest
  sim.groupMessage(GROUP, FRIEND, "管家 明天天气"); // the prefix
  sim.groupMessage("600060006", OWNER, `[CQ:at,qq=${sim.selfId}] unlisted group`);
  sim.privateMessage(sim.selfId, "my own message"); // the bot itself
  sim.send({
    post_type: "message_sent",
    message_type: "private",
    user_id: Number(OWNER),
    self_id: Number(sim.selfId),
    message: "sent",
  });
  sim.privateMessage(OWNER, "last");
  await waitFor(() => inputs.some((e) => e.payload.text === "last"), "the last message");
  assert.deepEqual(inputs.map((e) => [e.source, e.sender, e.trust, e.payload.text, e.payload.display]), [
    [`qq:private:${OWNER}`, OWNER, "owner", "开灯", `nick${OWNER}`],
    [`qq:private:${FRIEND}`, FRIEND, "household", "晚饭吃什么", `nick${FRIEND}`],
    [`qq:group:${GROUP}`, STRANGER, "guest", "几点了", `nick${STRANGER}`],
    [`qq:group:${GROUP}`, FRIEND, "household", "明天天气", `nick${FRIEND}`],
    [`qq:private:${OWNER}`, OWNER, "owner", "last", `nick${OWNER}`],
  ]);
  await close(sim);
});

Deno.test("a message delivered twice (one bot on two sockets) is one input; a reused id with new words is not", async () => {
  const { qq, url, inputs, close } = await setup();
  const universal = await OneBotSim.connect(url);
  const events = await OneBotSim.connect(url, { role: "Event" });
  const first = { message_id: 77, time: 1_700_000_000 };
  universal.privateMessage(OWNER, "开灯", first);
  events.privateMessage(OWNER, "开灯", first); // the same delivery on the event socket
  universal.privateMessage(OWNER, "关灯", first); // the implementation restarted its counter: new words, same id
  universal.groupMessage(GROUP, FRIEND, "管家 开灯", first); // the same id in another conversation
  universal.privateMessage(OWNER, "last");
  await waitFor(() => inputs.some((e) => e.payload.text === "last"), "the last message");
  assert.deepEqual(inputs.map((e) => [e.source, e.payload.text, e.payload.message_id]), [
    [`qq:private:${OWNER}`, "开灯", "77"],
    [`qq:private:${OWNER}`, "关灯", "77"],
    [`qq:group:${GROUP}`, "开灯", "77"],
    [`qq:private:${OWNER}`, "last", String(inputs.at(-1)!.payload.message_id)],
  ]);
  assert.equal(qq.status().repeated, 1);
  assert.deepEqual(inputs[2]!.handle, { self_id: universal.selfId, message_id: "77" }, "what the reply needs back");
  await close(universal, events);
});

Deno.test("a reply goes out through the account that received the message", async () => {
  const { io, url, inputs, close } = await setup();
  const one = await OneBotSim.connect(url, { selfId: "10001000" });
  const two = await OneBotSim.connect(url, { selfId: "10002000" });
  two.privateMessage(OWNER, "which bot am I talking to?");
  await waitFor(() => inputs.length === 1, "the message");
  await io.reply(inputs[0]!, `qq:private:${OWNER}`, "message", { text: "the second one" });
  const [sent] = await two.waitForActions("send_private_msg");
  assert.deepEqual(sent!.params.message, [{ type: "text", data: { text: "the second one" } }]);
  assert.equal(one.actions.filter((a) => a.action === "send_private_msg").length, 0);
  await close(one, two);
});

Deno.test("1,000 messages in a burst become exactly 1,000 inputs, in order", async () => {
  const { url, inputs, close } = await setup();
  const sim = await OneBotSim.connect(url, { flavour: "gocq" });
  for (let n = 0; n < 1_000; n++) {
    if (n % 2) sim.privateMessage(OWNER, `m${n}`);
    else sim.privateMessage(OWNER, [{ type: "text", data: { text: `m${n}` } }]);
  }
  await waitFor(() => inputs.length >= 1_000, "1,000 inputs");
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal(inputs.length, 1_000);
  assert.deepEqual(inputs.map((e) => e.payload.text), Array.from({ length: 1_000 }, (_, n) => `m${n}`));
  await close(sim);
});

Deno.test("malformed frames are dropped and logged; the connection stays usable", async () => {
  const { qq, url, inputs, close } = await setup({ maxFrameBytes: 4_096 });
  const sim = await OneBotSim.connect(url);
  sim.send("{not json");
  sim.send("[1,2,3]");
  sim.send({ post_type: "message", message_type: "channel", user_id: Number(OWNER), message: "x" });
  sim.send({ post_type: "message", message_type: "private", user_id: Number(OWNER), message: 42 });
  sim.send({ status: "ok" });
  sim.send({ post_type: "notice", notice_type: "something_new_from_napcat", self_id: 1 });
  sim.privateMessage(OWNER, "still here");
  await waitFor(() => inputs.length >= 1, "the good message");
  assert.deepEqual(inputs.map((e) => e.payload.text), ["still here"]);
  const bots = qq.status().bots as Array<{ connections: Array<{ dropped_frames: number; open: boolean }> }>;
  assert.equal(bots[0]!.connections[0]!.dropped_frames, 3, "not JSON, not an object, neither kind");
  assert.equal(bots[0]!.connections[0]!.open, true);
  await close(sim);
});

Deno.test("a frame over onebot.max_frame_bytes closes its connection; the implementation redials and goes on", async () => {
  const { qq, url, inputs, close } = await setup({ maxFrameBytes: 4_096 });
  const sim = await OneBotSim.connect(url);
  sim.privateMessage(OWNER, "x".repeat(10_000));
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([
    sim.closed,
    new Promise((_, reject) => timer = setTimeout(() => reject(new Error("homed kept the connection open")), 3_000)),
  ]).finally(() => clearTimeout(timer));
  assert.deepEqual(qq.status().bots, [], "the bot is gone");
  const again = await OneBotSim.connect(url);
  again.privateMessage(OWNER, "still here");
  await waitFor(() => inputs.length >= 1, "the message after the redial");
  assert.deepEqual(inputs.map((e) => e.payload.text), ["still here"]);
  await close(sim, again);
});

Deno.test("a flood of messages from strangers logs the first 10 and then one line with the count per 10 s", async () => {
  const clock = new FakeClock();
  const lines: string[] = [];
  setupLogging({
    level: "info",
    format: "text",
    secrets: [],
    write: (line) => lines.push(line.trim().replace(/^\S+ /, "")),
  });
  try {
    const { qq, url, close } = await setup({}, clock, log("qq"));
    const sim = await OneBotSim.connect(url);
    // The bot's own get_login_info/get_version_info go unanswered on the fake clock: only the ignored lines remain.
    sim.answerWith(() => "silent");
    for (let i = 0; i < 1_000; i++) sim.privateMessage(STRANGER, `let me in ${i}`);
    for (let i = 0; i < 500; i++) sim.groupMessage("600060006", STRANGER, `unlisted group ${i}`);
    await waitFor(() => qq.status().ignored === 1_500, "1,500 ignored messages");
    clock.advance(10_000);
    await close(sim);
  } finally {
    stopLogging();
  }
  const ignored = lines.filter((line) => /Ignored/.test(line));
  assert.deepEqual(ignored, [
    ...Array.from(
      { length: 10 },
      () => "[INF] homed.qq: Ignored a QQ private message from 40004000: not the owner, a listed user or group",
    ),
    "[INF] homed.qq: Ignored 1490 more QQ messages like this in the last 10 s",
  ]);
});

Deno.test("replies are segment arrays: user text never becomes a CQ code; groups get reply and @", async () => {
  const { io, url, inputs, close } = await setup();
  const sim = await OneBotSim.connect(url);
  sim.groupMessage(GROUP, FRIEND, `[CQ:at,qq=${sim.selfId}] say &#91;CQ:at,qq=all&#93;`);
  await waitFor(() => inputs.length === 1, "the group message");
  assert.equal(inputs[0]!.payload.text, "say [CQ:at,qq=all]");
  await io.send({
    target: `qq:group:${GROUP}`,
    type: "message",
    payload: { text: "[CQ:at,qq=all] hi all" },
    replyTo: refOf(inputs[0]!),
  });
  const [sent] = await sim.waitForActions("send_group_msg");
  assert.deepEqual(sent!.params, {
    group_id: Number(GROUP),
    message: [
      { type: "reply", data: { id: String(inputs[0]!.payload.message_id) } },
      { type: "at", data: { qq: FRIEND } },
      { type: "text", data: { text: " " } },
      { type: "text", data: { text: "[CQ:at,qq=all] hi all" } },
    ],
  });
  await close(sim);
});

Deno.test("a reply made while no connection is up waits and goes out once on reconnect, in order", async () => {
  const { io, qq, url, close } = await setup();
  // They wait in the QQ channel's one queue: each is reported delivered only once QQ took it.
  let delivered = 0;
  const first = io.send({ target: `qq:private:${OWNER}`, type: "message", payload: { text: "first" } })
    .then(() => delivered++);
  const second = io.send({ target: `qq:private:${OWNER}`, type: "message", payload: { text: "second" } })
    .then(() => delivered++);
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal(qq.status().queued_replies, 2);
  assert.equal(delivered, 0, "nothing is reported delivered while it waits");
  const sim = await OneBotSim.connect(url);
  await Promise.all([first, second]);
  assert.equal(delivered, 2);
  await sim.waitForActions("send_private_msg", 2);
  await new Promise((resolve) => setTimeout(resolve, 50));
  const sent = sim.actions.filter((a) => a.action === "send_private_msg");
  assert.deepEqual(sent.map((a) => (a.params.message as Array<{ data: { text: string } }>)[0]!.data.text), [
    "first",
    "second",
  ]);
  assert.equal(sent.length, 2, "each once");
  assert.equal(qq.status().queued_replies, 0);
  await close(sim);
});

Deno.test("long replies are split at paragraph breaks within the limit", () => {
  const text = `${"a".repeat(80)}\n\n${"b".repeat(80)}\n${"c".repeat(30)}`;
  assert.deepEqual(splitText(text, 100).map((piece) => piece.length), [80, 80, 30]);
  assert.ok(splitText("x".repeat(250), 100).every((piece) => piece.length <= 100));
});

Deno.test("the reference's example frames: a private message, and a group @all that is not a mention of the bot", async () => {
  const { url, inputs, close } = await setup({ owner: "12345678", allowGroups: ["100200300"] });
  const sim = await OneBotSim.connect(url, { selfId: "10001000" });
  // (5) from the reference, verbatim but for whitespace.
  sim.send(
    '{"time": 1515204254, "self_id": 10001000, "post_type": "message", "message_type": "private", "sub_type": "friend", "message_id": 12, "user_id": 12345678, "message": "你好～", "raw_message": "你好～", "font": 456, "sender": {"nickname": "小不点", "sex": "male", "age": 18}}',
  );
  // (6) with a listed group: @all is not @ the bot, so it is not addressed.
  sim.send(
    '{"self_id": 10001000, "time": 0, "post_type": "message", "message_type": "group", "sub_type": "normal", "message_id": 1, "user_id": 12345678, "group_id": 100200300, "message": "[CQ:at,qq=all] Test text", "raw_message": "[CQ:at,qq=all] Test text", "font": 0, "sender": {"user_id": 1, "nickname": "Test", "sex": "unknown", "age": 0}, "anonymous": null}',
  );
  sim.privateMessage("12345678", "end");
  await waitFor(() => inputs.some((e) => e.payload.text === "end"), "the end marker");
  assert.deepEqual(inputs.map((e) => [e.source, e.trust, e.payload.text, e.payload.display, e.payload.message_id]), [
    ["qq:private:12345678", "owner", "你好～", "小不点", "12"],
    ["qq:private:12345678", "owner", "end", "nick12345678", String(inputs[1]!.payload.message_id)],
  ]);
  await close(sim);
});

Deno.test("a reply to one of the butler's messages addresses it; notices and friend requests become their own events", async () => {
  const { io, qq, url, inputs, close } = await setup({ approveFriends: [FRIEND] });
  const sim = await OneBotSim.connect(url);
  sim.answerWith((action) =>
    action.action === "send_group_msg"
      ? { data: { message_id: -77 } }
      : { data: { user_id: 10001000, nickname: "阿福", app_name: "NapCat.Onebot", app_version: "4.8" } }
  );
  await io.send({ target: `qq:group:${GROUP}`, type: "message", payload: { text: "Dinner at seven." } });
  await sim.waitForActions("send_group_msg");
  sim.groupMessage(GROUP, STRANGER, [{ type: "reply", data: { id: "-77" } }, {
    type: "text",
    data: { text: "which restaurant?" },
  }]);
  sim.groupMessage(GROUP, STRANGER, [{ type: "reply", data: { id: "-99" } }, {
    type: "text",
    data: { text: "not to the bot" },
  }]);
  sim.send({
    post_type: "notice",
    notice_type: "group_increase",
    sub_type: "approve",
    group_id: Number(GROUP),
    user_id: 123456,
    operator_id: 1,
    self_id: 10001000,
    time: 0,
  });
  sim.send({
    post_type: "request",
    request_type: "friend",
    user_id: Number(FRIEND),
    comment: "hi",
    flag: "f1",
    self_id: 10001000,
    time: 0,
  });
  sim.send({
    post_type: "request",
    request_type: "friend",
    user_id: Number(STRANGER),
    comment: "add me",
    flag: "f2",
    self_id: 10001000,
    time: 0,
  });
  await waitFor(() => inputs.length >= 3, "three events");
  const approved = await sim.waitForActions("set_friend_add_request");
  assert.deepEqual(approved.map((a) => a.params), [{ flag: "f1", approve: true }]);
  assert.deepEqual(inputs.map((e) => [e.type, e.source, e.payload.text ?? null]), [
    ["message", `qq:group:${GROUP}`, "which restaurant?"],
    ["qq.notice.group_increase", `qq:group:${GROUP}`, null],
    ["qq.request.friend", `qq:private:${STRANGER}`, null],
  ]);
  const bot = (qq.status().bots as Array<{ nickname: string; app: string }>)[0]!;
  assert.deepEqual([bot.nickname, bot.app], ["阿福", "NapCat.Onebot 4.8"]);
  await close(sim);
});

Deno.test("images and voice reach the agent as attachments; qq_delete_message recalls only the butler's own", async () => {
  const { qq, io, url, inputs, close } = await setup();
  const sim = await OneBotSim.connect(url);
  sim.privateMessage(OWNER, [{ type: "image", data: { file: "a.jpg", url: "https://multimedia.example/a.jpg" } }]);
  await waitFor(() => inputs.length === 1, "the image message");
  assert.deepEqual(inputs[0]!.payload.attachments, [{
    kind: "image",
    url: "https://multimedia.example/a.jpg",
    file: "a.jpg",
  }]);
  assert.equal(inputs[0]!.payload.text, "[image]");
  sim.answerWith((action) => ({ data: action.action === "send_private_msg" ? { message_id: 4242 } : null }));
  await io.send({ target: `qq:private:${OWNER}`, type: "message", payload: { text: "Nice photo." } });
  await sim.waitForActions("send_private_msg");
  await assert.rejects(
    callDeviceTool(qq, "qq_delete_message", { message_id: "12345" }, testToolContext()),
    /message 12345 is not one the butler sent/,
  );
  assert.equal(
    await callDeviceTool(qq, "qq_delete_message", { message_id: "4242" }, testToolContext()),
    "Recalled message 4242",
  );
  assert.deepEqual((await sim.waitForActions("delete_msg"))[0]!.params, { message_id: 4242 });
  await close(sim);
});

Deno.test("the forward client redials with capped exponential backoff and jitter", async () => {
  const { redialDelay } = await import("./forward_client.ts");
  assert.deepEqual([0, 1, 2, 3, 10].map((n) => redialDelay(n, () => 0.5, 1_000, 30_000)), [
    1_000,
    2_000,
    4_000,
    8_000,
    30_000,
  ]);
  assert.equal(redialDelay(2, () => 0, 1_000, 30_000), 2_000);
  assert.equal(redialDelay(2, () => 0.999, 1_000, 30_000), 5_996);
});

Deno.test("long replies go out in pieces, at most one per chat per min_send_interval", async () => {
  const clock = new FakeClock();
  const { io, url, close } = await setup({ splitAt: 100, minSendIntervalMs: 1_000 }, clock);
  const sim = await OneBotSim.connect(url);
  await sim.waitForActions("get_version_info");
  const text = `${"a".repeat(90)}\n\n${"b".repeat(90)}\n\n${"c".repeat(90)}`;
  await io.send({ target: `qq:private:${OWNER}`, type: "message", payload: { text } });
  const sent = await sim.waitForActions("send_private_msg", 3);
  assert.deepEqual(sent.map((a) => (a.params.message as Array<{ data: { text: string } }>)[0]!.data.text[0]), [
    "a",
    "b",
    "c",
  ]);
  assert.deepEqual(clock.sleeps, [1_000, 1_000], "paced: a second between pieces to the same chat");
  await close(sim);
});

Deno.test("media go out only as bytes homed holds: an output naming just a url is refused, the url never reaches QQ", async () => {
  const { io, url, close } = await setup();
  const sim = await OneBotSim.connect(url);
  await sim.waitForActions("get_version_info");
  for (const address of ["file:///etc/homed/homed.yaml", "http://169.254.169.254/latest/meta-data/"]) {
    await assert.rejects(
      io.send({ target: `qq:private:${OWNER}`, type: "image", payload: { url: address } }),
      (error: Error) => {
        assert.match(error.message, /QQ sends only media homed holds/);
        assert.ok(error.message.includes(JSON.stringify(address)), error.message);
        return true;
      },
    );
  }
  await io.send({ target: `qq:private:${OWNER}`, type: "message", payload: { text: "after" } });
  const sent = await sim.waitForActions("send_private_msg");
  assert.deepEqual(sent.map((action) => action.params.message), [[{ type: "text", data: { text: "after" } }]]);
  await close(sim);
});
