/**
 * Profiles (issue 39.2) over a real memory.db: a household's month journaled through the memory service's after-turn
 * hook and distilled each week (the LLM distiller played by a script), then each member's profile by kind with its
 * provenance, superseding and corrections marked, and who may read what.
 */

import assert from "node:assert/strict";
import { getLogger } from "@logtape/logtape";
import { FakeClock } from "../../../tests/support/fake_clock.ts";
import { distillerAnswer, HOUSEHOLD_MONTH } from "../../../tests/support/household_month.ts";
import { ScriptedProvider } from "../../../tests/support/scripted_provider.ts";
import { MemoryService } from "../memory_service.ts";
import { buildProfile, compactLine, householdMembers, kindOf, type Profile } from "./profile.ts";
import { configuredMembers, profileRefusal, Profiles } from "./profiles.ts";

const DAY = 86_400_000;
const START = Date.UTC(2026, 10, 1, 9);
const OWNER = { sender: "owner", trust: "owner" } as const;
const ALICE = { sender: "alice", trust: "household" } as const;
const BOB = { sender: "bob", trust: "household" } as const;
const CONFIGURED = configuredMembers({
  api_token: "owner-token-0123456789",
  api_tokens: {
    alice: { token: "alice-token-0123456789", trust: "household" },
    bob: { token: "bob-token-01234567890", trust: "household" },
    visitor: { token: "visitor-token-012345678", trust: "guest" },
  },
});

/** The month journaled through the after-turn hook, distilled at the end of each week. */
async function replayMonth(dir: string) {
  const clock = new FakeClock({ start: START });
  const provider = new ScriptedProvider();
  for (let i = 0; i < 20; i++) {
    provider.enqueue((request) => ({ content: distillerAnswer(String(request.messages.at(-1)?.content ?? "")) }));
  }
  const memory = new MemoryService({ dir, clock, logger: getLogger(["test"]), provider, persona: "A butler." });
  await memory.start();
  const [distill] = memory.jobs();
  let week = 0;
  for (const [i, line] of HOUSEHOLD_MONTH.entries()) {
    if (Math.floor(line.day / 7) > week) {
      week = Math.floor(line.day / 7);
      await distill!.run(new AbortController().signal);
    }
    clock.advance(START + line.day * DAY + i * 60_000 - clock.now());
    await memory.afterTurn({
      eventId: line.id,
      time: clock.now(),
      source: "http",
      sender: line.sender,
      trust: line.trust,
      text: line.text,
      reply: "Noted.",
    });
  }
  await distill!.run(new AbortController().signal);
  return { memory, clock, profiles: new Profiles(memory.profileSource(), () => CONFIGURED) };
}

const facts = (profile: Profile, kind: keyof Profile["kinds"]) =>
  profile.kinds[kind].map((fact) => `${fact.predicate}: ${fact.object}${fact.holds ? "" : " (superseded)"}`);

Deno.test("kinds: health, dates, preferences, relations, other — by what is said, then by the value", () => {
  assert.equal(kindOf("allergic to", "peanuts"), "health");
  assert.equal(kindOf("takes medicine", "ibuprofen"), "health");
  assert.equal(kindOf("dentist appointment", "2026-11-20 09:00"), "dates");
  assert.equal(kindOf("生日", "3月4日"), "dates");
  assert.equal(kindOf("likes", "cats"), "preferences");
  assert.equal(kindOf("喜欢", "草莓"), "preferences");
  assert.equal(kindOf("brother of", "alice"), "relations");
  assert.equal(kindOf("lives with", "bob", new Set(["bob"])), "relations");
  assert.equal(kindOf("exam", "maths on 2026-12-18"), "dates");
  assert.equal(kindOf("works at", "the hospital"), "other");
  assert.equal(kindOf("needs", "insulin"), "health");
});

