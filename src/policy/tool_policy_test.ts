import assert from "node:assert/strict";
import { testToolContext } from "../../tests/support/tool_context.ts";
import type { GateCall } from "../tools/gate.ts";
import { ToolPolicy } from "./tool_policy.ts";

const call = (tool: string, trust: GateCall["trust"], effect: GateCall["effect"] = "act"): GateCall => ({
  tool,
  owner: "core",
  allow: "anyone",
  effect,
  trust,
});

Deno.test("the first rule that matches and speaks for the asker's trust decides; else a sensitive call waits", () => {
  const asked: unknown[] = [];
  const policy = new ToolPolicy({
    "mcp__files__*": "confirm",
    gpio_set: { guest: "deny", household: "confirm" },
    "gpio_*": "allow",
    "a.b": "deny",
  }, { ask: (request) => (asked.push(request), Promise.resolve("asked")) });
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
  const policy = new ToolPolicy({}, { ask: (request) => (asked.push(request), Promise.resolve("Not done yet")) });
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
