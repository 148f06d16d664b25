import assert from "node:assert/strict";
import { join } from "node:path";
import { getLogger } from "@logtape/logtape";
import { FakeClock } from "../../tests/support/fake_clock.ts";
import { ALICE, OWNER, type RouteApi, routeApi } from "../../tests/support/route_api.ts";
import { ContextWindow } from "../context/context_window.ts";
import type { Trust } from "../identity/trust.ts";
import { MemoryService } from "../memory/memory_service.ts";
import { Job } from "../service/job.ts";
import { memoryRoutes } from "./memory_routes.ts";

const VISITOR = "visitor-token-0123456789";
const T0 = Date.UTC(2026, 10, 1, 9);
const HOUR = 3_600_000;
const FILLER = " It rains a lot here in the autumn, and the garden gets muddy.".repeat(8);

type Json = Record<string, unknown>;
type FactBody = {
  id: number;
  object: string;
  holds: boolean;
  valid_to: string | null;
  provenance: string[];
  sources: Json[];
  corrected_by?: string;
};

/** A memory service over a temp dir (real SQLite and journal), a context window and the API with its memory routes. */
async function open(dir: string, clock: FakeClock) {
  const memory = new MemoryService({ dir, clock, logger: getLogger(["test"]) });
  await memory.start();
  const context = new ContextWindow({ maxEntries: 30, entries: memory.restored, onEvict: (e) => memory.archive(e) });
  memory.keep(context);
  const app = routeApi([memoryRoutes(memory)], {
    maxBodyBytes: 65_536,
    people: { visitor: { token: VISITOR, trust: "guest" } },
  });
  return { memory, context, app };
}

/** A turn as the daemon has it: in layer 1 and journaled by the after-turn hook; a minute passes. */
async function say(
  parts: { memory: MemoryService; context: ContextWindow },
  clock: FakeClock,
  n: number,
  who: { sender: string; trust: Trust },
  text: string,
) {
  const origin = { eventId: `e${n}`, time: clock.now(), source: "http", ...who };
  parts.context.appendTurn([
    { role: "user", content: `[via http, from ${who.sender}, trust ${who.trust}] ${text}` },
    { role: "assistant", content: "Noted." },
  ], origin);
  await parts.memory.afterTurn({ ...origin, text, reply: "Noted." });
  clock.advance(60_000);
}

/** A memory with four facts distilled by the rule fallback, and e1's exchange kept as a document. */
async function setup() {
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-memory-routes-" });
  const clock = new FakeClock({ start: T0 });
  const parts = await open(dir, clock);
  const owner = { sender: "owner", trust: "owner" as const };
  const alice = { sender: "alice", trust: "household" as const };
  await say(parts, clock, 1, owner, "The spare key is under the blue flowerpot.");
  await say(parts, clock, 2, alice, `Leo is in the garden.${FILLER}`);
  await say(parts, clock, 3, owner, "I like Leo.");
  await say(parts, clock, 4, alice, "My name is Lily.");
  await parts.memory.jobs()[0]!.run(new AbortController().signal);
  // e1's exchange as a document while it is still in layer 1 (as if it had just been evicted).
  parts.memory.archive(parts.context.records().filter((entry) => entry.eventId === "e1"));
  await parts.memory.recall("flush the archive"); // the document is kept once the stores are open
  return { dir, clock, ...parts };
}

async function request(app: RouteApi, token: string, method: string, path: string, body?: string) {
  const response = await app.call(method, path, token, body);
  return { status: response.status, body: await response.json() as Json };
}

const get = (app: RouteApi, token: string, path: string) => request(app, token, "GET", path);

async function graph(app: RouteApi, entity: string): Promise<FactBody[]> {
  const { status, body } = await get(app, OWNER, `/api/memory/graph?q=${encodeURIComponent(entity)}`);
  assert.equal(status, 200);
  return body.facts as FactBody[];
}

async function cleanup(memory: MemoryService, dir: string) {
  await memory.stop();
  await Deno.remove(dir, { recursive: true });
}

