/**
 * A Home Assistant state burst: 1,000 `state_changed` events (20 subscribed entities × 50 changes each) from the fake
 * HA (its real WebSocket protocol) through the Home Assistant device and the IO manager into the agent's event log —
 * what the next turn's reference block is made from. It must come out as one row per entity, each with its latest
 * state and the number of changes, none lost (a row's count plus the changes the device folded together while the
 * input lane was full). Reported: the burst's time and events/s, rows, and the changes counted.
 *
 * Run: `deno task bench:ha` (writes bench/out/smart_home/ha_burst.json; `--record`: bench/smart_home/ha_burst.json).
 *
 * @module
 */

import { getLogger } from "@logtape/logtape";
import { systemClock } from "../../src/clock.ts";
import { EventLog } from "../../src/agent/core/event_log.ts";
import { IOManager } from "../../src/io/io_manager.ts";
import { RouteTable } from "../../src/io/route_table.ts";
import { HomeAssistantDevice } from "../../src/devices/home_assistant/ha_device.ts";
import { ToolRegistry } from "../../src/tools/registry.ts";
import { FakeHomeAssistant } from "../../tests/support/fake_home_assistant.ts";
import { environment, writeResults } from "../support/report.ts";

const ENTITIES = 20;
const CHANGES = 50;
const ids = Array.from({ length: ENTITIES }, (_, i) => `binary_sensor.motion_${i}`);
const ha = FakeHomeAssistant.start({
  token: "bench-token-0123456789",
  entities: ids.map((entity_id) => ({ entity_id, state: "off", attributes: { friendly_name: entity_id } })),
});
const device = new HomeAssistantDevice({
  settings: { url: ha.url, token: ha.token, domains: ["light"], confirm: [], subscribe: ["binary_sensor.*"] },
  clock: systemClock,
  logger: getLogger(["bench"]),
});
const io = new IOManager({
  clock: systemClock,
  routes: new RouteTable({}, {}, undefined),
  tools: new ToolRegistry(),
  logger: getLogger(["bench"]),
});
await io.replaceDevices([device]);
const log = new EventLog();
let inputs = 0;
let folded = 0;
const reader = (async () => {
  for (let event = await io.next(); event; event = await io.next()) {
    inputs++;
    folded += typeof event.payload.changes === "number" ? event.payload.changes - 1 : 0;
    log.record(event);
  }
})();
const status = () => device.status() as unknown as { state: string; subscribed: number };
while (status().state !== "connected" || ha.subscriptions() < 1) await new Promise((r) => setTimeout(r, 20));

const started = performance.now();
for (let round = 0; round < CHANGES; round++) {
  for (const id of ids) ha.setState(id, round % 2 ? "off" : "on", { friendly_name: id, round });
}
const expected = ENTITIES * CHANGES;
while (inputs + folded < expected && performance.now() - started < 30_000) await new Promise((r) => setTimeout(r, 5));
const seconds = (performance.now() - started) / 1000;
const rows = log.recent(100).filter((row) => row.source.startsWith("ha:"));
const counted = rows.reduce((sum, row) => sum + row.count, 0);

await io.close();
await reader;
await ha.close();

const env = await environment();
const results = {
  ...env,
  entities: ENTITIES,
  changes: expected,
  inputs,
  folded_in_device: folded,
  reference_rows: rows.length,
  counted_in_rows: counted,
  lost: expected - (inputs + folded),
  seconds: Math.round(seconds * 1000) / 1000,
  events_per_second: Math.round(expected / seconds),
};
await writeResults(new URL("./ha_burst.json", import.meta.url), results);
console.log(`Home Assistant burst (${env.commit.slice(0, 10)}, deno ${env.deno}, ${env.cpu})`);
console.table({
  burst: {
    changes: expected,
    inputs,
    folded_in_device: folded,
    reference_rows: rows.length,
    lost: results.lost,
    seconds: results.seconds,
    per_s: results.events_per_second,
  },
});
if (rows.length !== ENTITIES || results.lost !== 0) {
  console.error(`expected ${ENTITIES} rows and nothing lost`);
  Deno.exit(1);
}
