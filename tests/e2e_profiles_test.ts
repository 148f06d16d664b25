/**
 * Profiles end to end (issue 39.2): a real homed with four tokens (the owner, alice and bob of the household, a
 * visitor who is a guest) and the fake LLM, which answers each turn and plays the memory distiller. A household's
 * month of messages is replayed through `/api/chat`; once the memory job (run at once by the owner's
 * `POST /api/memory/job`) has distilled them, each member's page lists the facts stated about them with their provenance, a newer statement and
 * a correction supersede (and say so), a member gets 403 on another member's page, a guest sees none, and a member's
 * turn carries their own profile in its reference block — without what the owner said about them in private.
 */

import assert from "node:assert/strict";
import { DEFAULT_CONTRACT, TEST_KEY } from "./support/contract.ts";
import { FakeLlm, type RecordedRequest } from "./support/fake_llm.ts";
import { distillerAnswer, HOUSEHOLD_MONTH } from "./support/household_month.ts";
import { chatAs, type HomedProcess, startHomed, workspace } from "./support/homed_process.ts";
import { teardown } from "./support/teardown.ts";
import { waitFor } from "./support/wait.ts";

const TOKENS = {
  owner: "owner-token-0123456789",
  alice: "alice-token-0123456789",
  bob: "bob-token-012345678901",
  visitor: "visitor-token-012345678",
} as const;

type Messages = Array<{ role: string; content: string | null }>;
type ProfileFact = {
  id: number;
  subject: string;
  predicate: string;
  object: string;
  holds: boolean;
  trust: string;
  sources: Array<{ sender?: string; text?: string; time?: string }>;
  superseded_by?: { object?: string; said_by?: string; corrected_by?: string };
};
type Profile = { person: string; holding: number; kinds: Record<string, ProfileFact[]> };

const lastUser = (request: RecordedRequest) => (request.body.messages as Messages).at(-1)?.content ?? "";

/** Each turn answers "Noted."; a distiller request gets the facts of the lines it carries. */
function answer(request: RecordedRequest) {
  const distilling = JSON.stringify(request.body.messages).includes("Memory distiller");
  return { reply: distilling ? distillerAnswer(lastUser(request)) : "Noted." };
}

async function call(homed: HomedProcess, who: keyof typeof TOKENS, path: string, init: RequestInit = {}) {
  const response = await fetch(`${homed.url}${path}`, {
    ...init,
    headers: { authorization: `Bearer ${TOKENS[who]}`, "content-type": "application/json" },
  });
  return { status: response.status, body: await response.json() as Record<string, unknown> };
}

const profileOf = async (homed: HomedProcess, who: keyof typeof TOKENS, person: string) =>
  (await call(homed, who, `/api/people/${person}/profile`)).body as unknown as Profile;

const shown = (facts: readonly ProfileFact[]) =>
  facts.map((fact) => `${fact.predicate}: ${fact.object}${fact.holds ? "" : " (superseded)"}`);