Deno.test("memory reads: entities, graph facts with ids and sources, neighbours, documents with coldness", async () => {
  const { dir, clock, memory, app } = await setup();
  try {
    const all = await get(app, OWNER, "/api/memory/entities");
    assert.equal(all.status, 200);
    const seen = new Date(T0 + 3 * 60_000).toISOString(); // a batch's facts carry its last utterance's time
    assert.deepEqual(all.body, {
      query: "",
      entities: [
        { name: "Leo", type: "thing", mentions: 1, facts: 1, last_seen: seen },
        { name: "alice", type: "person", mentions: 1, facts: 1, last_seen: seen },
        { name: "owner", type: "person", mentions: 1, facts: 1, last_seen: seen },
        { name: "spare key", type: "thing", mentions: 1, facts: 1, last_seen: seen },
      ],
    });
    const some = await get(app, OWNER, "/api/memory/entities?q=KEY&k=1");
    assert.deepEqual(some.body, {
      query: "KEY",
      entities: [{ name: "spare key", type: "thing", mentions: 1, facts: 1, last_seen: seen }],
    });
    assert.deepEqual((await get(app, OWNER, "/api/memory/entities?q=50%25")).body, { query: "50%", entities: [] });

    const [key] = await graph(app, "spare key");
    assert.deepEqual(key, {
      id: key!.id,
      subject: "spare key",
      type: "thing",
      predicate: "location",
      object: "under blue flowerpot",
      holds: true,
      valid_from: seen,
      valid_to: null,
      provenance: ["e1"],
      said_by: "owner",
      trust: "owner",
      sources: [{
        event_id: "e1",
        time: new Date(T0).toISOString(),
        sender: "owner",
        source: "http",
        trust: "owner",
        text: "The spare key is under the blue flowerpot.",
      }],
    });
    assert.ok(Number.isInteger(key!.id) && key!.id > 0);
    const [leo] = await graph(app, "Leo");
    const text = String(leo!.sources[0]!.text);
    assert.equal([...text].length, 300, "a long message is cut to 300 characters");
    assert.ok(text.startsWith("Leo is in the garden. It rains") && text.endsWith("…"), text);
    assert.equal(leo!.sources[0]!.trust, "household");

    // Provenance that names no message (the smart home's facts) resolves to just its id.
    await memory.learnDevices([{ id: "light.hall", name: "Hall light", area: null, aliases: [] }]);
    assert.deepEqual((await graph(app, "Hall light"))[0]!.sources, [{ event_id: "home-assistant" }]);

    const neighbors = await get(app, OWNER, "/api/memory/neighbors?q=Leo");
    assert.deepEqual(neighbors, {
      status: 200,
      body: {
        center: "Leo",
        nodes: [{ name: "Leo", type: "thing", mentions: 1 }, { name: "owner", type: "person", mentions: 1 }],
        edges: [{ from: "owner", to: "Leo", predicate: "likes", holds: true }],
      },
    });
    assert.deepEqual((await get(app, OWNER, "/api/memory/neighbors?q=owner")).body, {
      center: "owner",
      nodes: [{ name: "owner", type: "person", mentions: 1 }, { name: "Leo", type: "thing", mentions: 1 }],
      edges: [{ from: "owner", to: "Leo", predicate: "likes", holds: true }],
    });
    assert.deepEqual((await get(app, OWNER, "/api/memory/neighbors?q=nobody")).body, {
      center: "nobody",
      nodes: [],
      edges: [],
    });

    clock.advance(36 * HOUR);
    const documents = await get(app, OWNER, `/api/memory/documents?q=${encodeURIComponent("spare key")}`);
    assert.equal(documents.status, 200);
    const [document] = (documents.body as { documents: Json[] }).documents;
    assert.equal(document!.text, "owner: The spare key is under the blue flowerpot.\nbutler: Noted.");
    assert.deepEqual(document!.provenance, ["e1"]);
    assert.ok(Math.abs(Number(document!.coldness) - 0.5) < 0.01, `36 of 72 hours cold: ${document!.coldness}`);

    const bad = await get(app, OWNER, "/api/memory/entities?k=0");
    assert.deepEqual(bad.body, {
      error: { code: "bad_request", message: 'Query parameter "k" must be a whole number from 1 to 100, got "0"' },
    });
  } finally {
    await cleanup(memory, dir);
  }
});

