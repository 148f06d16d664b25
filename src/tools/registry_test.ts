import assert from "node:assert/strict";
import { FakeClock } from "../../tests/support/fake_clock.ts";
import { ToolRegistry } from "./registry.ts";
import { testToolContext } from "../../tests/support/tool_context.ts";
import type { Tool } from "./tool.ts";

const context = testToolContext();

const lamp: Tool = {
  name: "lamp_set",
  description: "Switch a lamp",
  allow: "household",
  parameters: {
    type: "object",
    properties: { room: { type: "string" }, on: { type: "boolean" } },
    required: ["room", "on"],
    additionalProperties: false,
  },
  execute: (args) => ({ room: args.room, on: args.on }),
};

Deno.test("a valid call runs the handler and returns its result as JSON", async () => {
  const registry = new ToolRegistry();
  registry.register(lamp);
  assert.deepEqual(await registry.call("lamp_set", '{"room":"客厅","on":true}', context), {
    ok: true,
    content: '{"room":"客厅","on":true}',
  });
  assert.deepEqual(registry.specs().map((spec) => spec.name), ["lamp_set"]);
});

Deno.test("bad names, non-object schemas, invalid schemas and duplicates are refused, naming the tool", () => {
  const registry = new ToolRegistry();
  assert.throws(
    () => registry.register({ ...lamp, name: "lamp.set" }),
    /Tool name "lamp\.set" \(from core\) is invalid/,
  );
  assert.throws(() => registry.register({ ...lamp, name: "x".repeat(65) }), /is invalid: allowed are 1 to 64/);
  assert.throws(
    () => registry.register({ ...lamp, parameters: { type: "array" } }),
    /Tool "lamp_set" \(from core\) has parameters of type "array"; allowed: a JSON Schema with type "object"/,
  );
  assert.throws(
    () => registry.register({ ...lamp, parameters: { type: "object", properties: { a: { type: "nonsense" } } } }),
    /Tool "lamp_set" \(from core\) has an invalid parameters schema/,
  );
  registry.register(lamp);
  assert.throws(
    () => registry.register(lamp, "plugin:x"),
    /"lamp_set" \(from plugin:x\) is already registered by core/,
  );
});

