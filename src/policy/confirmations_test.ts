import assert from "node:assert/strict";
import { getLogger } from "@logtape/logtape";
import { FakeClock } from "../../tests/support/fake_clock.ts";
import { type ConfirmationOutcome, Confirmations } from "./confirmations.ts";

function setup(ownerChannel: string | null = "qq:private:10001", ownerChats: string[] = []) {
  const clock = new FakeClock();
  const sent: Array<[string, string]> = [];
  const outcomes: ConfirmationOutcome[] = [];
  let ids = 0;
  const confirmations = new Confirmations({
    ownerChannel: ownerChannel ?? undefined,
    ownerChats,
    send: (channel, text) => (sent.push([channel, text]), Promise.resolve()),
    timeoutMs: 120_000,
    clock,
    logger: getLogger(["test"]),
    onOutcome: (outcome) => outcomes.push(outcome),
    newId: () => (0xa000 + ids++).toString(16),
  });
  let runs = 0;
  const unlock = {
    summary: "Unlock lock.front_door (lock.unlock)",
    run: () => Promise.resolve(`unlocked (${++runs})`),
  };
  const input = (text: string, trust: "owner" | "household" | "guest" = "owner", source = "qq:private:10001") => ({
    text,
    source,
    sender: trust === "owner" ? "10001" : "10002",
    time: clock.now(),
    trust,
  });
  const answer = async (text: string, trust: "owner" | "household" | "guest" = "owner", source?: string) => {
    const dispatch = confirmations.dispatch(input(text, trust, source));
    return await dispatch?.decide(new AbortController().signal);
  };
  return { clock, sent, outcomes, confirmations, unlock, answer, runs: () => runs };
}

const OWNER_TURN = { eventId: "e1", source: "qq:private:10001", sender: "10001", trust: "owner" as const };