Deno.test("a household member's memory pages hold only what they may read: not the owner's private words", async () => {
  const { dir, memory, app } = await setup();
  try {
    // e1 and e3 are the owner's on http (a private chat): their facts and document are the owner's alone.
    const entities = (await get(app, ALICE, "/api/memory/entities")).body.entities as Json[];
    assert.deepEqual(entities.map((entity) => entity.name), ["Leo", "alice"]);
    assert.deepEqual((await get(app, ALICE, "/api/memory/graph?q=spare%20key")).body, {
      entity: "spare key",
      facts: [],
    });
    assert.deepEqual((await get(app, ALICE, "/api/memory/neighbors?q=Leo")).body, {
      center: "Leo",
      nodes: [{ name: "Leo", type: "thing", mentions: 1 }],
      edges: [],
    });
    assert.deepEqual((await get(app, ALICE, "/api/memory/neighbors?q=owner")).body, {
      center: "owner",
      nodes: [],
      edges: [],
    });
    const documents = await get(app, ALICE, `/api/memory/documents?q=${encodeURIComponent("spare key")}`);
    assert.deepEqual(documents.body.documents, []);
    const owners = await get(app, OWNER, `/api/memory/documents?q=${encodeURIComponent("spare key")}`);
    assert.equal((owners.body.documents as Json[])[0]?.source, "http");
  } finally {
    await cleanup(memory, dir);
  }
});

Deno.test("the owner runs the memory job now (POST /api/memory/job): what was said is distilled; 503 before it is scheduled", async () => {
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-memory-routes-" });
  const clock = new FakeClock({ start: T0 });
  const parts = await open(dir, clock);
  const [spec] = parts.memory.jobs();
  const job = new Job({
    name: "memory.distill",
    everyMs: 30 * 60_000,
    run: spec!.run,
    clock,
    logger: getLogger(["test"]),
  });
  let scheduled: Job | undefined;
  const app = routeApi([memoryRoutes(parts.memory, { job: () => scheduled })], { maxBodyBytes: 65_536 });
  try {
    await say(parts, clock, 1, { sender: "owner", trust: "owner" }, "The spare key is under the blue flowerpot.");
    assert.deepEqual(await request(app, OWNER, "POST", "/api/memory/job"), {
      status: 503,
      body: {
        error: {
          code: "unavailable",
          message: "The memory job is not scheduled yet (homed is starting); try again",
        },
      },
    });
    assert.deepEqual(await graph(app, "spare key"), [], "nothing distilled before the job runs");
    scheduled = job;
    const { status, body } = await request(app, OWNER, "POST", "/api/memory/job");
    assert.equal(status, 200);
    assert.equal(body.done, true);
    assert.deepEqual([(body.job as Json).runs, (body.job as Json).last_error], [1, null]);
    assert.deepEqual((await graph(app, "spare key")).map((fact) => fact.object), ["under blue flowerpot"]);
  } finally {
    await job.stop();
    await cleanup(parts.memory, dir);
  }
});

Deno.test("a guest may not read memory; a household member may not change it (403 naming the trust needed)", async () => {
  const { dir, memory, app } = await setup();
  try {
    const [key] = await graph(app, "spare key");
    for (const path of ["entities", "graph?q=Leo", "neighbors?q=Leo", "documents?q=key"]) {
      assert.deepEqual(await get(app, VISITOR, `/api/memory/${path}`), {
        status: 403,
        body: {
          error: {
            code: "forbidden",
            message: 'Inspecting memory needs trust household or owner; this request came from "visitor" (trust guest)',
          },
        },
      }, path);
    }
    const changes: Array<[string, string, string?]> = [
      ["POST", `/api/memory/facts/${key!.id}/correct`, JSON.stringify({ object: "in the drawer" })],
      ["DELETE", `/api/memory/facts/${key!.id}`],
      ["DELETE", "/api/memory/documents/d1"],
      ["POST", "/api/memory/forget", JSON.stringify({ event_ids: ["e1"] })],
      ["POST", "/api/memory/job"],
    ];
    for (const [method, path, body] of changes) {
      for (const [token, name, trust] of [[ALICE, "alice", "household"], [VISITOR, "visitor", "guest"]]) {
        assert.deepEqual(await request(app, token!, method, path, body), {
          status: 403,
          body: {
            error: {
              code: "forbidden",
              message: `Changing memory needs trust owner; this request came from "${name}" (trust ${trust})`,
            },
          },
        }, `${method} ${path} as ${name}`);
      }
    }
    assert.deepEqual((await graph(app, "spare key")).map((fact) => [fact.object, fact.holds]), [[
      "under blue flowerpot",
      true,
    ]]);
  } finally {
    await cleanup(memory, dir);
  }
});

