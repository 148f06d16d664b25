import assert from "node:assert/strict";
import { getLogger, type Logger } from "@logtape/logtape";
import { log, setupLogging, stopLogging } from "../../log/logging.ts";
import { FakeClock } from "../../../tests/support/fake_clock.ts";
import { OneBotSim, type ReceivedAction } from "../../../tests/support/onebot_sim.ts";
import { waitFor } from "../../../tests/support/wait.ts";
import { ActionError, OneBotConnection } from "./connection.ts";

async function pair(clock = new FakeClock(), logger: Logger = getLogger(["test"])) {
  let connection!: OneBotConnection;
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (request) => {
    const { socket, response } = Deno.upgradeWebSocket(request);
    connection = new OneBotConnection({
      socket,
      selfId: "10001000",
      role: "universal",
      clock,
      logger,
      actionTimeoutMs: 30_000,
      maxFrameBytes: 65_536,
      onEvent: () => {},
      onClose: () => {},
    });
    return response;
  });
  const sim = await OneBotSim.connect(`ws://127.0.0.1:${server.addr.port}/`);
  await waitFor(() => connection?.open === true, "the server side to open");
  const close = async () => {
    await sim.close();
    await server.shutdown();
  };
  return { connection, sim, clock, close };
}

Deno.test("responses are matched by echo even out of order; extra frames for a settled echo are ignored", async () => {
  const { connection, sim, close } = await pair();
  const held: ReceivedAction[] = [];
  sim.answerWith((action) => {
    held.push(action);
    return "silent";
  });
  const first = connection.call("get_login_info", {});
  const second = connection.call("get_status", {});
  await waitFor(() => held.length === 2, "two actions");
  sim.reply(held[1]!.echo, { data: { online: true, good: true } });
  sim.reply(held[0]!.echo, { data: { user_id: 10001000, nickname: "阿福" } });
  sim.reply(held[0]!.echo, { data: "a second frame, NapCat stream style" });
  assert.deepEqual(await first, { user_id: 10001000, nickname: "阿福" });
  assert.deepEqual(await second, { online: true, good: true });
  assert.equal(typeof held[0]!.echo, "string");
  await close();
});

Deno.test("failed retcodes, unknown actions and silence become clear errors", async () => {
  const { connection, sim, clock, close } = await pair();
  sim.answerWith((action) =>
    action.action === "send_group_msg"
      ? { failed: { retcode: 100, wording: "发送失败，请尝试重发" } }
      : action.action === "upload_group_file"
      ? { failed: { retcode: 1404 } }
      : "silent"
  );
  await assert.rejects(
    connection.call("send_group_msg", { group_id: 1, message: [] }),
    (error) =>
      error instanceof ActionError && error.retcode === 100 &&
      error.message === "QQ action send_group_msg failed (retcode 100): 发送失败，请尝试重发",
  );
  await assert.rejects(
    connection.call("upload_group_file", {}),
    /^ActionError: The QQ implementation does not support the action upload_group_file \(retcode 1404\)$/,
  );
  const silent = connection.call("get_status", {});
  await waitFor(() => sim.actions.some((a) => a.action === "get_status"), "the silent action");
  clock.advance(30_000);
  await assert.rejects(
    silent,
    /^ActionError: QQ action get_status got no answer within 30s \(onebot\.action_timeout\)$/,
  );
  await close();
});

Deno.test("a connection with no frame for 3× its heartbeat interval is closed; pending actions fail at once", async () => {
  const { connection, sim, clock, close } = await pair();
  sim.heartbeat(5_000);
  await waitFor(() => connection.heartbeatIntervalMs === 5_000, "the heartbeat");
  sim.answerWith(() => "silent");
  const pending = connection.call("get_status", {});
  assert.equal(connection.closeIfStale(clock.now() + 15_000), false);
  assert.equal(connection.closeIfStale(clock.now() + 15_001), true);
  await assert.rejects(pending, /closed before get_status was answered/);
  await sim.closed;
  await close();
});

