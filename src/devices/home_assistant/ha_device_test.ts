/**
 * The Home Assistant device behind an IOManager and a ToolRegistry, against the fake HA: its tools, the owner's
 * confirmation, state events, reconnects, a wrong token, learning entities, the audit list, and a burst.
 *
 * @module
 */

import assert from "node:assert/strict";
import { getLogger } from "@logtape/logtape";
import { FakeClock } from "../../../tests/support/fake_clock.ts";
import { type FakeEntity, FakeHomeAssistant } from "../../../tests/support/fake_home_assistant.ts";
import { testToolContext } from "../../../tests/support/tool_context.ts";
import { waitFor, within } from "../../../tests/support/wait.ts";
import { type Clock, systemClock } from "../../clock.ts";
import type { Trust } from "../../identity/trust.ts";
import type { InputEvent } from "../../io/event.ts";
import { IOManager } from "../../io/io_manager.ts";
import { RouteTable } from "../../io/route_table.ts";
import type { Confirmations } from "../../policy/confirmations.ts";
import { ToolPolicy } from "../../policy/tool_policy.ts";
import { ToolRegistry } from "../../tools/registry.ts";
import { HA_AUTH_BACKOFF, HA_BACKOFF } from "./ha_connection.ts";
import {
  HomeAssistantDevice,
  type HomeAssistantSettings,
  type HomeAssistantStatus,
  type LearnedEntity,
} from "./ha_device.ts";

const ENTITIES: FakeEntity[] = [
  { entity_id: "light.kitchen", state: "off", attributes: { friendly_name: "Kitchen light" }, area_id: "kitchen" },
  {
    entity_id: "light.living",
    state: "on",
    attributes: { friendly_name: "Living room lamp", brightness: 180 },
    device_id: "lamp",
  },
  {
    entity_id: "switch.kettle",
    state: "off",
    attributes: { friendly_name: "Kettle" },
    area_id: "kitchen",
    aliases: ["tea maker"],
  },
  {
    entity_id: "sensor.kitchen_temperature",
    state: "21.5",
    attributes: { friendly_name: "Kitchen temperature", unit_of_measurement: "°C" },
    area_id: "kitchen",
  },
  { entity_id: "lock.front_door", state: "locked", attributes: { friendly_name: "Front door" } },
  { entity_id: "cover.garage", state: "closed", attributes: { friendly_name: "Garage door" } },
  { entity_id: "cover.blinds", state: "open", attributes: { friendly_name: "Blinds", current_position: 100 } },
  { entity_id: "binary_sensor.front_door", state: "off", attributes: { friendly_name: "Front door contact" } },
  { entity_id: "binary_sensor.hall_motion", state: "off", attributes: { friendly_name: "Hall motion" } },
  { entity_id: "vacuum.robby", state: "docked", attributes: { friendly_name: "Robby" } },
  { entity_id: "light.secret", state: "off", attributes: { friendly_name: "Hidden light" }, hidden: true },
];

function fakeHa(token?: string): FakeHomeAssistant {
  return FakeHomeAssistant.start({
    entities: structuredClone(ENTITIES),
    areas: [
      { area_id: "kitchen", name: "Kitchen", aliases: ["cookhouse"] },
      { area_id: "living", name: "Living room" },
    ],
    devices: [{ id: "lamp", name: "Floor lamp", area_id: "living" }],
    ...(token ? { token } : {}),
  });
}

