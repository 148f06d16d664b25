import assert from "node:assert/strict";
import type { HomeTarget, HomeTargetKind } from "../io/home_target.ts";
import { closest, resolveTargets } from "./resolve.ts";

function target(id: string, kind: HomeTargetKind, names: string[], places: string[]): HomeTarget {
  return { id, kind, names, places, state: "off", plan: () => undefined };
}

const HOUSE = [
  target("light.living", "light", ["客厅吊灯", "Living room ceiling"], ["客厅", "Living room", "一楼", "downstairs"]),
  target("light.living_floor", "light", ["落地灯", "Floor lamp"], ["客厅", "Living room", "一楼", "downstairs"]),
  target("light.study_desk", "light", ["台灯", "desk lamp"], ["书房", "Study", "一楼", "downstairs"]),
  target("light.bed_desk", "light", ["台灯", "desk lamp"], ["卧室", "Bedroom", "二楼", "upstairs"]),
  target("cover.garage_door", "cover", ["车库门", "Garage door"], ["车库", "Garage", "一楼", "downstairs"]),
  target("light.garage", "light", ["车库灯", "Garage light"], ["车库", "Garage", "一楼", "downstairs"]),
];
const ids = (resolution: ReturnType<typeof resolveTargets>) =>
  resolution.kind === "targets" ? resolution.targets.map((t) => t.id) : resolution.kind;

Deno.test("by name, narrowed by a place; two of a name without a place are a question", () => {
  assert.deepEqual(ids(resolveTargets({ name: "落地灯" }, HOUSE)), ["light.living_floor"]);
  assert.deepEqual(ids(resolveTargets({ name: "desk lamp", place: "Bedroom" }, HOUSE)), ["light.bed_desk"]);
  const ambiguous = resolveTargets({ name: "台灯" }, HOUSE);
  assert.equal(ambiguous.kind, "ambiguous");
  assert.deepEqual(ambiguous.kind === "ambiguous" && ambiguous.candidates.map((t) => t.id), [
    "light.study_desk",
    "light.bed_desk",
  ]);
  assert.deepEqual(ids(resolveTargets({ name: "台灯", all: true }, HOUSE)), ["light.study_desk", "light.bed_desk"]);
});

Deno.test("by place and kind; a kind alone is one thing or a question unless 'all'", () => {
  assert.deepEqual(ids(resolveTargets({ place: "客厅", domain: "light" }, HOUSE)), [
    "light.living",
    "light.living_floor",
  ]);
  assert.deepEqual(ids(resolveTargets({ place: "downstairs", domain: "light", all: true }, HOUSE)), [
    "light.living",
    "light.living_floor",
    "light.study_desk",
    "light.garage",
  ]);
  assert.equal(resolveTargets({ domain: "light" }, HOUSE).kind, "which");
  assert.deepEqual(ids(resolveTargets({ domain: "cover" }, HOUSE)), ["cover.garage_door"], "the only cover");
  assert.equal(resolveTargets({ domain: "light", all: true }, HOUSE).kind, "targets");
  assert.deepEqual(resolveTargets({ place: "浴室", domain: "light" }, HOUSE), {
    kind: "nothing",
    what: "light",
    place: "浴室",
  });
  assert.equal(resolveTargets({}, HOUSE).kind, "which");
});

Deno.test("an unknown name: a place said as a name means what is there (broad); else the closest names", () => {
  const garage = resolveTargets({}, HOUSE, { name: "garage" });
  assert.equal(garage.kind, "targets");
  assert.equal(garage.kind === "targets" && garage.broad, true);
  assert.deepEqual(ids(garage), ["cover.garage_door", "light.garage"]);
  const sauna = resolveTargets({}, HOUSE, { name: "kitchen lamp" });
  assert.deepEqual(sauna, { kind: "unknown_name", said: "kitchen lamp", closest: ["desk lamp", "Floor lamp"] });
  const nowhere = resolveTargets({}, HOUSE, { place: "桑拿房" });
  assert.equal(nowhere.kind, "unknown_place");
  assert.ok(nowhere.kind === "unknown_place" && nowhere.closest.includes("客厅"), "none near: some known places");
  assert.deepEqual(closest("Garage dor", ["Garage door", "Garage light", "台灯"]), ["Garage door", "Garage light"]);
});
