import assert from "node:assert/strict";
import { getLogger } from "@logtape/logtape";
import { ALICE, GUS, OWNER, routeApi } from "../../tests/support/route_api.ts";
import { FakeClock } from "../../tests/support/fake_clock.ts";
import { type ConfirmationOutcome, Confirmations } from "../policy/confirmations.ts";
import { confirmationRoutes } from "./confirmation_routes.ts";

/** The API with one real Confirmations behind it, asking on the owner's QQ; an unlock that counts its runs. */
function setup() {
  const clock = new FakeClock();
  const outcomes: ConfirmationOutcome[] = [];
  let ids = 0;
  const confirmations = new Confirmations({
    ownerChannel: "qq:private:10001",
    send: () => Promise.resolve(),
    timeoutMs: 120_000,
    clock,
    logger: getLogger(["test"]),
    onOutcome: (outcome) => outcomes.push(outcome),
    newId: () => (0xb000 + ids++).toString(16),
  });
  let runs = 0;
  const askUnlock = () =>
    confirmations.ask({
      summary: "Unlock lock.front_door (lock.unlock)",
      run: () => Promise.resolve(`unlocked (${++runs})`),
      turn: { eventId: "e1", source: "qq:private:10002", sender: "10002", trust: "household" },
    });
  const { call } = routeApi([confirmationRoutes(confirmations)]);
  return { clock, outcomes, askUnlock, call, runs: () => runs };
}

Deno.test("GET /api/confirmations lists what waits for the owner: summary, where, who asked, their trust, expiry", async () => {
  const t = setup();
  assert.deepEqual(await (await t.call("GET", "/api/confirmations", OWNER)).json(), { pending: [] });
  await t.askUnlock();
  const response = await t.call("GET", "/api/confirmations", OWNER);
  assert.equal(response.status, 200);
  assert.deepEqual(await response.json(), {
    pending: [{
      id: "b000",
      summary: "Unlock lock.front_door (lock.unlock)",
      channel: "qq:private:10001",
      asked_by: "10002",
      asked_on: "qq:private:10002",
      trust: "household",
      expires_at: new Date(t.clock.now() + 120_000).toISOString(),
    }],
  });
});

Deno.test("the owner approves: it runs once, audited as decided on the console; a second approve is a 404 naming the id", async () => {
  const t = setup();
  await t.askUnlock();
  const approved = await t.call("POST", "/api/confirmations/b000", OWNER, { decision: "approve" });
  assert.equal(approved.status, 200);
  assert.deepEqual(await approved.json(), { id: "b000", outcome: "confirmed", result: "unlocked (1)" });
  assert.equal(t.runs(), 1);
  const again = await t.call("POST", "/api/confirmations/b000", OWNER, { decision: "approve" });
  assert.equal(again.status, 404);
  const body = await again.json();
  assert.equal(body.error.code, "not_found");
  assert.match(body.error.message, /"b000"/);
  assert.equal(t.runs(), 1, "ran once");
  assert.deepEqual(t.outcomes.map((o) => [o.id, o.outcome, o.decidedOn]), [["b000", "confirmed", "console"]]);
  assert.deepEqual(await (await t.call("GET", "/api/confirmations", OWNER)).json(), { pending: [] });
});

Deno.test("the owner denies: nothing runs, it is declined on the console and no longer waits", async () => {
  const t = setup();
  await t.askUnlock();
  const denied = await t.call("POST", "/api/confirmations/b000", OWNER, { decision: "deny" });
  assert.equal(denied.status, 200);
  assert.deepEqual(await denied.json(), { id: "b000", outcome: "declined" });
  assert.equal(t.runs(), 0);
  assert.equal((await t.call("POST", "/api/confirmations/b000", OWNER, { decision: "approve" })).status, 404);
  assert.equal(t.runs(), 0);
  assert.deepEqual(t.outcomes.map((o) => [o.outcome, o.decidedOn]), [["declined", "console"]]);
});

Deno.test("an expired action is a 404; nothing runs", async () => {
  const t = setup();
  await t.askUnlock();
  t.clock.advance(120_001);
  const late = await t.call("POST", "/api/confirmations/b000", OWNER, { decision: "approve" });
  assert.equal(late.status, 404);
  assert.match((await late.json()).error.message, /"b000".*(ran|declined|expired)/);
  assert.equal(t.runs(), 0);
  assert.deepEqual(t.outcomes.map((o) => o.outcome), ["expired"]);
});

Deno.test("a household member's or a guest's token gets a 403 naming the rule; nothing is listed or run", async () => {
  const t = setup();
  await t.askUnlock();
  for (const token of [ALICE, GUS]) {
    for (
      const response of [
        await t.call("GET", "/api/confirmations", token),
        await t.call("POST", "/api/confirmations/b000", token, { decision: "approve" }),
      ]
    ) {
      assert.equal(response.status, 403);
      const body = await response.json();
      assert.equal(body.error.code, "forbidden");
      assert.match(body.error.message, /needs? trust owner; this request came from "(alice|gus)"/);
    }
  }
  assert.equal(t.runs(), 0);
  assert.equal(t.outcomes.length, 0, "still waiting for the owner");
});

Deno.test("a bad body is a 400 naming the decision field; nothing is decided", async () => {
  const t = setup();
  await t.askUnlock();
  for (const body of [{}, { decision: "yes" }, { decision: 1 }, "not json", []]) {
    const response = await t.call("POST", "/api/confirmations/b000", OWNER, body);
    assert.equal(response.status, 400, JSON.stringify(body));
    const error = (await response.json()).error;
    assert.equal(error.code, "bad_request");
    assert.match(error.message, /"decision"/, error.message);
  }
  assert.equal(t.runs(), 0);
  assert.equal(t.outcomes.length, 0);
  assert.equal((await (await t.call("GET", "/api/confirmations", OWNER)).json()).pending.length, 1);
});

Deno.test("two approvals at once (a double tap, two phones): the action runs once, the other is a 404", async () => {
  const t = setup();
  await t.askUnlock();
  const answers = await Promise.all([
    t.call("POST", "/api/confirmations/b000", OWNER, { decision: "approve" }),
    t.call("POST", "/api/confirmations/b000", OWNER, { decision: "approve" }),
  ]);
  assert.deepEqual(answers.map((response) => response.status).sort(), [200, 404]);
  await Promise.all(answers.map((response) => response.body?.cancel()));
  assert.equal(t.runs(), 1);
  assert.equal(t.outcomes.length, 1);
});