/** The device against `ha` behind an IOManager and a ToolRegistry, with every input it hands in collected. */
async function setup(
  ha: FakeHomeAssistant,
  options: {
    settings?: Partial<HomeAssistantSettings>;
    clock?: Clock;
    learnEntities?: (entities: LearnedEntity[]) => void;
    perSender?: number;
    /** Inputs are not taken until `read()` is called. */
    paused?: boolean;
  } = {},
) {
  const clock = options.clock ?? systemClock;
  // The registry's gate, as the daemon has it, with the owner's question recorded instead of sent.
  const asked: Array<Parameters<Confirmations["ask"]>[0]> = [];
  const confirmations = {
    ask: (request: Parameters<Confirmations["ask"]>[0]) => {
      asked.push(request);
      return Promise.resolve(`Waiting for the owner to confirm: ${request.summary}`);
    },
  };
  const device = new HomeAssistantDevice({
    settings: {
      url: ha.url,
      token: ha.token,
      domains: ["light", "switch", "cover"],
      confirm: ["lock", "alarm_control_panel", "cover.garage"],
      subscribe: ["binary_sensor.*door*"],
      ...options.settings,
    },
    ...(options.learnEntities ? { learnEntities: options.learnEntities } : {}),
    clock,
    logger: getLogger(["test", "ha"]),
    random: () => 0.5,
  });
  const tools = new ToolRegistry({ gate: new ToolPolicy({ rules: {}, confirmations, clock }) });
  const io = new IOManager({
    clock,
    routes: new RouteTable({}, {}, undefined),
    tools,
    logger: getLogger(["test"]),
    ...(options.perSender ? { perSender: options.perSender } : {}),
  });
  await io.replaceDevices([device]);
  const inputs: InputEvent[] = [];
  let reader: Promise<void> | undefined;
  const read = () => {
    reader ??= (async () => {
      for (let event = await io.next(); event; event = await io.next()) inputs.push(event);
    })();
  };
  if (!options.paused) read();
  const status = () => device.status() as unknown as HomeAssistantStatus;
  const call = (name: string, args: Record<string, unknown>, trust: Trust = "household", source = "qq:private:2") =>
    tools.call(name, JSON.stringify(args), testToolContext(source, trust));
  const close = async () => {
    await within(io.close(), 10_000, "the Home Assistant device to stop");
    read();
    await reader;
  };
  return { device, io, tools, inputs, asked, status, call, read, close };
}

Deno.test("ha_states lists entities in compact lines, filtered by area (name or alias), domain and query; hidden ones never", async () => {
  await using ha = fakeHa();
  const { call, status, close } = await setup(ha);
  assert.equal(status().state, "connected");
  assert.equal(status().ha_version, "2026.11.0");
  assert.equal(status().entities, ENTITIES.length);
  const all = await call("ha_states", {});
  assert.equal(all.ok, true, all.content);
  assert.match(all.content, /^10 entities:\n/);
  assert.doesNotMatch(all.content, /light\.secret/);
  const kitchen = await call("ha_states", { area: "kitchen" });
  assert.equal(
    kitchen.content,
    [
      "3 entities:",
      'light.kitchen "Kitchen light" off [Kitchen]',
      'sensor.kitchen_temperature "Kitchen temperature" 21.5 °C [Kitchen]',
      'switch.kettle "Kettle" off [Kitchen]',
    ].join("\n"),
  );
  assert.equal(
    (await call("ha_states", { area: "Cookhouse", domain: "switch" })).content.split("\n")[1],
    'switch.kettle "Kettle" off [Kitchen]',
  );
  const lights = await call("ha_states", { domain: "light" });
  assert.equal(
    lights.content,
    '2 entities:\nlight.kitchen "Kitchen light" off [Kitchen]\nlight.living "Living room lamp" on (brightness 180) [Living room]',
    "the lamp's area comes from its device",
  );
  assert.equal((await call("ha_states", { query: "tea" })).content, '1 entity:\nswitch.kettle "Kettle" off [Kitchen]');
  const nowhere = await call("ha_states", { area: "Attic" });
  assert.equal(nowhere.ok, false);
  assert.match(nowhere.content, /No Home Assistant area is called "Attic"; areas: Kitchen, Living room/);
  await close();
});

