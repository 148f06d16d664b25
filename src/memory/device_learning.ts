/**
 * The household's devices as the smart home names them (Home Assistant's entities), taught to the memory graph: so
 * "客厅的灯" and "the living room light" both lead to `light.living_room` when someone speaks of a device.
 *
 * @module
 */

import type { GraphStore } from "./graph/graph_store.ts";

/** A device as the smart home lists it. */
export interface NamedDevice {
  /** Its id there (`light.living_room`). */
  id: string;
  name: string;
  area: string | null;
  aliases: readonly string[];
}

/** Facts recorded per transaction: a large installation has thousands of entities. */
const SLICE = 500;

/**
 * Records each device as a graph entity of type `device` whose `home_assistant_id` fact is its id, with its area, and
 * each alias as an entity of its own with the same id; all facts at `time`, from `home-assistant`. A renamed device's
 * old facts are closed (the facts hold one value at a time). In slices of {@link SLICE}, yielding to the event loop
 * after each.
 *
 * @example
 * ```ts
 * import type { GraphStore } from "./graph/graph_store.ts";
 *
 * declare const graph: GraphStore;
 * await learnDevices(graph, [{ id: "light.living_room", name: "Living room light", area: "Living room", aliases: ["客厅的灯"] }], Date.now());
 * ```
 */
export async function learnDevices(graph: GraphStore, devices: readonly NamedDevice[], time: number): Promise<void> {
  const fact = (name: string, predicate: string, object: string) => ({
    subject: { name, type: "device" },
    predicate,
    object,
    time,
    provenance: ["home-assistant"],
    single: true,
  });
  const drafts = devices.flatMap((device) => [
    fact(device.name, "home_assistant_id", device.id),
    ...(device.area ? [fact(device.name, "area", device.area)] : []),
    ...device.aliases.filter((alias) => alias.trim() !== "").map((alias) =>
      fact(alias, "home_assistant_id", device.id)
    ),
  ]).filter((draft) => draft.subject.name.trim() !== "");
  // In slices: a large installation has thousands of entities; one transaction each keeps the event loop free.
  for (let at = 0; at < drafts.length; at += SLICE) {
    graph.recordBatch(drafts.slice(at, at + SLICE));
    await new Promise((resolve) => setTimeout(resolve, 0));
  }
}