/** Log lines written while `run` runs, without their time stamps. */
async function logged(run: () => Promise<void>): Promise<string[]> {
  const lines: string[] = [];
  setupLogging({
    level: "info",
    format: "text",
    secrets: [],
    write: (line) => lines.push(line.trim().replace(/^\S+ /, "")),
  });
  try {
    await run();
  } finally {
    stopLogging();
  }
  return lines;
}

Deno.test("a flood of dropped frames logs the first 10 and then one line with the count per 10 s", async () => {
  const lines = await logged(async () => {
    const { connection, sim, clock, close } = await pair(new FakeClock(), log("qq"));
    for (let i = 0; i < 1_000; i++) sim.send(`{not json ${i}`);
    await waitFor(() => connection.droppedFrames === 1_000, "1,000 dropped frames");
    clock.advance(10_000);
    await close();
  });
  assert.deepEqual(lines, [
    ...Array.from(
      { length: 10 },
      (_, i) => `[WRN] homed.qq: QQ 10001000: dropped a frame that is not JSON: {not json ${i}`,
    ),
    "[WRN] homed.qq: QQ 10001000: 990 more dropped frames like this in the last 10 s",
  ]);
});

/** A server whose one connection has `maxFrameBytes`, and a plain WebSocket client of it. */
async function plainPair(maxFrameBytes: number, logger: Logger) {
  let connection: OneBotConnection | undefined;
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (request) => {
    const { socket, response } = Deno.upgradeWebSocket(request);
    connection = new OneBotConnection({
      socket,
      selfId: "10001000",
      role: "universal",
      clock: new FakeClock(),
      logger,
      actionTimeoutMs: 30_000,
      maxFrameBytes,
      onEvent: () => {},
      onClose: () => {},
    });
    return response;
  });
  const client = new WebSocket(`ws://127.0.0.1:${server.addr.port}/`);
  const closed = new Promise<CloseEvent>((resolve) => client.addEventListener("close", resolve));
  await new Promise((resolve) => client.addEventListener("open", resolve, { once: true }));
  await waitFor(() => connection?.open === true, "the server side to open");
  return { connection: connection!, client, closed, shutdown: () => server.shutdown() };
}

/** A heartbeat frame of exactly `bytes` bytes in UTF-8. */
function heartbeatOf(bytes: number): string {
  const frame = (pad: string) =>
    JSON.stringify({ post_type: "meta_event", meta_event_type: "heartbeat", interval: 5_000, pad });
  return frame("x".repeat(bytes - new TextEncoder().encode(frame("")).length));
}

Deno.test("a frame over onebot.max_frame_bytes, counted in UTF-8 bytes, closes the connection with 1009 naming the limit", async () => {
  const lines = await logged(async () => {
    const { connection, client, closed, shutdown } = await plainPair(65_536, log("qq"));
    client.send(heartbeatOf(65_536)); // exactly at the limit: taken
    await waitFor(() => connection.heartbeatIntervalMs === 5_000, "the heartbeat at the limit");
    // 30,000 characters, 90,073 bytes: over the limit only when bytes are counted.
    const big = JSON.stringify({
      post_type: "message",
      message_type: "private",
      user_id: 1,
      message: "汉".repeat(30_000),
    });
    assert.equal(new TextEncoder().encode(big).length, 90_073);
    client.send(big);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const event = await Promise.race([
      closed,
      new Promise<undefined>((resolve) => timer = setTimeout(() => resolve(undefined), 3_000)),
    ]).finally(() => clearTimeout(timer));
    if (!event) {
      client.close();
      await closed;
    }
    await shutdown();
    assert.ok(event, "homed closed the connection");
    assert.equal(event.code, 1009);
    assert.equal(event.reason, "Frame of 90073 bytes is over onebot.max_frame_bytes (65536)");
    assert.equal(connection.open, false);
    assert.equal(connection.droppedFrames, 1);
  });
  assert.deepEqual(lines, [
    "[WRN] homed.qq: QQ 10001000: a frame of 90073 bytes is over onebot.max_frame_bytes (65536); closing the connection (1009)",
  ]);
});
