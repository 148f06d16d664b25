/**
 * The fake Home Assistant speaks HA's protocol as HA does, frame for frame, and records what a client must not do.
 *
 * @module
 */

import assert from "node:assert/strict";
import { FakeHomeAssistant } from "./fake_home_assistant.ts";
import { within } from "./wait.ts";

/** A bare WebSocket client that keeps every frame, for checking the fake's words exactly. */
class RawClient {
  readonly frames: unknown[] = [];
  readonly closed: Promise<CloseEvent>;
  readonly #socket: WebSocket;
  #waiters: Array<() => void> = [];

  private constructor(url: string) {
    this.#socket = new WebSocket(url);
    this.#socket.addEventListener("message", (event) => {
      this.frames.push(JSON.parse(String(event.data)));
      for (const wake of this.#waiters.splice(0)) wake();
    });
    this.closed = new Promise((resolve) => this.#socket.addEventListener("close", (event) => resolve(event)));
  }

  static async open(ha: FakeHomeAssistant): Promise<RawClient> {
    const client = new RawClient(`${ha.url.replace("http", "ws")}/api/websocket`);
    await new Promise((resolve, reject) => {
      client.#socket.addEventListener("open", resolve);
      client.#socket.addEventListener("error", reject);
    });
    return client;
  }

  /** Opens a client and passes the auth phase with `token`. */
  static async authed(ha: FakeHomeAssistant, token = ha.token): Promise<RawClient> {
    const client = await RawClient.open(ha);
    await client.next();
    client.send({ type: "auth", access_token: token });
    assert.deepEqual(await client.next(), { type: "auth_ok", ha_version: "2026.11.0" });
    return client;
  }

  send(message: unknown): void {
    this.#socket.send(JSON.stringify(message));
  }

