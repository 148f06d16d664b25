// What the graph's reads by name and by speaker cost on a store that holds many entities: told without timing, by
// SQLite's plan of every statement they execute (`tests/support/query_plan.ts`) — none may read a whole table of the
// graph, whose rows grow with everything the household ever said (a year: 48,000 entities, 54,000 facts). Covered:
// the profile section of a turn's reference block (run in every turn, its member list re-read once a minute), the
// console's reads of an entity (`facts(name)`, neighbours), the people endpoints' reads, and forgetting an entity.

import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { join } from "node:path";
import { getLogger } from "@logtape/logtape";
import { FakeClock } from "../../../tests/support/fake_clock.ts";
import { recordStatements, wholeTableScans } from "../../../tests/support/query_plan.ts";
import { openMemoryDb } from "../database.ts";
import { MemoryService } from "../memory_service.ts";
import { Profiles } from "../profile/profiles.ts";
import type { FactDraft } from "./fact.ts";
import { GraphStore } from "./graph_store.ts";

const START = Date.UTC(2026, 10, 1, 9);
const SPEAKERS = ["Lin", "Tom", "Wei", "奶奶"];
const ROOMS = ["kitchen", "garage", "study", "attic", "balcony", "bedroom"];
const THINGS = 1_500;

/** A graph of many entities: things moved about by four speakers (some in a private chat), merged spellings, people. */
function fill(path: string): void {
  const db = openMemoryDb(path);
  const graph = new GraphStore(db);
  const drafts: FactDraft[] = [];
  for (let n = 1; n <= THINGS; n++) {
    const saidBy = SPEAKERS[n % SPEAKERS.length]!;
    const heard = n % 7 === 0
      ? [{ event: `e${n}`, source: `qq:private:${saidBy}`, sender: saidBy, trust: "household" as const }]
      : [];
    for (const [i, name] of [`storage box ${n}`, ...(n % 10 === 0 ? [`Storage Box ${n}`] : [])].entries()) {
      drafts.push({
        subject: { name, type: "thing" },
        predicate: "is in",
        object: ROOMS[(n + i) % ROOMS.length]!,
        time: START + n * 60_000 + i,
        provenance: [`e${n}`],
        single: true,
        saidBy,
        trust: "household",
        heard,
      });
    }
  }
  for (const [i, person] of SPEAKERS.entries()) {
    drafts.push({
      subject: { name: person, type: "person" },
      predicate: "allergic to",
      object: i % 2 ? "peanuts" : "penicillin",
      time: START,
      provenance: [`p${i}`],
      single: false,
      saidBy: SPEAKERS[(i + 1) % SPEAKERS.length]!,
      trust: "household",
    });
  }
  drafts.push({
    subject: { name: "Tom", type: "person" },
    predicate: "brother of",
    object: "Lin",
    time: START,
    provenance: ["o1"],
    single: false,
    saidBy: "owner",
    trust: "owner",
  });
  graph.recordBatch(drafts);
  db.close();
}

Deno.test("the graph's reads by name and by speaker — a turn's profiles, the console's, the people pages' — use indexes only", async () => {
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-graph-reads-" });
  const path = join(dir, "memory.db");
  fill(path);
  const clock = new FakeClock({ start: START + 86_400_000 });
  const memory = new MemoryService({ dir, clock, logger: getLogger(["test"]) });
  await memory.start();
  try {
    const lin = { sender: "Lin", trust: "household" } as const;
    const owner = { sender: "owner", trust: "owner" } as const;
    const profiles = new Profiles(memory.profileSource(), () => [{ id: "owner", trust: "owner" }]);
    await memory.inspectGraph("nobody"); // open, its start-up checks done
    const turn = { text: "Does Tom know where storage box 40 is?", source: "http", trust: "household" as const };

    // The first turn reads the member list (once a minute after it), then the sender's and Tom's facts.
    const perTurn = await recordStatements(async () => {
      const reference = await memory.reference({ ...turn, sender: "Lin", time: clock.now() }, []);
      assert.match(reference?.body ?? "", /Tom — .*peanuts/s, "the turn's profile section names Tom's allergy");
    });
    const console = await recordStatements(async () => {
      assert.equal((await memory.inspectGraph("Storage Box 40", lin)).length, 2, "by its alias, with its history");
      assert.equal((await memory.inspectGraph("storage box 42", lin)).length, 0, "heard in Tom's private chat");
      assert.ok((await memory.inspectNeighbors("Lin", lin)).nodes.length >= 1);
      assert.deepEqual((await profiles.visibleMembers(owner)).map((member) => member.id), ["owner", ...SPEAKERS]);
      assert.ok(await profiles.profile("Tom", owner));
      assert.ok(await profiles.profile("Lin", lin));
      assert.ok((await profiles.factsAbout("Wei", lin)).length);
      assert.equal(await memory.forgetEntity("storage box 41"), 1);
    });

    const db = new DatabaseSync(path, { readOnly: true });
    try {
      const graphs = (sql: Set<string>) => [...sql].filter((s) => /\b(entities|triples|entity_aliases)\b/.test(s));
      assert.ok(graphs(perTurn).some((sql) => /WITH RECURSIVE speaker/.test(sql)), "the turn read the member list");
      assert.ok(graphs(console).some((sql) => /entity_aliases/.test(sql)), "the console read by name and alias");
      assert.deepEqual(graphs(perTurn).flatMap((sql) => wholeTableScans(db, sql)), [], "a turn's profile section");
      assert.deepEqual(
        graphs(console).flatMap((sql) => wholeTableScans(db, sql)),
        [],
        "the console's and people's reads",
      );
    } finally {
      db.close();
    }
  } finally {
    await memory.stop();
    await Deno.remove(dir, { recursive: true });
  }
});