Deno.test("unknown tools, bad JSON, schema violations and handler errors become error results", async () => {
  const registry = new ToolRegistry();
  registry.register(lamp);
  registry.register({ ...lamp, name: "boom", execute: () => Promise.reject(new Error("bulb blew")) });
  const cases: Array<[string, string, RegExp]> = [
    ["nope", "{}", /^Error: unknown tool "nope"; available tools: boom, lamp_set$/],
    ["lamp_set", "{room:", /^Error: arguments of tool "lamp_set" are not valid JSON \(.+\): \{room:$/],
    ["lamp_set", '{"room":"hall"}', /^Error: invalid arguments for tool "lamp_set": missing required field "on"/],
    ["lamp_set", '{"room":1,"on":true}', /field "room" must be string; got \{"room":1,"on":true\}$/],
    ["lamp_set", '{"room":"a","on":true,"x":1}', /unknown field "x"/],
    ["lamp_set", "[1]", /the arguments must be object/],
    ["boom", '{"room":"a","on":true}', /^Error: tool "boom" failed: bulb blew$/],
  ];
  for (const [name, args, pattern] of cases) {
    const outcome = await registry.call(name, args, context);
    assert.equal(outcome.ok, false, `${name} ${args}`);
    assert.match(outcome.content, pattern);
  }
  assert.deepEqual(await registry.call("lamp_set", "", context), {
    ok: false,
    content:
      'Error: invalid arguments for tool "lamp_set": missing required field "room"; missing required field "on"; got {}',
  });
});

Deno.test("replaceOwner swaps one owner's tools at once, or not at all", () => {
  const registry = new ToolRegistry();
  registry.register(lamp);
  registry.replaceOwner("device:tv", [{ ...lamp, name: "tv_on" }, { ...lamp, name: "tv_off" }]);
  assert.deepEqual(registry.specs().map((s) => s.name), ["lamp_set", "tv_off", "tv_on"]);
  assert.throws(
    () => registry.replaceOwner("device:tv", [{ ...lamp, name: "tv_mute" }, { ...lamp, name: "bad name" }]),
    /Tool name "bad name" \(from device:tv\) is invalid/,
  );
  assert.deepEqual(registry.specs().map((s) => s.name), ["lamp_set", "tv_off", "tv_on"]);
  assert.throws(() => registry.replaceOwner("device:tv", [lamp]), /already registered by core/);
  registry.replaceOwner("device:tv", []);
  assert.deepEqual(registry.specs().map((s) => s.name), ["lamp_set"]);
});

Deno.test("a tool that never returns ends as an error result at its deadline, with its signal aborted", async () => {
  const clock = new FakeClock();
  const registry = new ToolRegistry({ clock, defaultTimeoutMs: 30_000 });
  let seen: AbortSignal | undefined;
  registry.register({
    ...lamp,
    name: "hang",
    parameters: { type: "object" },
    execute: (_args, ctx) => {
      seen = ctx.signal;
      return new Promise(() => {});
    },
  });
  registry.register({
    ...lamp,
    name: "slow_but_declared",
    parameters: { type: "object" },
    timeoutMs: 120_000,
    execute: () => new Promise(() => {}),
  });
  const pending = registry.call("hang", "{}", context);
  await clock.timersArmed();
  clock.advance(29_999);
  clock.advance(1);
  assert.deepEqual(await pending, {
    ok: false,
    content:
      'Error: tool "hang" did not finish within 30s (agent.tool_timeout); it was stopped and its result discarded',
  });
  assert.equal(seen?.aborted, true);
  const declared = registry.call("slow_but_declared", "{}", context);
  await clock.timersArmed();
  clock.advance(60_000);
  let settled = false;
  declared.then(() => (settled = true));
  await new Promise((resolve) => setTimeout(resolve, 10));
  assert.equal(settled, false, "a tool's own longer timeout wins over the default");
  clock.advance(60_000);
  assert.equal(
    (await declared).content,
    'Error: tool "slow_but_declared" did not finish within 120s (the tool\'s own timeout); it was stopped and its result discarded',
  );
  assert.throws(
    () => registry.register({ ...lamp, name: "bad_timeout", timeoutMs: -1 }),
    /Tool "bad_timeout" \(from core\) has timeoutMs -1; allowed: a positive number of milliseconds/,
  );
});

Deno.test("a tool still running when its turn is cancelled ends at once", async () => {
  const registry = new ToolRegistry({ clock: new FakeClock() });
  registry.register({ ...lamp, name: "hang", parameters: { type: "object" }, execute: () => new Promise(() => {}) });
  const turn = new AbortController();
  const pending = registry.call("hang", "{}", { ...context, signal: turn.signal });
  turn.abort(new Error("shutdown"));
  assert.deepEqual(await pending, { ok: false, content: 'Error: tool "hang" was cancelled with its turn' });
});

Deno.test("each tool's rule decides who may cause it, before its arguments are even read", async () => {
  const registry = new ToolRegistry();
  const ran: string[] = [];
  for (const allow of ["anyone", "household", "owner"] as const) {
    registry.register({
      ...lamp,
      name: `for_${allow}`,
      allow,
      parameters: { type: "object" },
      execute: () => void ran.push(allow),
    });
  }
  const results: Record<string, boolean[]> = {};
  for (const trust of ["guest", "household", "owner"] as const) {
    const ctx = testToolContext("http", trust);
    results[trust] = [];
    for (const rule of ["anyone", "household", "owner"]) {
      results[trust]!.push((await registry.call(`for_${rule}`, "{not json", ctx)).content.includes("was not run"));
    }
  }
  assert.deepEqual(results, {
    guest: [false, true, true],
    household: [false, false, true],
    owner: [false, false, false],
  });
  assert.deepEqual(ran, [], "bad JSON: nothing ran for those allowed, and the refused were refused first");
  assert.equal(
    (await registry.call("for_owner", "{}", testToolContext("http", "household"))).content,
    'Error: tool "for_owner" is for the owner only; this message came from "a household" (trust household), so it ' +
      "was not run. Tell them you cannot do that for them.",
  );
});

Deno.test("a view keeps the table it was taken from: a turn finishes on the tools it started with", async () => {
  const registry = new ToolRegistry();
  const version = (v: string) => ({
    name: "thermo_read",
    description: "Reads the thermometer",
    parameters: { type: "object", properties: {} },
    allow: "anyone" as const,
    execute: () => v,
  });
  registry.replaceOwner("plugin:thermo", [version("v1")]);
  const turn = registry.view();
  registry.replaceOwner("plugin:thermo", [version("v2")]);
  registry.register({ ...version("x"), name: "later_tool" });
  assert.equal((await turn.call("thermo_read", "{}", context)).content, "v1");
  assert.equal((await registry.call("thermo_read", "{}", context)).content, "v2");
  assert.deepEqual(turn.specs().map((spec) => spec.name), ["thermo_read"]);
  assert.deepEqual(registry.specs().map((spec) => spec.name), ["later_tool", "thermo_read"]);
  registry.replaceOwner("plugin:thermo", []);
  assert.equal((await turn.call("thermo_read", "{}", context)).content, "v1", "even once removed");
  assert.match((await registry.call("thermo_read", "{}", context)).content, /^Error: unknown tool "thermo_read"/);
});

Deno.test("the gate: deny refuses naming the rule and leaves the tool off that trust's listing; confirm holds, and the held call runs once; allow runs", async () => {
  const runs: string[] = [];
  const held: Array<{ summary: string; rule: string; run(): Promise<string> }> = [];
  const registry = new ToolRegistry({
    gate: {
      decide: (call) =>
        call.effect === "sensitive" || call.tool === "ask_me"
          ? { decision: "confirm", rule: "a sensitive action" }
          : call.tool === "secret" && call.trust === "guest"
          ? { decision: "deny", rule: 'agent.tool_policy "secret" for guest' }
          : { decision: "allow", rule: "no rule" },
      hold: (request) => (held.push(request), Promise.resolve(`held: ${request.summary}`)),
    },
  });
  const tool = (name: string, extra: Partial<Tool> = {}): Tool => ({
    name,
    description: name,
    parameters: { type: "object", properties: { door: { type: "string" } } },
    allow: "anyone",
    execute: (args) => (runs.push(`${name} ${args.door ?? ""}`.trim()), "done"),
    ...extra,
  });
  registry.register(tool("secret", { effect: "read" }));
  registry.register(tool("ask_me"));
  registry.register(tool("door", {
    effect: (args) => args.door === "back" ? "act" : "sensitive",
    describeCall: (args) => {
      if (args.door === "cellar") throw new Error("there is no cellar door");
      return `Open the ${args.door} door`;
    },
  }));
  const guest = testToolContext("qq:group:1", "guest");
  const refused = await registry.call("secret", "{}", guest);
  assert.deepEqual(refused, {
    ok: false,
    content: 'Error: tool "secret" is refused to trust guest by agent.tool_policy "secret" for guest; it was not ' +
      "run. Tell them you cannot do that for them.",
  });
  assert.deepEqual(registry.listing("guest").map((t) => t.spec.name), ["ask_me", "door"]);
  assert.deepEqual(registry.listing("owner").map((t) => t.spec.name), ["ask_me", "door", "secret"]);

  assert.deepEqual(await registry.call("door", '{"door":"back"}', guest), { ok: true, content: "done" });
  assert.deepEqual(await registry.call("door", '{"door":"front"}', guest), {
    ok: true,
    content: "held: Open the front door",
    held: true,
  });
  const cellar = await registry.call("door", '{"door":"cellar"}', guest);
  assert.equal(cellar.content, 'Error: tool "door" failed: there is no cellar door', "nobody is asked about it");
  assert.equal((await registry.call("ask_me", "{}", guest)).content, "held: ask_me {}");
  assert.deepEqual(runs, ["door back"]);
  assert.deepEqual(held.map((h) => [h.summary, h.rule]), [
    ["Open the front door", "a sensitive action"],
    ["ask_me {}", "a sensitive action"],
  ]);
  assert.equal(await held[0]!.run(), "done");
  await assert.rejects(held[0]!.run(), /Open the front door already ran once/);
  assert.deepEqual(runs, ["door back", "door front"]);
});