Deno.test("correcting a fact closes it and holds the new value with corrected_by, in the graph and recall, across a restart", async () => {
  let { dir, clock, memory, app, context } = await setup();
  try {
    const [key] = await graph(app, "spare key");
    clock.advance(HOUR);
    const now = new Date(clock.now()).toISOString();
    const corrected = await request(
      app,
      OWNER,
      "POST",
      `/api/memory/facts/${key!.id}/correct`,
      JSON.stringify({ object: "in the kitchen drawer" }),
    );
    assert.equal(corrected.status, 200);
    const { superseded, fact } = corrected.body as { superseded: FactBody; fact: FactBody };
    assert.deepEqual(superseded, { ...key, holds: false, valid_to: now });
    assert.deepEqual(fact, {
      id: fact.id,
      subject: "spare key",
      type: "thing",
      predicate: "location",
      object: "in the kitchen drawer",
      holds: true,
      valid_from: now,
      valid_to: null,
      provenance: ["corrected by owner"],
      said_by: "owner",
      trust: "owner",
      sources: [{ event_id: "corrected by owner" }],
      corrected_by: "owner",
    });
    assert.notEqual(fact.id, key!.id);
    assert.deepEqual(await graph(app, "spare key"), [fact, superseded], "holding first, the old one closed");
    const recalled = await memory.recall("spare key", 5);
    const facts = recalled.filter((item) => item.kind === "fact").map((item) => item.text);
    assert.deepEqual(facts, ["spare key (thing) location: in the kitchen drawer"]);

    const conflict = await request(
      app,
      OWNER,
      "POST",
      `/api/memory/facts/${key!.id}/correct`,
      JSON.stringify({ object: "on the hook" }),
    );
    assert.equal(conflict.status, 409);
    assert.match(String((conflict.body.error as Json).message), new RegExp(`^Fact ${key!.id} no longer holds`));
    const same = await request(
      app,
      OWNER,
      "POST",
      `/api/memory/facts/${fact.id}/correct`,
      JSON.stringify({ object: "in the kitchen drawer" }),
    );
    assert.deepEqual(same.body, {
      error: { code: "conflict", message: `Fact ${fact.id} already says "in the kitchen drawer"` },
    });

    // Durable: a new service over the same files shows the same.
    await memory.stop();
    ({ memory, app, context } = await open(dir, clock));
    assert.deepEqual(await graph(app, "spare key"), [fact, superseded]);
    assert.equal(context.size, 8, "layer 1 restored");
  } finally {
    await cleanup(memory, dir);
  }
});

