import assert from "node:assert/strict";
import type { HomeAction } from "../../io/home_target.ts";
import { haTargets } from "./ha_targets.ts";

function view(id: string, state: string, attributes: Record<string, unknown> = {}) {
  return {
    id,
    name: id,
    aliases: ["alias"],
    area: { name: "客厅", aliases: ["Living room"] },
    floor: { name: "一楼", aliases: ["downstairs"] },
    current: () => ({ state, attributes }),
  };
}

Deno.test("each kind plans its own services; what does not apply is undefined; names and places in order", () => {
  const [light, cover, lock, climate, sensor] = haTargets([
    view("light.a", "on", { min_color_temp_kelvin: 2700, max_color_temp_kelvin: 6500 }),
    view("cover.b", "closed"),
    view("lock.c", "locked"),
    view("climate.d", "cool", { current_temperature: 23.5, min_temp: 16, max_temp: 30 }),
    view("sensor.e", "48", { device_class: "humidity", unit_of_measurement: "%" }),
    view("camera.f", "idle"),
  ]);
  assert.deepEqual(light!.names, ["light.a", "alias"]);
  assert.deepEqual(light!.places, ["客厅", "Living room", "一楼", "downstairs"]);
  const plan = (target: typeof light, action: HomeAction) => target!.plan(action);
  assert.deepEqual(plan(light, { kind: "brightness", percent: 40 }), {
    tool: "ha_call_service",
    args: { domain: "light", service: "turn_on", entity_id: "light.a", data: { brightness_pct: 40 } },
  });
  assert.deepEqual(plan(light, { kind: "color_temp", kelvin: 8000 }), {
    refused: "colour temperature: 8000 K is out of range 2700–6500 K",
    range: { setting: "colour temperature", value: 8000, min: 2700, max: 6500, unit: "K" },
  });
  assert.equal(plan(light, { kind: "position", percent: 50 }), undefined);
  assert.deepEqual(plan(cover, { kind: "turn_on" }), {
    tool: "ha_call_service",
    args: { domain: "cover", service: "open_cover", entity_id: "cover.b" },
  });
  assert.equal(
    (plan(cover, { kind: "position", percent: 101 }) as { refused: string }).refused,
    "position: 101% is out of range 0–100%",
  );
  const service = (action: HomeAction) => {
    const planned = plan(lock, action);
    return planned && "args" in planned ? planned.args.service : undefined;
  };
  assert.equal(service({ kind: "open" }), "unlock", "打开前门: the owner's yes guards it as any unlock");
  assert.equal(service({ kind: "close" }), "lock");
  assert.deepEqual(plan(climate, { kind: "temperature", degrees: 22.5 }), {
    tool: "ha_call_service",
    args: { domain: "climate", service: "set_temperature", entity_id: "climate.d", data: { temperature: 22.5 } },
  });
  assert.match((plan(climate, { kind: "temperature", degrees: 40 }) as { refused: string }).refused, /16–30/);
  assert.deepEqual(climate!.reading, { value: 23.5, unit: "°" });
  assert.equal(climate!.measures, "temperature");
  assert.equal(sensor!.measures, "humidity");
  assert.equal(sensor!.unit, "%");
  assert.equal(plan(sensor, { kind: "turn_on" }), undefined, "a sensor is read, never switched");
  assert.equal(haTargets([view("camera.f", "idle")]).length, 0, "a domain local intents do not know is left out");
});