Deno.test("the owner's yes in the chat runs the action once; nothing runs before", async () => {
  const t = setup();
  const told = await t.confirmations.ask({ ...t.unlock, turn: OWNER_TURN });
  assert.match(told, /^Not done yet: "Unlock lock\.front_door \(lock\.unlock\)" needs the owner's confirmation/);
  assert.equal(t.runs(), 0);
  assert.deepEqual(t.sent, [[
    "qq:private:10001",
    "Confirm: Unlock lock.front_door (lock.unlock)? Reply 是 / yes within 2 min to do it, anything else to leave it (or /confirm a000).",
  ]]);
  assert.equal(await t.answer("是"), "Done: Unlock lock.front_door (lock.unlock). unlocked (1)");
  assert.equal(t.runs(), 1);
  assert.equal(await t.answer("是"), undefined, "nothing waits any more: the second yes is an ordinary message");
  assert.equal(t.runs(), 1);
  assert.deepEqual(t.outcomes.map((o) => [o.id, o.outcome]), [["a000", "confirmed"]]);
});

Deno.test("a guest's or a household member's yes runs nothing; the owner's other words decline; the timeout expires", async () => {
  const t = setup();
  const guest = { eventId: "e2", source: "qq:group:555", sender: "10002", trust: "guest" as const };
  await t.confirmations.ask({ ...t.unlock, turn: guest });
  assert.equal(t.sent[0]![0], "qq:private:10001", "asked on the owner's own channel, naming who asked");
  assert.match(t.sent[0]![1], /\(asked by 10002 on qq:group:555\)\?/);
  assert.equal(await t.answer("yes", "guest", "qq:private:10001"), undefined);
  assert.equal(await t.answer("yes", "household", "qq:private:10001"), undefined);
  assert.equal(await t.answer("yes", "owner", "qq:group:555"), undefined, "not the chat it was asked in");
  assert.equal(t.runs(), 0);
  assert.equal(t.confirmations.status().length, 1);
  assert.equal(await t.answer("wait, who is it?"), undefined, "the owner's other words go to the model…");
  assert.equal(t.confirmations.status().length, 0, "…and leave the action undone");
  await t.confirmations.ask({ ...t.unlock, turn: OWNER_TURN });
  t.clock.advance(120_001);
  assert.equal(await t.answer("yes"), undefined, "too late");
  assert.equal(t.runs(), 0);
  assert.deepEqual(t.outcomes.map((o) => o.outcome), ["declined", "expired"]);
});

Deno.test("/confirm <id> works in the chat it was asked in and on the owner's channel only; no owner channel means it is refused", async () => {
  const t = setup();
  await t.confirmations.ask({ ...t.unlock, turn: { ...OWNER_TURN, source: "http", sender: "owner" } });
  assert.equal(t.sent[0]![0], "http");
  // A schedule the model set fires as the owner's message from timer:…: no chat an action waits in.
  assert.equal(
    await t.answer("/confirm a000", "owner", "timer:5"),
    "Confirmation a000 is decided on http or on your own channel qq:private:10001, not on timer:5; nothing was done",
  );
  assert.match(
    await t.answer("/confirm a000", "owner", "openai:owner") ?? "",
    /, not on openai:owner; nothing was done$/,
  );
  assert.equal(t.runs(), 0);
  assert.equal(
    await t.answer("/confirm a000", "owner", "qq:private:10001"),
    "Done: Unlock lock.front_door (lock.unlock). unlocked (1)",
  );
  assert.deepEqual(t.outcomes.map((o) => [o.outcome, o.decidedOn]), [["confirmed", "qq:private:10001"]]);
  assert.equal(
    await t.answer("/confirm a000", "guest", "qq:private:10001"),
    undefined,
    "a guest's /confirm is a message",
  );
  const none = setup(null);
  const told = await none.confirmations.ask({ ...none.unlock, turn: { ...OWNER_TURN, trust: "household" } });
  assert.match(
    told,
    /^Not done: .* homed has no channel to ask the owner on \(set onebot\.owner, telegram\.owner or weixin\.owner — or the owner's addresses in people:\)$/,
  );
  assert.deepEqual(none.sent, []);
});

Deno.test("/deny <id> (a chat's no button) declines the action it names, once, on its chat only; a guest's is a message", async () => {
  const t = setup();
  await t.confirmations.ask({ ...t.unlock, turn: OWNER_TURN });
  assert.equal(await t.answer("/deny a000", "guest"), undefined, "a guest's /deny is an ordinary message");
  assert.equal(
    await t.answer("/deny a000", "owner", "timer:5"),
    "Confirmation a000 is decided on qq:private:10001, not on timer:5; nothing was done",
  );
  assert.equal(t.confirmations.status().length, 1, "still waiting");
  assert.equal(await t.answer("/deny a000"), "Not done: Unlock lock.front_door (lock.unlock). Declined.");
  assert.equal(
    await t.answer("/deny a000"),
    "Nothing is waiting for confirmation a000 (it ran, was declined or expired)",
  );
  assert.equal(
    await t.answer("/confirm a000"),
    "Nothing is waiting for confirmation a000 (it ran, was declined or expired)",
  );
  assert.equal(t.runs(), 0);
  assert.deepEqual(t.outcomes.map((o) => [o.id, o.outcome, o.decidedOn]), [["a000", "declined", "qq:private:10001"]]);
});

Deno.test("no tool exists through which anything could confirm: the decision is a message's, never a call's", () => {
  const t = setup();
  assert.equal("tools" in t.confirmations, false);
  assert.equal(t.confirmations.dispatch({ text: "yes", source: "x", sender: "m", time: 0 }), undefined);
});

Deno.test("a bare yes decides only the one action that waits; with two waiting it runs neither and names both", async () => {
  const t = setup();
  const lock = { summary: "Lock lock.front_door (lock.lock)", run: () => Promise.resolve("locked") };
  await t.confirmations.ask({ ...lock, turn: OWNER_TURN });
  // A member asks right after: the question goes to the same chat, the owner's own.
  const member = { eventId: "e3", source: "qq:private:10002", sender: "10002", trust: "household" as const };
  await t.confirmations.ask({ ...t.unlock, turn: member });
  assert.match(t.sent[1]![1], /2 actions wait here now: reply \/confirm a001 within 2 min to do this one\.$/);
  const answer = await t.answer("是");
  assert.equal(
    answer,
    "2 actions wait for your yes here, so a bare yes does none of them:\n" +
      "- a000: Lock lock.front_door (lock.lock)\n" +
      "- a001: Unlock lock.front_door (lock.unlock) (asked by 10002 on qq:private:10002)\n" +
      "Reply /confirm <id> for the one you mean.",
  );
  assert.equal(t.runs(), 0);
  assert.equal(t.confirmations.status().length, 2, "both still wait");
  assert.equal(await t.answer("ok face"), undefined, "words that only look like an id are words: the model answers");
  assert.equal(t.confirmations.status().length, 0, "and, as any other words of the owner's there, they decline");
  await t.confirmations.ask({ ...lock, turn: OWNER_TURN });
  await t.confirmations.ask({ ...t.unlock, turn: member });
  assert.equal(await t.answer("yes a002"), "Done: Lock lock.front_door (lock.lock). locked");
  assert.equal(t.runs(), 0, "the unlock did not run");
  assert.equal(await t.answer("yes"), "Done: Unlock lock.front_door (lock.unlock). unlocked (1)", "one waits now");
  assert.deepEqual(t.outcomes.map((o) => [o.id, o.outcome]), [
    ["a000", "declined"],
    ["a001", "declined"],
    ["a002", "confirmed"],
    ["a003", "confirmed"],
  ]);
});

Deno.test("decide (the console): approve runs the action once with the chat path's report; deny and a later id run nothing", async () => {
  const t = setup();
  const member = { eventId: "e4", source: "qq:private:10002", sender: "10002", trust: "household" as const };
  await t.confirmations.ask({ ...t.unlock, turn: member });
  assert.deepEqual(t.confirmations.status(), [{
    id: "a000",
    summary: "Unlock lock.front_door (lock.unlock)",
    channel: "qq:private:10001",
    asked_by: "10002",
    asked_on: "qq:private:10002",
    trust: "household",
    expires_at: new Date(t.clock.now() + 120_000).toISOString(),
  }]);
  assert.deepEqual(await t.confirmations.decide("a000", "approve", { source: "console" }), {
    id: "a000",
    outcome: "confirmed",
    result: "unlocked (1)",
  });
  assert.equal(t.runs(), 1);
  assert.equal(await t.confirmations.decide("a000", "approve", { source: "console" }), undefined, "it ran: gone");
  assert.equal(await t.answer("yes"), undefined, "nor can the chat run it again");
  assert.equal(t.runs(), 1);

  await t.confirmations.ask({ ...t.unlock, turn: member });
  assert.deepEqual(await t.confirmations.decide("a001", "deny", { source: "console" }), {
    id: "a001",
    outcome: "declined",
  });
  assert.equal(await t.confirmations.decide("a001", "approve", { source: "console" }), undefined);

  await t.confirmations.ask({ ...t.unlock, turn: member });
  t.clock.advance(120_001);
  assert.equal(await t.confirmations.decide("a002", "approve", { source: "console" }), undefined, "expired");
  assert.equal(t.runs(), 1);
  assert.deepEqual(t.outcomes.map((o) => [o.id, o.outcome, o.decidedOn]), [
    ["a000", "confirmed", "console"],
    ["a001", "declined", "console"],
    ["a002", "expired", undefined],
  ]);
});

Deno.test("decide: an approved action that fails is confirmed with the failure as its result, once", async () => {
  const t = setup();
  let runs = 0;
  await t.confirmations.ask({
    summary: "Open cover.garage (cover.open_cover)",
    run: () => (runs++, Promise.reject(new Error("Home Assistant is not connected"))),
    turn: OWNER_TURN,
  });
  assert.deepEqual(await t.confirmations.decide("a000", "approve", { source: "console" }), {
    id: "a000",
    outcome: "confirmed",
    result: "Confirmed, but it failed: Home Assistant is not connected",
  });
  assert.equal(runs, 1);
  assert.equal(t.outcomes[0]!.result, "Confirmed, but it failed: Home Assistant is not connected");
});

Deno.test("the owner's /confirm decides on any of their own chats (QQ, Telegram, WeChat), and on nobody else's", async () => {
  const t = setup("qq:private:10001", ["qq:private:10001", "telegram:private:777000"]);
  await t.confirmations.ask({
    ...t.unlock,
    turn: { eventId: "e3", source: "qq:group:555", sender: "10002", trust: "guest" },
  });
  assert.match(
    await t.answer("/confirm a000", "owner", "weixin:private:o9x@im.wechat") ?? "",
    /, not on weixin:private:o9x@im\.wechat; nothing was done$/,
  );
  assert.equal(
    await t.answer("/confirm a000", "owner", "telegram:private:777000"),
    "Done: Unlock lock.front_door (lock.unlock). unlocked (1)",
  );
  assert.deepEqual(t.outcomes.map((o) => [o.outcome, o.decidedOn]), [["confirmed", "telegram:private:777000"]]);
});
