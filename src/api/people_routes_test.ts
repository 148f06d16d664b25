import assert from "node:assert/strict";
import { ALICE, GUS, OWNER, routeApi } from "../../tests/support/route_api.ts";
import type { FactView } from "../memory/fact_views.ts";
import type { Fact } from "../memory/graph/fact.ts";
import { configuredMembers, Profiles, type ProfileSource } from "../memory/profile/profiles.ts";
import { peopleRoutes } from "./people_routes.ts";

const BOB = "bob-token-0123456789ab";
const TOKENS = {
  alice: { token: ALICE, trust: "household" as const },
  bob: { token: BOB, trust: "household" as const },
  gus: { token: "gus-token-0123456789", trust: "guest" as const },
};

const view = (id: number, predicate: string, object: string): FactView => ({
  id,
  subject: "alice",
  type: "person",
  predicate,
  object,
  holds: true,
  valid_from: "2026-11-01T09:00:00.000Z",
  valid_to: null,
  provenance: [`e${id}`],
  said_by: "alice",
  trust: "household",
  sources: [{ event_id: `e${id}` }],
});

/** A memory that knows one fact about alice and heard "10001000" speak. */
const source: ProfileSource = {
  inspectGraph: (name) => Promise.resolve(name === "alice" ? [view(1, "allergic to", "peanuts")] : []),
  inspectFactsNaming: () => Promise.resolve([]),
  speakers: () => Promise.resolve([{ name: "10001000", trust: "household" }]),
  factsAbout: (name) => Promise.resolve(name === "alice" ? [{ validTo: null } as Fact] : []),
};

const api = routeApi([
  peopleRoutes(new Profiles(source, () => configuredMembers({ api_token: OWNER, api_tokens: TOKENS }))),
], { people: { bob: TOKENS.bob } });

async function get(path: string, token: string) {
  const response = await api.call("GET", path, token);
  return { status: response.status, body: await response.json() };
}

Deno.test("GET /api/people: the owner sees every member, a member themself, a guest is refused", async () => {
  const owner = await get("/api/people", OWNER);
  assert.equal(owner.status, 200);
  assert.deepEqual(owner.body.people.map((person: { id: string }) => person.id), ["owner", "alice", "bob", "10001000"]);
  assert.deepEqual(await get("/api/people", ALICE), {
    status: 200,
    body: { people: [{ id: "alice", trust: "household", known_from: ["config"], facts: 1 }] },
  });
  const guest = await get("/api/people", GUS);
  assert.equal(guest.status, 403);
  assert.equal(
    guest.body.error.message,
    'Reading a profile needs trust household or owner; this request came from "gus" (trust guest)',
  );
});

Deno.test("GET /api/people/{id}/profile: the person and the owner only; 404 for no member, 400 for a bad id", async () => {
  const own = await get("/api/people/alice/profile", ALICE);
  assert.equal(own.status, 200);
  assert.deepEqual(own.body.kinds.health.map((fact: FactView) => fact.object), ["peanuts"]);
  assert.equal(own.body.holding, 1);
  assert.equal((await get("/api/people/alice/profile", OWNER)).status, 200);
  assert.deepEqual(await get("/api/people/alice/profile", BOB), {
    status: 403,
    body: {
      error: {
        code: "forbidden",
        message: 'A profile is read by its person and the owner only; "bob" (trust household) asked for "alice"\'s',
      },
    },
  });
  assert.equal((await get("/api/people/alice/profile", GUS)).status, 403);
  assert.equal((await get("/api/people/gus/profile", GUS)).status, 403);
  assert.deepEqual(await get("/api/people/nobody/profile", OWNER), {
    status: 404,
    body: { error: { code: "not_found", message: 'No household member "nobody" (see GET /api/people)' } },
  });
  assert.equal((await get("/api/people/gus/profile", OWNER)).status, 404);
  assert.equal((await get(`/api/people/${"x".repeat(65)}/profile`, OWNER)).status, 400);
});