Deno.test("members: the owner and household tokens from the configuration, then who has spoken; never a guest", () => {
  assert.deepEqual(CONFIGURED, [{ id: "owner", trust: "owner" }, { id: "alice", trust: "household" }, {
    id: "bob",
    trust: "household",
  }]);
  assert.deepEqual(
    householdMembers(CONFIGURED, [{ name: "10001000", trust: "household" }, { name: "alice", trust: "household" }]),
    [
      { id: "owner", trust: "owner", known_from: ["config"] },
      { id: "alice", trust: "household", known_from: ["config", "spoken"] },
      { id: "bob", trust: "household", known_from: ["config"] },
      { id: "10001000", trust: "household", known_from: ["spoken"] },
    ],
  );
  assert.equal(profileRefusal(OWNER, "bob"), undefined);
  assert.equal(profileRefusal(ALICE, "alice"), undefined);
  assert.equal(
    profileRefusal(ALICE, "bob"),
    'A profile is read by its person and the owner only; "alice" (trust household) asked for "bob"\'s',
  );
  assert.match(profileRefusal({ sender: "alice", trust: "guest" }, "alice")!, /trust guest/);
});

Deno.test("a month's profiles: facts by kind with provenance, a newer statement supersedes, a correction says so", async () => {
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-profiles-" });
  const { memory, profiles } = await replayMonth(dir);
  try {
    assert.deepEqual((await profiles.members()).map((member) => member.id), ["owner", "alice", "bob"]);
    const alice = (await profiles.profile("alice", OWNER))!;
    assert.deepEqual(facts(alice, "health"), ["takes medicine: cetirizine 10 mg", "allergic to: peanuts"]);
    assert.deepEqual(facts(alice, "dates"), [
      "birthday: June 2",
      "dentist appointment: 2026-11-27 09:00",
      "dentist appointment: 2026-11-20 09:00 (superseded)",
    ]);
    assert.deepEqual(facts(alice, "preferences"), [
      "likes: sci-fi films",
      "prefers: green tea in the morning",
      "dislikes: cats",
      "likes: strawberries",
    ]);
    // Provenance: which message, when, who said it.
    const allergy = alice.kinds.health.find((fact) => fact.object === "peanuts")!;
    assert.deepEqual(allergy.sources, [{
      event_id: "m01",
      time: new Date(START).toISOString(),
      sender: "alice",
      source: "http",
      trust: "household",
      text: "I'm allergic to peanuts.",
    }]);
    // The older appointment says what superseded it.
    const moved = alice.kinds.dates.find((fact) => !fact.holds)!;
    const now = alice.kinds.dates.find((fact) => fact.object === "2026-11-27 09:00")!;
    assert.deepEqual(moved.superseded_by, {
      at: now.valid_from,
      id: now.id,
      object: "2026-11-27 09:00",
      said_by: "alice",
    });
    // What others said naming her is among her relations: bob is her brother.
    assert.deepEqual(alice.kinds.relations.map((fact) => `${fact.subject} ${fact.predicate} ${fact.object}`), [
      "bob brother of alice",
    ]);
    // The visitor's claim is shown to the owner as a guest's.
    assert.equal(alice.kinds.preferences.find((fact) => fact.object === "cats")!.trust, "guest");
    const bob = (await profiles.profile("bob", OWNER))!;
    assert.deepEqual(facts(bob, "health"), [
      "takes medicine: none",
      "allergic to: penicillin",
      "takes medicine: ibuprofen (superseded)",
    ]);
    assert.deepEqual(facts(bob, "relations"), ["brother of: alice"]);
    assert.deepEqual(facts(bob, "dates"), ["exam: maths on 2026-12-18", "birthday: March 4"]);

    // A correction by the owner supersedes, and says who corrected it.
    const strawberries = alice.kinds.preferences.find((fact) => fact.object === "strawberries")!;
    await memory.correctFact(strawberries.id, "blueberries", "owner");
    const corrected = (await profiles.profile("alice", OWNER))!;
    const old = corrected.kinds.preferences.find((fact) => fact.id === strawberries.id)!;
    assert.equal(old.holds, false);
    assert.equal(old.superseded_by?.object, "blueberries");
    assert.equal(old.superseded_by?.corrected_by, "owner");
    assert.ok(corrected.kinds.preferences.some((fact) => fact.holds && fact.object === "blueberries"));
  } finally {
    await memory.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a member reads in their own profile only what they may read; the prompt line follows the same rule", async () => {
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-profiles-" });
  const { memory, profiles } = await replayMonth(dir);
  try {
    // What the owner said about alice in the owner's private chat (http) and the visitor's claim are not alice's to read.
    const own = (await profiles.profile("alice", ALICE))!;
    assert.deepEqual(facts(own, "health"), ["allergic to: peanuts"]);
    assert.ok(!own.kinds.preferences.some((fact) => fact.object === "cats"));
    // Bob said he is her brother in his own private chat: not hers to read.
    assert.deepEqual(own.kinds.relations, []);
    assert.deepEqual(await profiles.visibleMembers(ALICE), [{
      id: "alice",
      trust: "household",
      known_from: ["config", "spoken"],
      facts: 5,
    }]);
    assert.deepEqual((await profiles.visibleMembers(OWNER)).map((member) => member.id), ["owner", "alice", "bob"]);
    assert.deepEqual(await profiles.visibleMembers({ sender: "visitor", trust: "guest" }), []);
    assert.equal(await profiles.profile("visitor", OWNER), undefined);

    // The prompt: health first, a guest's claim left out, at most 300 characters.
    const now = Date.UTC(2026, 10, 25);
    const line = compactLine("alice", await profiles.factsAbout("alice", OWNER), now)!;
    assert.equal(
      line,
      "alice — takes medicine: cetirizine 10 mg; allergic to: peanuts; dentist appointment: 2026-11-27 09:00; " +
        "birthday: June 2; likes: sci-fi films; prefers: green tea in the morning; likes: strawberries",
    );
    // A date that has passed is no longer "ahead".
    assert.doesNotMatch(
      compactLine("alice", await profiles.factsAbout("alice", OWNER), Date.UTC(2026, 11, 1))!,
      /11-27/,
    );
    // Alice naming bob reads none of what the owner said about him in private.
    assert.doesNotMatch(compactLine("bob", await profiles.factsAbout("bob", ALICE), now) ?? "", /penicillin/);
    assert.match(compactLine("bob", await profiles.factsAbout("bob", BOB), now)!, /^bob — takes medicine: none/);
    // Whole facts only, within 300 characters.
    const many = await profiles.factsAbout("alice", OWNER);
    const long = Array.from({ length: 40 }, (_, i) => ({ ...many[0]!, id: 1000 + i, object: `cetirizine ${i}0 mg` }));
    const cut = compactLine("alice", long, now)!;
    assert.ok([...cut].length <= 300 && cut.endsWith("mg"), cut);
    assert.equal(buildProfile("x", [], new Set()).holding, 0);
  } finally {
    await memory.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the memory's reference block carries the sender's and the named members' profiles, never a guest's", async () => {
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-profiles-" });
  const { memory, clock } = await replayMonth(dir);
  try {
    const ask = (sender: string, trust: "owner" | "household" | "guest", text: string) =>
      memory.reference({ text, source: "http", sender, trust, time: clock.now() }, []);
    const owner = await ask("owner", "owner", "What can I cook for alice and bob tonight?");
    assert.match(owner!.body, /^People in this message \(memory's profiles\):\n/);
    // The appointment on 2026-11-27 has passed (the month ends on the 30th): no longer a date ahead.
    assert.match(owner!.body, /\n- alice — takes medicine: cetirizine 10 mg; allergic to: peanuts; birthday: June 2;/);
    assert.match(owner!.body, /\n- bob — takes medicine: none; allergic to: penicillin;/);
    for (const line of owner!.body.split("\n")) assert.ok([...line].length <= 302, line);
    const alice = await ask("alice", "household", "Any plans for bob's birthday?");
    assert.match(alice!.body, /- alice — allergic to: peanuts; likes: sci-fi films;/);
    assert.doesNotMatch(alice!.body, /penicillin|cetirizine/);
    assert.equal(await ask("visitor", "guest", "Does alice like cats?"), undefined);
  } finally {
    await memory.stop();
    await Deno.remove(dir, { recursive: true });
  }
});
