import assert from "node:assert/strict";
import { getLogger } from "@logtape/logtape";
import { FakeClock } from "../../tests/support/fake_clock.ts";
import { OneBotSim, type ReceivedAction } from "../../tests/support/onebot_sim.ts";
import { waitFor } from "../../tests/support/wait.ts";
import { ActionError, OneBotConnection } from "./connection.ts";

async function pair(clock = new FakeClock()) {
  let connection!: OneBotConnection;
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (request) => {
    const { socket, response } = Deno.upgradeWebSocket(request);
    connection = new OneBotConnection({
      socket,
      selfId: "10001000",
      role: "universal",
      clock,
      logger: getLogger(["test"]),
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