Deno.test("bad bodies and ids: 400 naming the field and the value, 404 naming the id", async () => {
  const { dir, memory, app } = await setup();
  try {
    const [key] = await graph(app, "spare key");
    const correct = `/api/memory/facts/${key!.id}/correct`;
    const refusal = async (method: string, path: string, body: string | undefined, status: number, message: string) => {
      assert.deepEqual(await request(app, OWNER, method, path, body), {
        status,
        body: { error: { code: status === 404 ? "not_found" : "bad_request", message } },
      }, `${method} ${path} ${body}`);
    };
    await refusal("POST", correct, "{", 400, 'The body is not JSON: "{"');
    await refusal("POST", correct, "[]", 400, 'The body must be a JSON object with "object", got []');
    await refusal("POST", correct, "{}", 400, 'Field "object" is missing');
    await refusal("POST", correct, '{"object": 42}', 400, 'Field "object" must be a string, got 42');
    await refusal(
      "POST",
      correct,
      '{"object": "  "}',
      400,
      'Field "object" is empty ("  "); it needs 1 to 500 characters',
    );
    await refusal(
      "POST",
      correct,
      JSON.stringify({ object: "x".repeat(501) }),
      400,
      `Field "object" has 501 characters ("${"x".repeat(56)}... (503 characters)); allowed: at most 500`,
    );
    await refusal(
      "POST",
      correct,
      '{"object": "in the drawer", "subject": "x"}',
      400,
      'Unknown field "subject"; allowed: "object"',
    );
    await refusal(
      "POST",
      "/api/memory/facts/abc/correct",
      '{"object": "x"}',
      400,
      'A fact id is a positive whole number, got "abc"',
    );
    await refusal("POST", "/api/memory/facts/99999/correct", '{"object": "x"}', 404, "No fact with id 99999 in memory");
    await refusal("DELETE", "/api/memory/facts/99999", undefined, 404, "No fact with id 99999 in memory");
    await refusal("DELETE", "/api/memory/facts/0", undefined, 400, 'A fact id is a positive whole number, got "0"');
    await refusal("DELETE", "/api/memory/documents/nope", undefined, 404, 'No document "nope" in memory');

    const forget = "/api/memory/forget";
    await refusal("POST", forget, "{}", 400, 'Field "event_ids" is missing');
    await refusal(
      "POST",
      forget,
      '{"event_ids": "e1"}',
      400,
      'Field "event_ids" must be a list of 1 to 500 event ids, got "e1"',
    );
    await refusal(
      "POST",
      forget,
      '{"event_ids": []}',
      400,
      'Field "event_ids" must be a list of 1 to 500 event ids, got a list of 0',
    );
    await refusal(
      "POST",
      forget,
      JSON.stringify({ event_ids: Array.from({ length: 501 }, (_, i) => `e${i}`) }),
      400,
      'Field "event_ids" must be a list of 1 to 500 event ids, got a list of 501',
    );
    await refusal(
      "POST",
      forget,
      '{"event_ids": ["e1", ""]}',
      400,
      'Field "event_ids[1]" is empty (""); it needs 1 to 100 characters',
    );
    await refusal("POST", forget, '{"event_ids": [7]}', 400, 'Field "event_ids[0]" must be a string, got 7');
    await refusal(
      "POST",
      forget,
      JSON.stringify({ event_ids: ["e".repeat(101)] }),
      400,
      `Field "event_ids[0]" has 101 characters ("${"e".repeat(56)}... (103 characters)); allowed: at most 100`,
    );
    await refusal(
      "POST",
      forget,
      '{"event_ids": ["e1"], "all": true}',
      400,
      'Unknown field "all"; allowed: "event_ids"',
    );
    // Nothing was changed by any of them.
    assert.deepEqual((await graph(app, "spare key")).map((fact) => [fact.id, fact.holds]), [[key!.id, true]]);
  } finally {
    await cleanup(memory, dir);
  }
});

Deno.test("forgetting: a fact by id, messages by event id, a document with every event of it in every layer", async () => {
  const { dir, memory, app, context } = await setup();
  try {
    const journal = () => Deno.readTextFile(join(dir, "candidates.jsonl"));
    const [name] = await graph(app, "alice");
    assert.deepEqual(await request(app, OWNER, "DELETE", `/api/memory/facts/${name!.id}`), {
      status: 200,
      body: { forgotten: { facts: 1 } },
    });
    assert.deepEqual(await graph(app, "alice"), []);
    assert.equal((await request(app, OWNER, "DELETE", `/api/memory/facts/${name!.id}`)).status, 404);
    assert.match(await journal(), /"eventId":"e4"/, "forgetting a fact leaves the messages");

    const forgotten = await request(app, OWNER, "POST", "/api/memory/forget", JSON.stringify({ event_ids: ["e2"] }));
    assert.deepEqual(forgotten, {
      status: 200,
      body: { forgotten: { context: 2, journal: 2, documents: 0, facts: 1 } },
    });
    assert.deepEqual(await graph(app, "Leo"), []);
    const recalled = await memory.recall("Leo garden", 10);
    assert.ok(!recalled.some((item) => item.provenance.includes("e2")), JSON.stringify(recalled));
    assert.doesNotMatch(await journal(), /"eventId":"e2"/);
    assert.deepEqual((await get(app, OWNER, "/api/memory/neighbors?q=Leo")).body, {
      center: "Leo",
      nodes: [],
      edges: [],
    });

    const [document] = (await get(app, OWNER, `/api/memory/documents?q=${encodeURIComponent("spare key")}`)).body
      .documents as Array<{ id: string }>;
    const gone = await request(app, OWNER, "DELETE", `/api/memory/documents/${document!.id}`);
    assert.deepEqual(gone, {
      status: 200,
      body: { forgotten: { context: 2, journal: 2, documents: 1, facts: 1 } },
    });
    assert.ok(!context.records().some((entry) => entry.eventId === "e1"), "gone from layer 1");
    assert.doesNotMatch(await journal(), /"eventId":"e1"/, "gone from the journal");
    assert.deepEqual((await get(app, OWNER, `/api/memory/documents?q=${encodeURIComponent("spare key")}`)).body, {
      query: "spare key",
      documents: [],
    });
    assert.deepEqual(await graph(app, "spare key"), []);
    assert.equal((await request(app, OWNER, "DELETE", `/api/memory/documents/${document!.id}`)).status, 404);
    const saved = await Deno.readTextFile(join(dir, "context.json"));
    assert.ok(!saved.includes('"e1"') && !saved.includes('"e2"'), "the saved layer 1 too");
  } finally {
    await cleanup(memory, dir);
  }
});

