import assert from "node:assert/strict";
import { getLogger } from "@logtape/logtape";
import { OneBotSim } from "../../tests/support/onebot_sim.ts";
import { waitFor } from "../../tests/support/wait.ts";
import { systemClock } from "../clock.ts";
import type { InputEvent } from "../io/event.ts";
import { IOManager } from "../io/io_manager.ts";
import { RouteTable } from "../io/route_table.ts";
import { ToolRegistry } from "../tools/registry.ts";
import { QqDevice, type QqSettings, splitText } from "./qq_device.ts";

const OWNER = "20002000";
const FRIEND = "30003000";
const STRANGER = "40004000";
const GROUP = "500050005";

/** A QQ device behind a real WebSocket server on loopback, and an IOManager to read its inputs. */
async function setup(settings: Partial<QqSettings> = {}) {
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
    clock: systemClock,
    logger: getLogger(["test"]),
  });
  const io = new IOManager({
    clock: systemClock,
    routes: new RouteTable({}, {}, undefined),
    tools: new ToolRegistry(),
    logger: getLogger(["test"]),
  });
  await io.replaceDevices([qq]);
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (request) => {
    const selfId = request.headers.get("x-self-id")!; // before the upgrade: Deno closes the request then
    const { socket, response } = Deno.upgradeWebSocket(request);
    qq.attach(socket, selfId, "universal");
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

Deno.test("malformed and oversize frames are dropped and logged; the connection stays usable", async () => {
  const { qq, url, inputs, close } = await setup({ maxFrameBytes: 4_096 });
  const sim = await OneBotSim.connect(url);
  sim.send("{not json");
  sim.send("[1,2,3]");
  sim.send({ post_type: "message", message_type: "channel", user_id: Number(OWNER), message: "x" });
  sim.send({ post_type: "message", message_type: "private", user_id: Number(OWNER), message: 42 });
  sim.send({ status: "ok" });
  sim.privateMessage(OWNER, "x".repeat(10_000));
  sim.send({ post_type: "notice", notice_type: "something_new_from_napcat", self_id: 1 });
  sim.privateMessage(OWNER, "still here");
  await waitFor(() => inputs.length >= 1, "the good message");
  assert.deepEqual(inputs.map((e) => e.payload.text), ["still here"]);
  const bots = qq.status().bots as Array<{ connections: Array<{ dropped_frames: number; open: boolean }> }>;
  assert.equal(bots[0]!.connections[0]!.dropped_frames, 4, "not JSON, not an object, neither kind, too big");
  assert.equal(bots[0]!.connections[0]!.open, true);
  await close(sim);
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
    replyTo: inputs[0]!.id,
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
  await io.send({ target: `qq:private:${OWNER}`, type: "message", payload: { text: "first" } });
  await io.send({ target: `qq:private:${OWNER}`, type: "message", payload: { text: "second" } });
  assert.equal(qq.status().queued_replies, 2);
  const sim = await OneBotSim.connect(url);
  const sent = await sim.waitForActions("send_private_msg", 2);
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.deepEqual(sim.actions.map((a) => (a.params.message as Array<{ data: { text: string } }>)[0]!.data.text), [
    "first",
    "second",
  ]);
  assert.equal(sent.length, 2);
  assert.equal(qq.status().queued_replies, 0);
  await close(sim);
});

Deno.test("long replies are split at paragraph breaks within the limit", () => {
  const text = `${"a".repeat(80)}\n\n${"b".repeat(80)}\n${"c".repeat(30)}`;
  assert.deepEqual(splitText(text, 100).map((piece) => piece.length), [80, 80, 30]);
  assert.ok(splitText("x".repeat(250), 100).every((piece) => piece.length <= 100));
});
