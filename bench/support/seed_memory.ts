/**
 * Fills a memory folder through the facade, for benchmarks that need a daemon with a long past: `documents`
 * household exchanges (English and Chinese, rooms, devices, people, times — so common query words have long posting
 * lists) and `entities` distinct graph subjects with a fact each. Seeded: the same arguments give the same folder.
 *
 * @module
 */

import { getLogger } from "@logtape/logtape";
import { FakeClock } from "../../tests/support/fake_clock.ts";
import { openMemory } from "../../src/memory/memory.ts";
import { seededRandom } from "./seeded_random.ts";

const ROOMS = ["living room", "kitchen", "bedroom", "study", "bathroom", "balcony", "garage", "hall"];
const ROOMS_ZH = ["客厅", "厨房", "卧室", "书房", "浴室", "阳台", "车库", "走廊"];
const DEVICES = ["lamp", "heater", "kettle", "router", "fan", "washing machine", "fridge", "speaker", "curtain"];
const DEVICES_ZH = ["灯", "暖气", "水壶", "路由器", "风扇", "洗衣机", "冰箱", "音箱", "窗帘"];
const PEOPLE = ["Alice", "Bob", "Grandma", "Tom", "Lily", "the owner"];
const DOINGS = [
  "switched the {d} in the {r} on",
  "says the {d} in the {r} makes a noise",
  "wants the {d} in the {r} checked on Saturday",
  "moved the {d} to the {r}",
  "asked when the {d} in the {r} was last cleaned",
];
const DOINGS_ZH = ["把{r}的{d}关了", "说{r}的{d}坏了", "想周末修一下{r}的{d}", "问{r}的{d}开着吗"];

/** What was seeded and how long it took. */
export interface SeedReport {
  documents: number;
  entities: number;
  facts: number;
  ms: number;
}

/**
 * Seeds `dir` (a memory folder: `data_dir/memory`).
 *
 * @example
 * ```ts
 * import { join } from "node:path";
 *
 * const dataDir = await Deno.makeTempDir({ prefix: "homed-bench-" });
 * await seedMemory(join(dataDir, "memory"), { documents: 100_000, entities: 50_000 });
 * ```
 */
export async function seedMemory(
  dir: string,
  options: { documents: number; entities: number; seed?: number; start?: number },
): Promise<SeedReport> {
  const started = performance.now();
  const random = seededRandom(options.seed ?? 20261130);
  const clock = new FakeClock({ start: options.start ?? Date.UTC(2026, 0, 1) });
  const memory = await openMemory({ dir, clock, logger: getLogger(["bench", "seed"]) });
  const step = Math.max(1, Math.floor((300 * 86_400_000) / Math.max(options.documents, 1)));
  for (let i = 0; i < options.documents; i++) {
    const person = random.pick(PEOPLE);
    const zh = random.next() < 0.4;
    const k = random.int(0, ROOMS.length - 1), j = random.int(0, DEVICES.length - 1);
    const said = zh
      ? `${person}${random.pick(DOINGS_ZH).replace("{r}", ROOMS_ZH[k]!).replace("{d}", DEVICES_ZH[j]!)}（第${i}条）`
      : `${person} ${random.pick(DOINGS).replace("{r}", ROOMS[k]!).replace("{d}", DEVICES[j]!)} (note ${i}).`;
    memory.keepDocument({
      lines: [{ speaker: person, text: said }, { speaker: "butler", text: zh ? "好的，记下了。" : "Noted." }],
      time: clock.now(),
      provenance: [`seed-${i}`],
    });
    clock.advance(step);
  }
  const graph = memory.graph();
  const batch = 1_000;
  let facts = 0;
  for (let i = 0; i < options.entities; i += batch) {
    const drafts = [];
    for (let n = i; n < Math.min(i + batch, options.entities); n++) {
      drafts.push({
        subject: { name: `${random.pick(DEVICES)} ${n}`, type: "device" },
        predicate: "located_in",
        object: random.pick(ROOMS),
        time: clock.now(),
        provenance: [`seed-entity-${n}`],
        single: true,
      });
    }
    graph.recordBatch(drafts);
    facts += drafts.length;
  }
  const report = {
    documents: memory.documents().size,
    entities: graph.counts().entities,
    facts,
    ms: Math.round(performance.now() - started),
  };
  await memory.close();
  return report;
}