Deno.test("export (owner): everything remembered, or one entity's facts with their sources and its documents, as a JSON download", async () => {
  const { dir, memory, app } = await setup();
  try {
    const all = await app.call("GET", "/api/memory/export", OWNER);
    assert.equal(all.status, 200);
    assert.match(
      all.headers.get("content-disposition") ?? "",
      /^attachment; filename="homed-memory-all-2026-11-01\.json"$/,
    );
    const everything = await all.json() as {
      entity: null;
      entities: Array<{ name: string; facts: FactBody[] }>;
      documents: Array<{ provenance: string[] }>;
    };
    assert.equal(everything.entity, null);
    assert.deepEqual(everything.entities.map((entity) => entity.name).sort(), ["Leo", "alice", "owner", "spare key"]);
    assert.ok(everything.documents.some((document) => document.provenance.includes("e1")));

    const one = await app.call("GET", `/api/memory/export?entity=${encodeURIComponent("spare key")}`, OWNER);
    assert.match(one.headers.get("content-disposition") ?? "", /filename="homed-memory-spare_key-2026-11-01\.json"/);
    const key = await one.json() as { entity: string; entities: Array<{ facts: FactBody[] }>; documents: unknown[] };
    assert.equal(key.entity, "spare key");
    assert.equal(key.entities.length, 1);
    assert.equal(key.entities[0]!.facts[0]!.object, "under blue flowerpot");
    assert.equal(key.entities[0]!.facts[0]!.sources[0]!.sender, "owner");
    assert.equal(key.documents.length, 1);

    const refused = await request(app, ALICE, "GET", "/api/memory/export");
    assert.equal(refused.status, 403);
    assert.match(JSON.stringify(refused.body), /trust owner; this request came from \\"alice\\" \(trust household\)/);
    const unknown = await request(app, OWNER, "GET", "/api/memory/export?entity=nobody");
    assert.deepEqual([unknown.status, (unknown.body.error as Json).message], [404, 'No entity "nobody" in memory']);
    const bad = await request(app, OWNER, "GET", `/api/memory/export?entity=${"x".repeat(201)}`);
    assert.equal(bad.status, 400);
    assert.match(String((bad.body.error as Json).message), /"entity" must be 1 to 200 characters, got "x{80}"/);
  } finally {
    await cleanup(memory, dir);
  }
});

Deno.test("forgetting an entity (owner): every fact about it goes, the entity with them; others refused, unknown 404", async () => {
  const { dir, memory, app } = await setup();
  try {
    const refused = await request(app, ALICE, "DELETE", `/api/memory/entities/${encodeURIComponent("spare key")}`);
    assert.equal(refused.status, 403);
    const gone = await request(app, OWNER, "DELETE", `/api/memory/entities/${encodeURIComponent("spare key")}`);
    assert.deepEqual(gone, { status: 200, body: { forgotten: { facts: 1 } } });
    assert.deepEqual(await graph(app, "spare key"), []);
    const listed = await get(app, OWNER, "/api/memory/entities?q=spare");
    assert.deepEqual(listed.body.entities, [], "the entity went with its last fact");
    const again = await request(app, OWNER, "DELETE", `/api/memory/entities/${encodeURIComponent("spare key")}`);
    assert.deepEqual([again.status, (again.body.error as Json).message], [404, 'No entity "spare key" in memory']);
  } finally {
    await cleanup(memory, dir);
  }
});