  /** The next frame not yet taken. */
  async next(): Promise<unknown> {
    await within(
      (async () => {
        while (this.frames.length === 0) await new Promise<void>((resolve) => this.#waiters.push(resolve));
      })(),
      5_000,
      "a frame from the fake Home Assistant",
    );
    return this.frames.shift();
  }

  async close(): Promise<void> {
    this.#socket.close();
    await this.closed;
  }
}

const KITCHEN = { entity_id: "light.kitchen", state: "off", attributes: { friendly_name: "Kitchen light" } };

Deno.test("the auth phase is HA's: auth_required with the version, auth_ok for the token, auth_invalid and a close for another", async () => {
  await using ha = FakeHomeAssistant.start({ entities: [KITCHEN] });
  const good = await RawClient.open(ha);
  assert.deepEqual(await good.next(), { type: "auth_required", ha_version: "2026.11.0" });
  good.send({ type: "auth", access_token: "fake-ha-token" });
  assert.deepEqual(await good.next(), { type: "auth_ok", ha_version: "2026.11.0" });
  assert.equal(ha.connections, 1);
  await good.close();

  const bad = await RawClient.open(ha);
  await bad.next();
  bad.send({ type: "auth", access_token: "wrong" });
  assert.deepEqual(await bad.next(), { type: "auth_invalid", message: "Invalid access token or password" });
  await within(bad.closed, 5_000, "the fake to close after auth_invalid");
  assert.equal(ha.authFailures, 1);
  assert.deepEqual(ha.violations, [], "a wrong token is HA's business, not a protocol violation");
});

Deno.test("a command before auth is a violation, answered with auth_invalid as HA's auth schema words it", async () => {
  await using ha = FakeHomeAssistant.start();
  const client = await RawClient.open(ha);
  await client.next();
  client.send({ id: 1, type: "get_states" });
  assert.deepEqual(await client.next(), {
    type: "auth_invalid",
    message:
      "Auth message incorrectly formatted: not a valid value for dictionary value @ data['type']. Got 'get_states'",
  });
  await within(client.closed, 5_000, "the fake to close");
  assert.deepEqual(ha.takeViolations(), ['connection 1: sent {"id":1,"type":"get_states"} before auth']);
});

Deno.test("results carry the command's id and success; ping gets pong; errors are HA's codes and messages word for word", async () => {
  await using ha = FakeHomeAssistant.start({ entities: [KITCHEN] });
  const client = await RawClient.authed(ha);
  client.send({ id: 1, type: "get_states" });
  const states = await client.next() as { id: number; type: string; success: boolean; result: unknown[] };
  assert.deepEqual([states.id, states.type, states.success], [1, "result", true]);
  assert.equal((states.result[0] as { entity_id: string }).entity_id, "light.kitchen");
  assert.match((states.result[0] as { last_changed: string }).last_changed, /^\d{4}-\d\d-\d\dT[\d:.]+\+00:00$/);
  client.send({ id: 2, type: "ping" });
  assert.deepEqual(await client.next(), { id: 2, type: "pong" });
  client.send({
    id: 3,
    type: "call_service",
    domain: "light",
    service: "dance",
    target: { entity_id: "light.kitchen" },
  });
  assert.deepEqual(await client.next(), {
    id: 3,
    type: "result",
    success: false,
    error: { code: "not_found", message: "Service light.dance not found." },
  });
  client.send({ id: 4, type: "call_service", domain: "light" });
  assert.deepEqual(await client.next(), {
    id: 4,
    type: "result",
    success: false,
    error: { code: "invalid_format", message: "required key not provided @ data['service']. Got None" },
  });
  client.send({ id: 5, type: "frobnicate" });
  assert.deepEqual(await client.next(), {
    id: 5,
    type: "result",
    success: false,
    error: { code: "unknown_command", message: "Unknown command." },
  });
  client.send({ id: 5, type: "ping" }); // 5 was never taken (unknown command): allowed, as in HA
  assert.deepEqual(await client.next(), { id: 5, type: "pong" });
  client.send({ id: 5, type: "ping" });
  assert.deepEqual(await client.next(), {
    id: 5,
    type: "result",
    success: false,
    error: { code: "id_reuse", message: "Identifier values have to increase." },
  });
  client.send({ type: "ping" });
  assert.deepEqual(await client.next(), {
    id: 0,
    type: "result",
    success: false,
    error: { code: "invalid_format", message: "Message incorrectly formatted." },
  });
  assert.deepEqual(ha.takeViolations(), [
    "connection 1: sent call_service without service",
    "connection 1: sent the unknown command frobnicate",
    "connection 1: sent id 5 after 5: ids must increase",
    'connection 1: sent a command without an integer id and a type: {"type":"ping"}',
  ]);
  await client.close();
});

Deno.test("call_service is recorded, changes the state, and its state_changed event (with the subscription's id) precedes the result", async () => {
  await using ha = FakeHomeAssistant.start({ entities: [KITCHEN] });
  const client = await RawClient.authed(ha);
  client.send({ id: 1, type: "subscribe_events", event_type: "state_changed" });
  assert.deepEqual(await client.next(), { id: 1, type: "result", success: true, result: null });
  assert.equal(ha.subscriptions("state_changed"), 1);
  client.send({
    id: 2,
    type: "call_service",
    domain: "light",
    service: "turn_on",
    target: { entity_id: "light.kitchen" },
    service_data: { brightness_pct: 40 },
  });
  const event = await client.next() as {
    id: number;
    type: string;
    event: { event_type: string; data: { entity_id: string; old_state: { state: string }; new_state: unknown } };
  };
  assert.deepEqual([event.id, event.type, event.event.event_type, event.event.data.entity_id], [
    1,
    "event",
    "state_changed",
    "light.kitchen",
  ]);
  assert.equal(event.event.data.old_state.state, "off");
  assert.deepEqual(
    (event.event.data.new_state as { state: string; attributes: Record<string, unknown> }).attributes.brightness,
    102,
  );
  const result = await client.next() as { id: number; success: boolean; result: { context: { id: string } } };
  assert.deepEqual([result.id, result.success], [2, true]);
  assert.equal(typeof result.result.context.id, "string");
  assert.deepEqual(ha.calls, [{
    domain: "light",
    service: "turn_on",
    entity_ids: ["light.kitchen"],
    service_data: { brightness_pct: 40 },
    via: "websocket",
    connection: 1,
  }]);
  assert.equal(ha.state("light.kitchen")?.state, "on");
  client.send({ id: 3, type: "unsubscribe_events", subscription: 1 });
  assert.deepEqual(await client.next(), { id: 3, type: "result", success: true, result: null });
  ha.setState("light.kitchen", "off");
  client.send({ id: 4, type: "ping" });
  assert.deepEqual(await client.next(), { id: 4, type: "pong" }, "no event after unsubscribing");
  await client.close();
});

Deno.test("after supported_features coalesce_messages, a burst arrives as one JSON array", async () => {
  await using ha = FakeHomeAssistant.start({ entities: [KITCHEN] });
  const client = await RawClient.authed(ha);
  client.send({ id: 1, type: "supported_features", features: { coalesce_messages: 1 } });
  await client.next();
  client.send({ id: 2, type: "subscribe_events", event_type: "state_changed" });
  await client.next();
  ha.setState("sensor.a", "1");
  ha.setState("sensor.b", "2");
  const burst = await client.next() as Array<{ id: number; event: { data: { entity_id: string } } }>;
  assert.ok(Array.isArray(burst), "one frame holding both events");
  assert.deepEqual(burst.map((message) => [message.id, message.event.data.entity_id]), [[2, "sensor.a"], [
    2,
    "sensor.b",
  ]]);
  await client.close();
});

Deno.test("registry lists give names, areas and aliases as HA's registries do; dropConnections closes every socket", async () => {
  await using ha = FakeHomeAssistant.start({
    entities: [{ ...KITCHEN, device_id: "d1", aliases: ["ceiling"] }],
    areas: [{ area_id: "kitchen", name: "Kitchen", aliases: ["cookhouse"] }],
    devices: [{ id: "d1", name: "Hue bulb", area_id: "kitchen" }],
  });
  const client = await RawClient.authed(ha);
  client.send({ id: 1, type: "config/area_registry/list" });
  const areas = await client.next() as { result: Array<{ area_id: string; name: string; aliases: string[] }> };
  assert.deepEqual(areas.result.map((area) => [area.area_id, area.name, area.aliases]), [["kitchen", "Kitchen", [
    "cookhouse",
  ]]]);
  client.send({ id: 2, type: "config/entity_registry/list" });
  const entities = await client.next() as { result: Array<Record<string, unknown>> };
  assert.deepEqual([entities.result[0]?.entity_id, entities.result[0]?.device_id, "aliases" in entities.result[0]!], [
    "light.kitchen",
    "d1",
    false,
  ]);
  client.send({ id: 3, type: "config/entity_registry/get_entries", entity_ids: ["light.kitchen", "light.none"] });
  const extended = await client.next() as { result: Record<string, { aliases: string[] } | null> };
  assert.deepEqual(extended.result["light.kitchen"]?.aliases, ["ceiling"]);
  assert.equal(extended.result["light.none"], null);
  const other = await RawClient.authed(ha);
  assert.equal(ha.connections, 2);
  await ha.dropConnections();
  assert.equal((await within(client.closed, 5_000, "the first socket to close")).code, 1001);
  await within(other.closed, 5_000, "the second socket to close");
  assert.equal(ha.connections, 0);
});

Deno.test("floors are listed as HA's floor_registry.py gives them, areas name their floor, setFloor fires floor_registry_updated", async () => {
  await using ha = FakeHomeAssistant.start({
    floors: [
      { floor_id: "yi_lou", name: "一楼", aliases: ["downstairs", "ground floor"], level: 0 },
      { floor_id: "er_lou", name: "二楼", aliases: ["upstairs"], level: 1, icon: "mdi:home-floor-1" },
    ],
    areas: [
      { area_id: "ke_ting", name: "客厅", aliases: ["Living room"], floor_id: "yi_lou" },
      { area_id: "wo_shi", name: "卧室", aliases: ["Bedroom"], floor_id: "er_lou" },
      { area_id: "shed", name: "Shed" },
    ],
  });
  const client = await RawClient.authed(ha);
  client.send({ id: 1, type: "config/floor_registry/list" });
  assert.deepEqual(await client.next(), {
    id: 1,
    type: "result",
    success: true,
    result: [
      {
        aliases: ["downstairs", "ground floor"],
        created_at: 0.0,
        floor_id: "yi_lou",
        icon: null,
        level: 0,
        name: "一楼",
        modified_at: 0.0,
      },
      {
        aliases: ["upstairs"],
        created_at: 0.0,
        floor_id: "er_lou",
        icon: "mdi:home-floor-1",
        level: 1,
        name: "二楼",
        modified_at: 0.0,
      },
    ],
  });
  client.send({ id: 2, type: "config/area_registry/list" });
  const areas = await client.next() as { result: Array<{ area_id: string; floor_id: string | null }> };
  assert.deepEqual(areas.result.map((area) => [area.area_id, area.floor_id]), [
    ["ke_ting", "yi_lou"],
    ["wo_shi", "er_lou"],
    ["shed", null],
  ]);
  client.send({ id: 3, type: "config/floor_registry/list", extra: 1 });
  assert.deepEqual(await client.next(), {
    id: 3,
    type: "result",
    success: false,
    error: { code: "invalid_format", message: "extra keys not allowed @ data['extra']. Got 1" },
  });
  assert.deepEqual(ha.takeViolations(), ["connection 1: sent config/floor_registry/list with the extra key extra"]);

  client.send({ id: 4, type: "subscribe_events", event_type: "floor_registry_updated" });
  await client.next();
  ha.setFloor({ floor_id: "di_xia_shi", name: "地下室", aliases: ["basement"], level: -1 });
  const event = await client.next() as { id: number; event: { event_type: string; data: unknown } };
  assert.deepEqual([event.id, event.event.event_type, event.event.data], [4, "floor_registry_updated", {
    action: "create",
    floor_id: "di_xia_shi",
  }]);
  ha.setArea({ area_id: "shed", name: "Shed", floor_id: "di_xia_shi" });
  client.send({ id: 5, type: "config/area_registry/list" });
  const moved = await client.next() as { result: Array<{ area_id: string; floor_id: string | null }> };
  assert.equal(moved.result.find((area) => area.area_id === "shed")?.floor_id, "di_xia_shi");
  assert.throws(
    () => ha.setArea({ area_id: "attic", name: "Attic", floor_id: "san_lou" }),
    /area attic is on floor san_lou, which is not in the floors option/,
  );
  await client.close();
});

Deno.test("a target's area, floor and device are resolved to the service domain's entities, as HA does", async () => {
  await using ha = FakeHomeAssistant.start({
    floors: [{ floor_id: "er_lou", name: "二楼" }],
    areas: [{ area_id: "wo_shi", name: "卧室", floor_id: "er_lou" }, {
      area_id: "yu_shi",
      name: "浴室",
      floor_id: "er_lou",
    }],
    devices: [{ id: "bulb", name: "Bulb", area_id: "yu_shi" }],
    entities: [
      { entity_id: "light.bedroom", state: "off", area_id: "wo_shi" },
      { entity_id: "switch.bedroom_fan", state: "off", area_id: "wo_shi" },
      { entity_id: "light.hidden", state: "off", area_id: "wo_shi", hidden: true },
      { entity_id: "light.bathroom", state: "off", device_id: "bulb" },
      { entity_id: "light.moved", state: "off", device_id: "bulb", area_id: "elsewhere" },
    ],
  });
  const client = await RawClient.authed(ha);
  const targets = [{ area_id: "wo_shi" }, { floor_id: "er_lou" }, { device_id: "bulb" }, {
    entity_id: "light.moved",
    area_id: ["wo_shi"],
  }];
  for (const [index, target] of targets.entries()) {
    client.send({ id: index + 1, type: "call_service", domain: "light", service: "turn_on", target });
    assert.equal((await client.next() as { success: boolean }).success, true);
  }
  assert.deepEqual(ha.calls.map((recorded) => recorded.entity_ids), [
    ["light.bedroom"],
    ["light.bedroom", "light.bathroom"],
    ["light.bathroom", "light.moved"],
    ["light.moved", "light.bedroom"],
  ]);
  await client.close();
});

Deno.test("the default services carry HA's fields: fan, cover position, thermostat, colour temperature; toggle is each domain's", async () => {
  await using ha = FakeHomeAssistant.start({
    entities: [
      { entity_id: "light.lamp", state: "off" },
      { entity_id: "fan.bedroom", state: "off" },
      { entity_id: "cover.curtain", state: "open", attributes: { current_position: 100 } },
      { entity_id: "climate.ac", state: "off", attributes: { hvac_modes: ["off", "cool", "heat"], temperature: 24 } },
      { entity_id: "media_player.tv", state: "off" },
    ],
  });
  const client = await RawClient.authed(ha);
  let id = 0;
  const call = async (domain: string, service: string, entityId: string, data?: Record<string, unknown>) => {
    client.send({
      id: ++id,
      type: "call_service",
      domain,
      service,
      target: { entity_id: entityId },
      ...(data ? { service_data: data } : {}),
    });
    return await client.next() as { success: boolean; error?: { code: string; message: string } };
  };
  assert.equal((await call("light", "turn_on", "light.lamp", { color_temp_kelvin: 2700 })).success, true);
  assert.deepEqual(
    [ha.state("light.lamp")?.attributes.color_temp_kelvin, ha.state("light.lamp")?.attributes.color_mode],
    [2700, "color_temp"],
  );
  assert.deepEqual(await call("light", "turn_on", "light.lamp", { kelvin: 2700 }), {
    id,
    type: "result",
    success: false,
    error: { code: "invalid_format", message: "extra keys not allowed @ data['kelvin']. Got 2700" },
  });
  assert.equal((await call("fan", "turn_on", "fan.bedroom", { percentage: 40 })).success, true);
  assert.deepEqual([ha.state("fan.bedroom")?.state, ha.state("fan.bedroom")?.attributes.percentage], ["on", 40]);
  assert.equal((await call("cover", "set_cover_position", "cover.curtain", { position: 30 })).success, true);
  assert.equal(ha.state("cover.curtain")?.attributes.current_position, 30);
  assert.equal((await call("cover", "toggle", "cover.curtain")).success, true);
  assert.deepEqual([ha.state("cover.curtain")?.state, ha.state("cover.curtain")?.attributes.current_position], [
    "closed",
    0,
  ]);
  assert.equal((await call("climate", "turn_on", "climate.ac")).success, true);
  assert.equal(ha.state("climate.ac")?.state, "cool");
  assert.equal((await call("climate", "set_temperature", "climate.ac", { temperature: 22.5 })).success, true);
  assert.equal(ha.state("climate.ac")?.attributes.temperature, 22.5);
  assert.equal((await call("media_player", "toggle", "media_player.tv")).success, true);
  assert.equal(ha.state("media_player.tv")?.state, "on");
  assert.deepEqual(ha.calls.map((recorded) => `${recorded.domain}.${recorded.service}`), [
    "light.turn_on",
    "fan.turn_on",
    "cover.set_cover_position",
    "cover.toggle",
    "climate.turn_on",
    "climate.set_temperature",
    "media_player.toggle",
  ]);
  await client.close();
});

Deno.test("REST: /api/states and a service call with the bearer token; without it 401 and a violation", async () => {
  await using ha = FakeHomeAssistant.start({ entities: [KITCHEN] });
  const auth = { authorization: `Bearer ${ha.token}` };
  const api = await fetch(`${ha.url}/api/`, { headers: auth });
  assert.deepEqual(await api.json(), { message: "API running." });
  const states = await fetch(`${ha.url}/api/states`, { headers: auth });
  assert.deepEqual((await states.json() as Array<{ entity_id: string }>).map((state) => state.entity_id), [
    "light.kitchen",
  ]);
  const missing = await fetch(`${ha.url}/api/states/light.nowhere`, { headers: auth });
  assert.deepEqual([missing.status, await missing.json()], [404, { message: "Entity not found." }]);
  const call = await fetch(`${ha.url}/api/services/light/turn_on`, {
    method: "POST",
    headers: { ...auth, "content-type": "application/json" },
    body: JSON.stringify({ entity_id: "light.kitchen" }),
  });
  assert.deepEqual((await call.json() as Array<{ state: string }>).map((state) => state.state), ["on"]);
  assert.deepEqual(ha.calls.map((recorded) => [recorded.via, recorded.service, recorded.entity_ids]), [[
    "rest",
    "turn_on",
    ["light.kitchen"],
  ]]);
  const refused = await fetch(`${ha.url}/api/states`);
  assert.deepEqual([refused.status, await refused.text()], [401, "401: Unauthorized"]);
  assert.deepEqual(ha.takeViolations(), ["REST GET /api/states without the right bearer token"]);
});

Deno.test("close() fails the test on a violation nobody took", async () => {
  const ha = FakeHomeAssistant.start();
  const client = await RawClient.authed(ha);
  client.send({ id: 1, type: "frobnicate" });
  await client.next();
  await assert.rejects(ha.close(), /the fake Home Assistant saw frames that break the protocol/);
  await client.closed;
});
