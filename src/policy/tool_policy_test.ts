import assert from "node:assert/strict";
import { FakeClock } from "../../tests/support/fake_clock.ts";
import { testToolContext } from "../../tests/support/tool_context.ts";
import type { GateCall } from "../tools/gate.ts";
import { ToolPolicy } from "./tool_policy.ts";

const call = (
  tool: string,
  trust: GateCall["trust"],
  effect: GateCall["effect"] = "act",
  taint: GateCall["trust"] = trust,
): GateCall => ({ tool, owner: "core", allow: "anyone", effect, trust, taint });

Deno.test("the first rule that matches and speaks for the asker's trust decides; else a sensitive call waits", () => {
  const asked: unknown[] = [];
  const policy = new ToolPolicy({
    rules: {
      "mcp__files__*": "confirm",
      gpio_set: { guest: "deny", household: "confirm" },
      "gpio_*": "allow",
      "a.b": "deny",
    },
    confirmations: { ask: (request) => (asked.push(request), Promise.resolve("asked")) },
    clock: new FakeClock(),
  });
  assert.deepEqual(policy.decide(call("mcp__files__write_file", "owner")), {
    decision: "confirm",
    rule: 'agent.tool_policy "mcp__files__*"',
  });
  assert.deepEqual(policy.decide(call("gpio_set", "guest")), {
    decision: "deny",
    rule: 'agent.tool_policy "gpio_set" for guest',
  });
  assert.equal(policy.decide(call("gpio_set", "household")).decision, "confirm");
  // The owner has no word in gpio_set's rule: the next pattern that matches decides.
  assert.deepEqual(policy.decide(call("gpio_set", "owner")), { decision: "allow", rule: 'agent.tool_policy "gpio_*"' });
  // "." is a character, not "any character"; no rule: the effect decides.
  assert.deepEqual(policy.decide(call("aXb", "owner", "sensitive")), {
    decision: "confirm",
    rule: "a sensitive action",
  });
  assert.deepEqual(policy.decide(call("a.b", "owner", "sensitive")).decision, "deny");
  assert.deepEqual(policy.decide(call("knowledge_search", "guest", "read")), { decision: "allow", rule: "no rule" });
});

Deno.test("a held call goes to the confirmations with the turn that asked", async () => {
  const asked: Array<{ summary: string; turn: unknown }> = [];
  const policy = new ToolPolicy({
    rules: {},
    confirmations: { ask: (request) => (asked.push(request), Promise.resolve("Not done yet")) },
    clock: new FakeClock(),
  });
  const context = testToolContext("qq:private:2", "household");
  const told = await policy.hold({
    summary: "Unlock",
    rule: "a sensitive action",
    run: () => Promise.resolve(""),
    context,
  });
  assert.equal(told, "Not done yet");
  assert.deepEqual(asked.map((a) => [a.summary, a.turn]), [[
    "Unlock",
    { eventId: context.eventId, source: "qq:private:2", sender: context.sender, trust: "household" },
  ]]);
});

Deno.test("a tainted turn: act and speak wait for the owner, read runs; a rule still decides first; the audit keeps them", () => {
  const clock = new FakeClock();
  const policy = new ToolPolicy({
    rules: { "light_*": { owner: "allow" } },
    confirmations: { ask: () => Promise.resolve("") },
    clock,
  });
  assert.deepEqual(policy.decide(call("gpio_set", "owner", "act", "guest")), {
    decision: "confirm",
    rule: "a turn that holds words of trust guest, below the asker's (owner), may not act without the owner",
  });
  assert.match(policy.decide(call("output_send", "household", "speak", "guest")).rule, /may not speak to others/);
  assert.equal(policy.decide(call("knowledge_search", "owner", "read", "guest")).decision, "allow");
  assert.equal(policy.decide(call("gpio_set", "guest", "act", "guest")).decision, "allow", "a guest's own words");
  assert.equal(policy.decide(call("light_on", "owner", "act", "guest")).decision, "allow", "the owner allowed lights");
  assert.deepEqual(policy.decide(call("light_on", "owner", "sensitive")), {
    decision: "confirm",
    rule: 'a sensitive action (agent.tool_policy "light_*" for owner allows the tool, not its sensitive calls)',
  });

  const context = testToolContext("qq:private:2", "household");
  const settle = (tool: string, effect: GateCall["effect"]) =>
    policy.settled({
      call: call(tool, "household", effect),
      context,
      decision: { decision: "allow", rule: "no rule" },
      result: "x".repeat(400),
      ok: true,
    });
  settle("knowledge_search", "read");
  settle("gpio_set", "act");
  const owner = policy.actions({ name: "owner", trust: "owner" });
  assert.deepEqual(owner.map((entry) => [entry.tool, entry.sender, entry.result.length]), [[
    "gpio_set",
    context.sender,
    300,
  ]]);
  assert.deepEqual(policy.actions({ name: context.sender, trust: "household" }).length, 1);
  assert.deepEqual(policy.actions({ name: "someone else", trust: "household" }), []);
});
