/**
 * The Home Assistant WebSocket client against the fake HA: the auth phase, ids, HA's error codes, deadlines, the
 * keepalive ping, the frame limit, and a URL where nothing listens.
 *
 * @module
 */

import assert from "node:assert/strict";
import { getLogger } from "@logtape/logtape";
import { FakeClock } from "../../../tests/support/fake_clock.ts";
import { FakeHomeAssistant } from "../../../tests/support/fake_home_assistant.ts";
import { waitFor } from "../../../tests/support/wait.ts";
import { type Clock, systemClock } from "../../clock.ts";
import {
  HA_BACKOFF,
  HA_COMMAND_TIMEOUT_MS,
  HA_PING_INTERVAL_MS,
  HaCommandError,
  HaConnection,
  type HaConnectionOptions,
  websocketUrl,
} from "./ha_connection.ts";

function connect(ha: FakeHomeAssistant, options: Partial<HaConnectionOptions> & { clock?: Clock } = {}) {
  return new HaConnection({
    url: ha.url,
    token: ha.token,
    clock: systemClock,
    logger: getLogger(["test", "ha"]),
    random: () => 0.5,
    ...options,
  });
}

/** The HaCommandError `work` rejects with (failing when it resolves or rejects with anything else). */
async function failure(work: Promise<unknown>): Promise<HaCommandError> {
  const error = await work.then(() => undefined, (e: unknown) => e);
  assert.ok(error instanceof HaCommandError, `expected a HaCommandError, got ${error}`);
  return error;
}

Deno.test("websocketUrl turns HA's base URL into its WebSocket URL; anything else is refused naming the setting", () => {
  assert.equal(websocketUrl("http://homeassistant.local:8123"), "ws://homeassistant.local:8123/api/websocket");
  assert.equal(websocketUrl("https://example.org/ha/"), "wss://example.org/ha/api/websocket");
  assert.equal(websocketUrl("ws://10.0.0.2:8123/api/websocket"), "ws://10.0.0.2:8123/api/websocket");
  assert.throws(
    () => websocketUrl("homeassistant.local"),
    /^TypeError: smart_home\.home_assistant\.url: "homeassistant\.local" is not a URL/,
  );
  assert.throws(
    () => websocketUrl("ftp://ha"),
    /smart_home\.home_assistant\.url: "ftp:\/\/ha" is not an http\(s\):\/\/ or ws\(s\):\/\/ URL/,
  );
});

Deno.test("after auth, commands go with increasing ids and HA's errors come back carrying HA's code and message", async () => {
  await using ha = FakeHomeAssistant.start({ entities: [{ entity_id: "light.kitchen", state: "on" }] });
  const connection = connect(ha);
  await connection.start();
  assert.deepEqual([connection.state, connection.haVersion], ["connected", "2026.11.0"]);
  const states = await connection.request<Array<{ entity_id: string }>>("get_states");
  assert.deepEqual(states.result.map((state) => state.entity_id), ["light.kitchen"]);
  assert.ok(states.seq > 0, "the answer carries its frame's sequence number");
  const error = await failure(connection.command("call_service", { domain: "light", service: "dance" }));
  assert.deepEqual([error.code, error.haMessage, error.message], [
    "not_found",
    "Service light.dance not found.",
    "Home Assistant answered call_service with not_found: Service light.dance not found.",
  ]);
  const unknown = await failure(connection.command("frobnicate"));
  assert.deepEqual([unknown.code, unknown.haMessage], ["unknown_command", "Unknown command."]);
  assert.deepEqual(ha.takeViolations(), ["connection 1: sent the unknown command frobnicate"]);
  assert.deepEqual(ha.commands.map((command) => command.id), [1, 2, 3, 4], "supported_features first, then in order");
  assert.equal(ha.commands[0]?.type, "supported_features");
  await connection.stop();
  assert.equal(connection.state, "stopped");
  const closed = await failure(connection.command("ping"));
  assert.equal(closed.code, "not_connected");
});

Deno.test("a command HA does not answer fails at its deadline, and the connection stays up", async () => {
  await using ha = FakeHomeAssistant.start();
  const clock = new FakeClock();
  const connection = connect(ha, { clock });
  await connection.start();
  ha.stall("get_config");
  const pending = failure(connection.command("get_config"));
  await ha.received("get_config");
  clock.advance(HA_COMMAND_TIMEOUT_MS);
  const error = await pending;
  assert.deepEqual([error.code, error.message], ["timeout", "Home Assistant did not answer get_config within 10 s"]);
  assert.equal(connection.state, "connected", "one slow command does not drop the connection");
  await connection.stop();
});

Deno.test("the keepalive ping: answered, it goes on; unanswered, the connection is dropped and made again", async () => {
  await using ha = FakeHomeAssistant.start();
  const clock = new FakeClock();
  let connected = 0;
  const connection = connect(ha, { clock, onConnected: () => Promise.resolve(void connected++) });
  await connection.start();
  clock.advance(HA_PING_INTERVAL_MS);
  await ha.received("ping", 1);
  // A round trip after the ping: its pong (sent before this answer) has been handled, the next ping armed.
  await connection.command("get_config");
  ha.stall("ping");
  clock.advance(HA_PING_INTERVAL_MS);
  await ha.received("ping", 2);
  clock.advance(HA_COMMAND_TIMEOUT_MS);
  await waitFor(() => connection.state === "waiting", "the silent connection to be dropped");
  assert.equal(connection.lastError, "No pong from Home Assistant within 10 s");
  ha.unstall("ping");
  clock.advance(HA_BACKOFF.initialMs);
  await waitFor(() => connection.state === "connected", "the connection to come back");
  assert.deepEqual([connection.reconnects, connected, ha.socketsOpened], [1, 2, 2]);
  await connection.stop();
});

Deno.test("a frame over the frame limit closes the connection before it is read, naming the limit", async () => {
  const entities = Array.from({ length: 50 }, (_, i) => ({ entity_id: `sensor.s${i}`, state: "x".repeat(100) }));
  await using ha = FakeHomeAssistant.start({ entities });
  const connection = connect(ha, { maxFrameBytes: 2_000 });
  await connection.start();
  const error = await failure(connection.command("get_states"));
  assert.equal(error.code, "connection_lost");
  await waitFor(() => connection.state === "waiting", "the connection to wait for its next attempt");
  assert.match(
    String(connection.lastError),
    /^Frame of \d+ bytes is over the Home Assistant frame limit \(2000 bytes\)$/,
  );
  await connection.stop();
});

Deno.test("nothing listening at the URL: the first attempt fails with a message naming the setting, and start() resolves", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = listener.addr.port;
  listener.close();
  const connection = new HaConnection({
    url: `http://127.0.0.1:${port}`,
    token: "t",
    clock: systemClock,
    logger: getLogger(["test", "ha"]),
  });
  await connection.start();
  assert.equal(connection.state, "waiting");
  assert.equal(
    connection.lastError,
    `Could not open ws://127.0.0.1:${port}/api/websocket (smart_home.home_assistant.url); is Home Assistant running there?`,
  );
  await connection.stop();
});