Deno.test("a household's month: a page per person with provenance, superseding, corrections and who may read it", async () => {
  const fake = FakeLlm.start(DEFAULT_CONTRACT);
  const ws = await workspace({
    llm: { base_url: fake.baseUrl, api_key: TEST_KEY },
    daemon: {
      api_token: TOKENS.owner,
      api_tokens: {
        alice: { token: TOKENS.alice, trust: "household" },
        bob: { token: TOKENS.bob, trust: "household" },
        visitor: { token: TOKENS.visitor, trust: "guest" },
      },
    },
  });
  const homed = await startHomed(ws);
  try {
    // One answer per turn, queued just before it (the fake fails on answers never asked for).
    for (const line of HOUSEHOLD_MONTH) {
      fake.enqueue({ from: answer });
      await chatAs(homed, TOKENS[line.sender], line.text);
    }
    // The owner runs the memory job now (its own schedule: every 30 minutes): 60 journal lines (each turn and its
    // reply), two batches of 40.
    fake.enqueue({ from: answer }, { from: answer });
    const run = await call(homed, "owner", "/api/memory/job", { method: "POST" });
    assert.deepEqual([run.status, run.body.done, (run.body.job as { runs: number }).runs], [200, true, 1]);
    assert.equal(fake.remaining, 0, "the memory job's two distiller requests");
    await waitFor(
      async () => (await profileOf(homed, "owner", "bob")).holding >= 6,
      "bob's profile to be distilled",
      { limitMs: 10_000, everyMs: 200 },
    );

    // The owner lists everyone of the household, never the guest.
    const people = (await call(homed, "owner", "/api/people")).body.people as Array<{ id: string }>;
    assert.deepEqual(people.map((person) => person.id), ["owner", "alice", "bob"]);

    // Alice's page, as the owner reads it: every fact stated about her, with who said it, when and what.
    const alice = await profileOf(homed, "owner", "alice");
    assert.deepEqual(shown(alice.kinds.health!).sort(), ["allergic to: peanuts", "takes medicine: cetirizine 10 mg"]);
    assert.deepEqual(shown(alice.kinds.dates!).sort(), [
      "birthday: June 2",
      "dentist appointment: 2026-11-20 09:00 (superseded)",
      "dentist appointment: 2026-11-27 09:00",
    ]);
    const allergy = alice.kinds.health!.find((fact) => fact.object === "peanuts")!;
    assert.equal(allergy.sources[0]?.sender, "alice");
    assert.equal(allergy.sources[0]?.text, "I'm allergic to peanuts.");
    assert.ok(Date.parse(allergy.sources[0]?.time ?? "") > 0);
    const moved = alice.kinds.dates!.find((fact) => !fact.holds)!;
    assert.equal(moved.superseded_by?.object, "2026-11-27 09:00");
    assert.equal(moved.superseded_by?.said_by, "alice");
    // What bob said naming her is among her relations.
    assert.deepEqual(alice.kinds.relations!.map((fact) => `${fact.subject} ${fact.predicate} ${fact.object}`), [
      "bob brother of alice",
    ]);
    const cats = alice.kinds.preferences!.find((fact) => fact.object === "cats")!;
    assert.equal(cats.trust, "guest");
    const bob = await profileOf(homed, "owner", "bob");
    assert.deepEqual(shown(bob.kinds.relations!), ["brother of: alice"]);
    assert.ok(shown(bob.kinds.health!).includes("takes medicine: ibuprofen (superseded)"));

    // A member reads their own page (not what the owner or a guest said of them in private), and no one else's.
    const own = await profileOf(homed, "alice", "alice");
    assert.deepEqual(shown(own.kinds.health!), ["allergic to: peanuts"]);
    assert.deepEqual((await call(homed, "alice", "/api/people")).body.people, [
      { id: "alice", trust: "household", known_from: ["config", "spoken"], facts: 5 },
    ]);
    assert.deepEqual(await call(homed, "alice", "/api/people/bob/profile"), {
      status: 403,
      body: {
        error: {
          code: "forbidden",
          message: 'A profile is read by its person and the owner only; "alice" (trust household) asked for "bob"\'s',
        },
      },
    });
    // A guest sees none.
    for (const path of ["/api/people", "/api/people/alice/profile", "/api/people/visitor/profile"]) {
      const refused = await call(homed, "visitor", path);
      assert.equal(refused.status, 403, path);
      assert.match(String((refused.body.error as { message: string }).message), /trust guest/);
    }
    assert.equal((await call(homed, "owner", "/api/people/visitor/profile")).status, 404);

    // A correction (the owner's, through the memory endpoint) supersedes and says so; a member may not make one.
    const strawberries = alice.kinds.preferences!.find((fact) => fact.object === "strawberries")!;
    const correct = (who: keyof typeof TOKENS) =>
      call(homed, who, `/api/memory/facts/${strawberries.id}/correct`, {
        method: "POST",
        body: JSON.stringify({ object: "blueberries" }),
      });
    assert.equal((await correct("alice")).status, 403);
    assert.equal((await correct("owner")).status, 200);
    const corrected = await profileOf(homed, "alice", "alice");
    const old = corrected.kinds.preferences!.find((fact) => fact.id === strawberries.id)!;
    assert.deepEqual([old.holds, old.superseded_by?.object, old.superseded_by?.corrected_by], [
      false,
      "blueberries",
      "owner",
    ]);
    // Forgetting a fact takes it off the page.
    const green = corrected.kinds.preferences!.find((fact) => fact.object === "green tea in the morning")!;
    assert.equal((await call(homed, "owner", `/api/memory/facts/${green.id}`, { method: "DELETE" })).status, 200);
    assert.ok(!JSON.stringify(await profileOf(homed, "alice", "alice")).includes("green tea"));

    // Alice's turn carries her profile; what the owner said about her in private stays out.
    const before = fake.requests.length;
    fake.enqueue({ from: answer });
    await chatAs(homed, TOKENS.alice, "What should I have for breakfast?");
    const turn = fake.requests.slice(before).map(lastUser).find((text) => text.includes("What should I have"))!;
    assert.match(turn, /People in this message \(memory's profiles\):/);
    assert.match(turn, /alice — allergic to: peanuts/);
    assert.doesNotMatch(turn, /cetirizine|cats/);
  } finally {
    await teardown(
      async () => assert.equal(await homed.stop(), 0, homed.stderr()),
      () => fake.close(),
    );
  }
});