Deno.test("ha_call_service light.turn_on runs once at HA and says what HA answered; the audit list has who asked", async () => {
  await using ha = fakeHa();
  const { device, call, close } = await setup(ha);
  const result = await call("ha_call_service", {
    domain: "light",
    service: "turn_on",
    entity_id: "light.kitchen",
    data: { brightness_pct: 40 },
  });
  assert.equal(result.ok, true, result.content);
  assert.equal(
    result.content,
    "Home Assistant ran light.turn_on on light.kitchen; light.kitchen is now on (brightness 102)",
  );
  assert.deepEqual(
    ha.calls.map((recorded) => [recorded.domain, recorded.service, recorded.entity_ids, recorded.service_data]),
    [
      ["light", "turn_on", ["light.kitchen"], { brightness_pct: 40 }],
    ],
  );
  const [entry] = device.actions();
  assert.deepEqual(
    [entry?.turn, entry?.source, entry?.sender, entry?.trust, entry?.entity_id, entry?.outcome, entry?.confirm],
    ["e1", "qq:private:2", "a household", "household", "light.kitchen", "done", false],
  );
  assert.deepEqual(entry?.steps.map((step) => step.outcome), ["done"]);
  await close();
});

Deno.test("calls outside domains, to unknown entities or services, across domains or with targets in data are refused before HA", async () => {
  await using ha = fakeHa();
  const { device, call, close } = await setup(ha);
  const refusals: Array<[Record<string, unknown>, RegExp]> = [
    [
      { domain: "vacuum", service: "start", entity_id: "vacuum.robby" },
      /Domain "vacuum" is not in smart_home\.home_assistant\.domains \(light, switch, cover; only with the owner's yes: lock, alarm_control_panel, cover\.garage\)/,
    ],
    [
      { domain: "light", service: "turn_on", entity_id: "light.attic" },
      /Home Assistant has no entity "light\.attic"; light entities: light\.kitchen, light\.living$/,
    ],
    [
      { domain: "light", service: "dance", entity_id: "light.kitchen" },
      /Home Assistant has no service light\.dance; light services: toggle, turn_off, turn_on/,
    ],
    [{ domain: "light", service: "turn_on", entity_id: "switch.kettle" }, /switch\.kettle is not a light entity/],
    [
      { domain: "light", service: "turn_on", entity_id: "light.kitchen", data: { entity_id: "lock.front_door" } },
      /data may not hold entity_id/,
    ],
  ];
  for (const [args, expected] of refusals) {
    const result = await call("ha_call_service", args);
    assert.equal(result.ok, false, JSON.stringify(args));
    assert.match(result.content, expected);
  }
  assert.deepEqual(ha.calls, [], "nothing reached Home Assistant");
  assert.deepEqual(device.actions().map((entry) => entry.outcome), Array(5).fill("refused"));
  await close();
});

Deno.test("lock.unlock is held by the registry's gate with its summary and reaches HA only when run() is called, once", async () => {
  await using ha = fakeHa();
  const { device, asked, call, status, close } = await setup(ha);
  const result = await call(
    "ha_call_service",
    { domain: "lock", service: "unlock", entity_id: "lock.front_door" },
    "owner",
    "http",
  );
  assert.equal(result.ok, true, result.content);
  assert.equal(result.content, "Waiting for the owner to confirm: Unlock lock.front_door (lock.unlock)");
  assert.equal(asked.length, 1);
  assert.equal(asked[0]!.summary, "Unlock lock.front_door (lock.unlock)");
  assert.deepEqual(asked[0]!.turn, { eventId: "e1", source: "http", sender: "owner", trust: "owner" });
  assert.equal(ha.calls.length, 0, "not called before the owner's yes");
  assert.equal(device.actions().length, 0, "the device has not seen it yet");

  const done = await asked[0]!.run();
  assert.equal(done, "Home Assistant ran lock.unlock on lock.front_door; lock.front_door is now unlocked");
  assert.equal(ha.calls.length, 1);
  await assert.rejects(asked[0]!.run(), /already ran once/);
  assert.equal(ha.calls.length, 1, "a second run() calls nothing");
  const [entry] = device.actions();
  assert.deepEqual(entry?.steps.map((step) => step.outcome), ["confirmed", "done"]);
  assert.deepEqual([entry?.confirm, entry?.outcome, entry?.sender], [true, "done", "owner"]);

  // A confirm entity in an allowed domain asks too; its neighbour in the same domain does not.
  await call("ha_call_service", { domain: "cover", service: "open_cover", entity_id: "cover.garage" });
  assert.equal(asked[1]?.summary, "Open cover.garage (cover.open_cover)");
  const blinds = await call("ha_call_service", { domain: "cover", service: "close_cover", entity_id: "cover.blinds" });
  assert.match(blinds.content, /^Home Assistant ran cover\.close_cover on cover\.blinds/);
  assert.deepEqual(ha.calls.map((recorded) => recorded.entity_ids[0]), ["lock.front_door", "cover.blinds"]);
  assert.equal(status().actions, 2);
  await close();
});

Deno.test("a guest is refused by the tools' trust (through the registry): no question to the owner, nothing at HA", async () => {
  await using ha = fakeHa();
  const { device, asked, call, close } = await setup(ha);
  for (
    const args of [
      { domain: "light", service: "turn_on", entity_id: "light.kitchen" },
      { domain: "lock", service: "unlock", entity_id: "lock.front_door" },
    ]
  ) {
    const result = await call("ha_call_service", args, "guest", "qq:group:9");
    assert.equal(result.ok, false);
    assert.match(result.content, /is for household members and the owner/);
  }
  assert.match((await call("ha_states", {}, "guest", "qq:group:9")).content, /household members and the owner/);
  assert.deepEqual([asked.length, ha.calls.length, device.actions().length], [0, 0, 0]);
  await close();
});

Deno.test("a call HA refuses fails with HA's code and message, and the audit list says failed", async () => {
  await using ha = fakeHa();
  const { device, call, close } = await setup(ha);
  const result = await call("ha_call_service", {
    domain: "light",
    service: "turn_on",
    entity_id: "light.kitchen",
    data: { sparkle: true },
  });
  assert.equal(result.ok, false);
  assert.match(
    result.content,
    /light\.turn_on on light\.kitchen failed: Home Assistant answered call_service with invalid_format: extra keys not allowed @ data\['sparkle'\]\. Got True/,
  );
  assert.equal(device.actions()[0]?.outcome, "failed");
  await close();
});

Deno.test("state changes of subscribe entities become ha.state inputs, one source per entity; others and attribute-only ones do not", async () => {
  await using ha = fakeHa();
  const { inputs, status, close } = await setup(ha);
  assert.equal(status().subscribed, 1, "binary_sensor.*door* matches binary_sensor.front_door only");
  ha.setState("binary_sensor.hall_motion", "on");
  ha.setState("binary_sensor.front_door", "off", { friendly_name: "Front door contact", battery: 90 });
  ha.setState("binary_sensor.front_door", "on");
  // Frames are handled in order: once the door's input is in, the two changes before it were handled too.
  await waitFor(() => inputs.length >= 1, "the door's ha.state input");
  assert.equal(inputs.length, 1);
  const [door] = inputs;
  assert.deepEqual([door?.source, door?.sender, door?.trust, door?.type], [
    "ha:binary_sensor.front_door",
    "home-assistant",
    "household",
    "ha.state",
  ]);
  const payload = door!.payload;
  assert.deepEqual([payload.entity_id, payload.name, payload.from, payload.to], [
    "binary_sensor.front_door",
    "Front door contact",
    "off",
    "on",
  ]);
  assert.match(String(payload.at), /\+00:00$/);
  await close();
});

Deno.test("a `turns` entity's change is a message to the butler (a rule), not only a record", async () => {
  await using ha = fakeHa();
  const { inputs, close } = await setup(ha, { settings: { subscribe: [], turns: ["binary_sensor.front_door"] } });
  ha.setState("binary_sensor.hall_motion", "on");
  ha.setState("binary_sensor.front_door", "on");
  await waitFor(() => inputs.length >= 1, "the door's message");
  assert.equal(inputs.length, 1, "only the rule's entity");
  const [door] = inputs;
  assert.deepEqual([door?.source, door?.type, door?.trust], ["ha:binary_sensor.front_door", "message", "household"]);
  assert.match(
    String(door!.payload.text),
    /^Home Assistant: Front door contact \(binary_sensor\.front_door\) changed from off to on at /,
  );
  await close();
});

Deno.test("HA dropping every socket: the device reconnects after its backoff, subscribes again, and hands in what changed meanwhile", async () => {
  await using ha = fakeHa();
  const clock = new FakeClock();
  const { inputs, status, call, close } = await setup(ha, { clock });
  assert.equal(ha.subscriptions("state_changed"), 1);
  await ha.dropConnections();
  await waitFor(() => status().state === "waiting", "the device to wait before reconnecting");
  assert.equal(status().next_retry_at, new Date(clock.now() + HA_BACKOFF.initialMs).toISOString());
  ha.setState("binary_sensor.front_door", "on"); // while nobody is connected
  const stale = await call("ha_states", { domain: "lock" });
  assert.equal(
    stale.content,
    "Home Assistant is not connected (Home Assistant closed the connection (code 1001)); as last seen at " +
      `${new Date(clock.now()).toISOString()}:\n1 entity:\nlock.front_door "Front door" locked`,
  );
  clock.advance(HA_BACKOFF.initialMs);
  await waitFor(() => status().state === "connected", "the device to reconnect");
  assert.equal(status().reconnects, 1);
  assert.equal(ha.subscriptions("state_changed"), 1, "subscribed again, once");
  await waitFor(() => inputs.length === 1, "the change missed while away");
  assert.deepEqual([inputs[0]?.payload.from, inputs[0]?.payload.to], ["off", "on"]);
  ha.setState("binary_sensor.front_door", "off");
  await waitFor(() => inputs.length === 2, "a change after the reconnect");
  assert.deepEqual([inputs[1]?.payload.from, inputs[1]?.payload.to], ["on", "off"]);
  await close();
});

Deno.test("a wrong token: the status names smart_home.home_assistant.token, no retry for minutes, the IOManager keeps running", async () => {
  await using ha = fakeHa("the-right-token");
  const clock = new FakeClock();
  const { io, status, call, close } = await setup(ha, { clock, settings: { token: "a-wrong-token" } });
  assert.equal(status().state, "auth_failed");
  assert.match(
    String(status().last_error),
    /^Home Assistant refused the access token in smart_home\.home_assistant\.token \(Invalid access token or password\)/,
  );
  assert.doesNotMatch(JSON.stringify(status()), /a-wrong-token/, "the token is never shown");
  assert.equal(status().next_retry_at, new Date(clock.now() + HA_AUTH_BACKOFF.initialMs).toISOString());
  assert.deepEqual(io.channels().map((channel) => channel.name), ["ha"]);
  const states = await call("ha_states", {});
  assert.equal(states.ok, false);
  assert.match(
    states.content,
    /not connected yet \(Home Assistant refused the access token in smart_home\.home_assistant\.token/,
  );
  clock.advance(HA_BACKOFF.maxMs);
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal(ha.socketsOpened, 1, "no retry within the minute");
  assert.equal(ha.authFailures, 1);
  await close();
});

Deno.test("learnEntities gets names, areas and aliases, and again when the registry changes them", async () => {
  await using ha = fakeHa();
  const learned: LearnedEntity[][] = [];
  const { close } = await setup(ha, { learnEntities: (entities) => void learned.push(entities) });
  await waitFor(() => learned.length === 1, "the first learnEntities call");
  const byId = new Map(learned[0]!.map((entity) => [entity.id, entity]));
  assert.deepEqual(byId.get("switch.kettle"), {
    id: "switch.kettle",
    name: "Kettle",
    area: "Kitchen",
    aliases: ["tea maker"],
  });
  assert.deepEqual(byId.get("light.living"), {
    id: "light.living",
    name: "Living room lamp",
    area: "Living room",
    aliases: [],
  });
  assert.equal(byId.has("light.secret"), false, "hidden entities are not learned");
  ha.updateEntity("light.kitchen", { aliases: ["big light"], area_id: "living" });
  await waitFor(() => learned.length === 2, "learnEntities after the registry changed");
  assert.deepEqual(learned[1]!.find((entity) => entity.id === "light.kitchen"), {
    id: "light.kitchen",
    name: "Kitchen light",
    area: "Living room",
    aliases: ["big light"],
  });
  await close();
});

Deno.test("a burst of 1,000 changes while the input queue is full waits coalesced per entity, each entity's latest state last", async () => {
  const doors = Array.from({ length: 20 }, (_, i) => ({
    entity_id: `binary_sensor.door_${i}`,
    state: "off",
    attributes: { friendly_name: `Door ${i}` },
  }));
  await using ha = FakeHomeAssistant.start({ entities: doors });
  const { inputs, read, status, close } = await setup(ha, { perSender: 5, paused: true });
  for (let round = 0; round < 50; round++) {
    for (const door of doors) ha.setState(door.entity_id, round % 2 === 0 ? "on" : "off");
  }
  await waitFor(
    () => status().coalesced > 0 && status().events + status().coalesced + status().waiting_events === 1_000,
    "every change to be counted",
  );
  read();
  await waitFor(() => status().waiting_events === 0, "the waiting changes to go in");
  await waitFor(() => inputs.length === status().events, "the reader to take them all");
  assert.ok(inputs.length < 100, `${inputs.length} inputs for 1,000 changes`);
  for (const door of doors) {
    const last = inputs.filter((input) => input.source === `ha:${door.entity_id}`).at(-1);
    assert.equal(last?.payload.to, "off", `${door.entity_id} ends off`);
  }
  await close();
});

Deno.test("home targets: names, aliases, area (its own or its device's) and floor with their aliases; hidden left out; kept current", async () => {
  await using ha = FakeHomeAssistant.start({
    entities: structuredClone(ENTITIES),
    floors: [{ floor_id: "ground", name: "Ground floor", aliases: ["downstairs"], level: 0 }],
    areas: [
      { area_id: "kitchen", name: "Kitchen", aliases: ["cookhouse"], floor_id: "ground" },
      { area_id: "living", name: "Living room" },
    ],
    devices: [{ id: "lamp", name: "Floor lamp", area_id: "living" }],
  });
  const { device, close } = await setup(ha);
  try {
    const byId = () => new Map(device.homeTargets().map((target) => [target.id, target]));
    const kettle = byId().get("switch.kettle")!;
    assert.deepEqual(kettle.names, ["Kettle", "tea maker"]);
    assert.deepEqual(kettle.places, ["Kitchen", "cookhouse", "Ground floor", "downstairs"]);
    assert.deepEqual(byId().get("light.living")!.places, ["Living room"], "the area through its device");
    assert.equal(byId().has("light.secret"), false, "hidden");
    assert.equal(byId().has("vacuum.robby"), false, "a domain local intents do not act on");
    assert.equal(byId().get("light.kitchen")!.state, "off");
    ha.setState("light.kitchen", "on");
    await waitFor(() => byId().get("light.kitchen")!.state === "on", "the state read at each use");
    ha.updateEntity("switch.kettle", { aliases: ["tea maker", "水壶"] });
    await waitFor(() => byId().get("switch.kettle")!.names.includes("水壶"), "a new alias after the registry event");
    ha.setFloor({ floor_id: "ground", name: "一楼", aliases: ["downstairs"], level: 0 });
    await waitFor(() => byId().get("switch.kettle")!.places.includes("一楼"), "a renamed floor after its event");
  } finally {
    await close();
  }
});
