/**
 * `deno task bench:policy` (issue 34): what the one policy gate (`ToolPolicy` in `ToolRegistry`) costs, against
 * today's registry path without a gate — the anchor — in the same process and run.
 *
 * - Per tool call: `ToolRegistry.call` of a small tool (one string argument checked by its schema, a short string
 *   result) with effect `read` and with effect `act`, without a gate (anchor) and with `ToolPolicy`: no rules; 50
 *   rules (patterns and per-trust maps, none of which decides for the called tools, so every rule is tested and the
 *   effect decides: the longest path of `decide`); and an `act` call in a tainted turn (a household member's turn that
 *   holds a guest's words), which the gate holds — the confirmations stub's `ask` resolves at once, so what is
 *   measured is the gate's own path (the summary, the held run, the audit); the handler does not run (no deadline
 *   timer, no signal), so this path can cost less than the anchor. Every `act` call is audited. 20 rounds ×
 *   5,000 calls per case after one round of warm-up, the cases interleaved round by round; each call timed alone.
 * - Per turn: what one turn pays — `listing(trust)` (the gate's deny filter runs `decide` once per tool) over 40 and
 *   over 300 registered tools, then 3 calls (`read`, `read`, `act`) — without and with the gate.
 * - The audit's memory: JS heap held by 500 audited calls (the audit keeps the newest 500), after GC, measured over
 *   several policies at once; with short results and with 4,000-character results (an MCP tool's answer), whose
 *   300-character cut in the audit is a V8 sliced string that keeps the whole result alive.
 *
 * Run: deno task bench:policy (writes bench/out/policy/results.json; with --record, bench/policy/results.json).
 */

import { systemClock } from "../../src/clock.ts";
import type { Trust } from "../../src/identity/trust.ts";
import { type PolicyRules, ToolPolicy } from "../../src/policy/tool_policy.ts";
import { type ToolOwner, ToolRegistry } from "../../src/tools/registry.ts";
import type { Tool, ToolContext, ToolEffect } from "../../src/tools/tool.ts";
import { environment, percentile, writeResults } from "../support/report.ts";

const ROUNDS = 20;
const CALLS_PER_ROUND = 5_000;
const TURNS_PER_ROUND = 500;
const AUDIT_CALLS = 500;
const AUDIT_POLICIES = 10;

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) console.warn("no gc(): run through deno task bench:policy (--v8-flags=--expose-gc) for the memory figures");

// ---- The tools, the rules, the turns ----

const PARAMETERS = {
  type: "object",
  properties: { room: { type: "string", description: "Which room" } },
  required: ["room"],
  additionalProperties: false,
};

let executed = 0;
function smallTool(name: string, effect: ToolEffect): Tool {
  return {
    name,
    description: `Bench tool ${name}: does one small thing in a room.`,
    parameters: PARAMETERS,
    allow: "anyone",
    effect,
    // A fresh string per call, as a real handler's result is.
    execute: (args) => `${name}: ${String(args.room)} done (#${++executed})`,
  };
}

const READ = "bench_read";
const ACT = "bench_act";
const ARGS = '{"room":"kitchen"}';

/**
 * 50 rules as a large household might write them: MCP servers confirmed or denied to guests, GPIO pins per trust,
 * Home Assistant patterns. `bench_*` matches the called tools but speaks only for guests, so for a household member
 * every rule is tested and the effect decides.
 */
function fiftyRules(): PolicyRules {
  const rules: Record<string, PolicyRules[string]> = { "bench_*": { guest: "deny" } };
  for (let i = 0; i < 20; i++) {
    rules[`mcp__srv${i}__*`] = i % 2 === 0 ? { guest: "deny", household: "confirm" } : "confirm";
  }
  for (let i = 0; i < 15; i++) {
    rules[`gpio_${i}`] = { guest: "deny", household: i % 3 === 0 ? "deny" : "confirm" };
  }
  for (let i = 0; i < 14; i++) rules[`ha_*_${i}`] = i % 2 === 0 ? "allow" : { guest: "deny", household: "deny" };
  if (Object.keys(rules).length !== 50) throw new Error(`expected 50 rules, got ${Object.keys(rules).length}`);
  return rules;
}

/** `count` tools besides the two called ones: homed's, devices' (GPIO, Home Assistant) and MCP servers'. */
function fillerTools(count: number): Array<{ tool: Tool; owner: ToolOwner }> {
  const effects: NonNullable<Tool["effect"]>[] = [
    "read",
    "act",
    "speak",
    (args) => (args.room === "front door" ? "sensitive" : "act"),
  ];
  return Array.from({ length: count }, (_, i) => {
    const [name, owner]: [string, ToolOwner] = [
      [`core_tool_${i}`, "core"] as [string, ToolOwner],
      [`gpio_${i}`, "device:gpio"] as [string, ToolOwner],
      [`ha_light_${i}`, "device:ha"] as [string, ToolOwner],
      [`mcp__srv${i % 25}__tool_${i}`, `mcp:srv${i % 25}`] as [string, ToolOwner],
    ][i % 4]!;
    return { tool: { ...smallTool(name, "read"), effect: effects[Math.floor(i / 4) % effects.length]! }, owner };
  });
}

type Gate = "none" | "no rules" | "50 rules";

const ask = () => Promise.resolve("Not done yet: it waits for the owner (bench stub).");

function makeRegistry(gate: Gate, filler = 0): { registry: ToolRegistry; policy: ToolPolicy | undefined } {
  const policy = gate === "none" ? undefined : new ToolPolicy({
    rules: gate === "50 rules" ? fiftyRules() : {},
    confirmations: { ask },
    clock: systemClock,
  });
  const registry = new ToolRegistry({ clock: systemClock, ...(policy ? { gate: policy } : {}) });
  registry.register(smallTool(READ, "read"));
  registry.register(smallTool(ACT, "act"));
  for (const { tool, owner } of fillerTools(filler)) registry.register(tool, owner);
  return { registry, policy };
}

function context(trust: Trust, lowestTrustSeen?: Trust): ToolContext {
  let channel = "qq:private:2";
  return {
    eventId: "bench-event",
    source: "qq:private:2",
    sender: "a household member",
    trust,
    signal: new AbortController().signal,
    ...(lowestTrustSeen === undefined ? {} : { lowestTrustSeen }),
    replyChannel: () => channel,
    setReplyChannel: (next) => void (channel = next),
  };
}

const HOUSEHOLD = context("household");
/** A household member's turn whose prompt holds a guest's words: its `act` calls wait for the owner. */
const TAINTED = context("household", "guest");

// ---- Timing ----

interface Case {
  label: string;
  /** The anchor row this case is compared with. */
  anchor?: string;
  run(): Promise<unknown>;
  samples: number[];
}

function callCase(label: string, gate: Gate, tool: string, ctx: ToolContext, anchor?: string): Case {
  const { registry } = makeRegistry(gate);
  const expectHeld = ctx === TAINTED;
  return {
    label,
    ...(anchor === undefined ? {} : { anchor }),
    run: async () => {
      const outcome = await registry.call(tool, ARGS, ctx);
      if (!outcome.ok || outcome.content.startsWith("Not done") !== expectHeld) {
        throw new Error(`${label}: unexpected outcome ${JSON.stringify(outcome)}`);
      }
    },
    samples: [],
  };
}

function turnCase(label: string, gate: Gate, tools: number, anchor?: string): Case {
  // `tools` registered in all: the two called ones and the rest.
  const { registry } = makeRegistry(gate, tools - 2);
  if (registry.listing().length !== tools) throw new Error(`${label}: ${registry.listing().length} tools`);
  return {
    label,
    ...(anchor === undefined ? {} : { anchor }),
    run: async () => {
      // A turn by a household member: the tools it may be offered, then three calls.
      const view = registry.view();
      const listed = view.listing(HOUSEHOLD.trust);
      if (listed.length < 2) throw new Error(`${label}: listing lost the called tools`);
      await view.call(READ, ARGS, HOUSEHOLD);
      await view.call(READ, ARGS, HOUSEHOLD);
      await view.call(ACT, ARGS, HOUSEHOLD);
    },
    samples: [],
  };
}

/** One round of `count` runs of each case, interleaved case by case so drift and noise fall on all of them. */
async function measure(cases: Case[], count: number, rounds: number): Promise<void> {
  for (let round = -1; round < rounds; round++) { // round -1: warm-up, not kept
    for (const item of round % 2 === 0 ? cases : [...cases].reverse()) {
      for (let i = 0; i < count; i++) {
        const start = performance.now();
        await item.run();
        const end = performance.now();
        if (round >= 0) item.samples.push((end - start) * 1000);
      }
    }
  }
}

const round = (x: number, digits = 2) => Math.round(x * 10 ** digits) / 10 ** digits;
const mean = (values: readonly number[]) => values.reduce((sum, x) => sum + x, 0) / values.length;

interface Row {
  p50_us: number;
  p99_us: number;
  mean_us: number;
  n: number;
  anchor?: string;
  delta_p50_us?: number;
  delta_mean_us?: number;
}

function rows(cases: Case[]): Record<string, Row> {
  const stats = new Map(cases.map((c) => [c.label, {
    p50: percentile(c.samples, 50),
    p99: percentile(c.samples, 99),
    mean: mean(c.samples),
  }]));
  const out: Record<string, Row> = {};
  for (const c of cases) {
    const s = stats.get(c.label)!;
    const a = c.anchor === undefined ? undefined : stats.get(c.anchor);
    out[c.label] = {
      p50_us: round(s.p50),
      p99_us: round(s.p99),
      mean_us: round(s.mean),
      n: c.samples.length,
      ...(a && c.anchor !== undefined
        ? { anchor: c.anchor, delta_p50_us: round(s.p50 - a.p50), delta_mean_us: round(s.mean - a.mean) }
        : {}),
    };
  }
  return out;
}

function table(title: string, data: Record<string, Row>): string {
  const header = [title, "p50 µs", "p99 µs", "mean µs", "Δ p50 µs", "Δ mean µs"];
  const body = Object.entries(data).map(([label, r]) => [
    label,
    r.p50_us.toFixed(2),
    r.p99_us.toFixed(2),
    r.mean_us.toFixed(2),
    r.delta_p50_us === undefined ? "—" : `${r.delta_p50_us >= 0 ? "+" : ""}${r.delta_p50_us.toFixed(2)}`,
    r.delta_mean_us === undefined ? "—" : `${r.delta_mean_us >= 0 ? "+" : ""}${r.delta_mean_us.toFixed(2)}`,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((line) => line[i]!.length)));
  const line = (cells: string[]) =>
    `| ${cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join(" | ")} |`;
  const rule = `| ${widths.map((w, i) => (i === 0 ? "-".repeat(w) : `${"-".repeat(w - 1)}:`)).join(" | ")} |`;
  return [line(header), rule, ...body.map(line)].join("\n");
}

// ---- Per call ----

const READ_ANCHOR = "read, no gate (anchor)";
const ACT_ANCHOR = "act, no gate (anchor)";
const callCases = [
  callCase(READ_ANCHOR, "none", READ, HOUSEHOLD),
  callCase("read, gate, no rules", "no rules", READ, HOUSEHOLD, READ_ANCHOR),
  callCase("read, gate, 50 rules", "50 rules", READ, HOUSEHOLD, READ_ANCHOR),
  callCase(ACT_ANCHOR, "none", ACT, HOUSEHOLD),
  callCase("act, gate, no rules (audited)", "no rules", ACT, HOUSEHOLD, ACT_ANCHOR),
  callCase("act, gate, 50 rules (audited)", "50 rules", ACT, HOUSEHOLD, ACT_ANCHOR),
  callCase("act, tainted turn, held, not run (50 rules)", "50 rules", ACT, TAINTED, ACT_ANCHOR),
];
await measure(callCases, CALLS_PER_ROUND, ROUNDS);
const perCall = rows(callCases);

// ---- Per turn ----

const turnCases: Case[] = [];
for (const tools of [40, 300]) {
  const anchor = `${tools} tools, no gate (anchor)`;
  turnCases.push(
    turnCase(anchor, "none", tools),
    turnCase(`${tools} tools, gate, no rules`, "no rules", tools, anchor),
    turnCase(`${tools} tools, gate, 50 rules`, "50 rules", tools, anchor),
  );
}
await measure(turnCases, TURNS_PER_ROUND, ROUNDS);
const perTurn = rows(turnCases);

// The listing alone, to split a turn's cost: how many tools the 50 rules deny a household member (and a guest).
const listed = Object.fromEntries([40, 300].map((tools) => {
  const { registry } = makeRegistry("50 rules", tools - 2);
  return [`${tools} tools`, {
    household: registry.listing("household").length,
    guest: registry.listing("guest").length,
  }];
}));

// ---- The audit's memory ----

async function heapAfterGc(): Promise<number> {
  for (let i = 0; i < 3; i++) {
    gc?.();
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return Deno.memoryUsage().heapUsed;
}

/** Heap held per policy by `AUDIT_CALLS` audited calls whose results are `resultChars` long, over several policies. */
async function auditBytes(resultChars: number): Promise<number> {
  const pad = "x".repeat(Math.max(0, resultChars - 40));
  const setups = Array.from({ length: AUDIT_POLICIES }, () => {
    const policy = new ToolPolicy({ rules: {}, confirmations: { ask }, clock: systemClock });
    const registry = new ToolRegistry({ clock: systemClock, gate: policy });
    registry.register({ ...smallTool(ACT, "act"), execute: (args) => `${String(args.room)}: ${++executed} ${pad}` });
    return { policy, registry };
  });
  const before = await heapAfterGc();
  for (const { registry } of setups) {
    for (let i = 0; i < AUDIT_CALLS; i++) await registry.call(ACT, ARGS, HOUSEHOLD);
  }
  const after = await heapAfterGc();
  for (const { policy } of setups) {
    if (policy.actions({ name: "owner", trust: "owner" }).length !== AUDIT_CALLS) throw new Error("audit not full");
  }
  return (after - before) / AUDIT_POLICIES;
}

const auditShort = await auditBytes(60);
const auditLong = await auditBytes(4_000);

// ---- Report ----

const env = await environment();
console.log(`bench:policy at ${env.commit} (Deno ${env.deno}, ${env.cpu})\n`);
console.log(table(`per call (${ROUNDS} × ${CALLS_PER_ROUND.toLocaleString("en")})`, perCall));
console.log();
console.log(table(`per turn: listing + 3 calls (${ROUNDS} × ${TURNS_PER_ROUND})`, perTurn));
console.log();
console.log(`listing with 50 rules (tools offered to a household member / a guest): ${JSON.stringify(listed)}`);
const kb = (bytes: number) => `${round(bytes / 1024, 1)} KB (${Math.round(bytes / AUDIT_CALLS)} B a call)`;
console.log(
  `audit memory, ${AUDIT_CALLS} audited calls: ${kb(auditShort)} with 60-char results, ` +
    `${kb(auditLong)} with 4,000-char results${gc ? "" : " (no gc(): not meaningful)"}`,
);

await writeResults(new URL("./results.json", import.meta.url), {
  commit: env.commit,
  deno: env.deno,
  cpu: env.cpu,
  rounds: ROUNDS,
  calls_per_round: CALLS_PER_ROUND,
  turns_per_round: TURNS_PER_ROUND,
  rules: 50,
  per_call: perCall,
  per_turn: perTurn,
  listing_with_50_rules: listed,
  audit_memory: {
    calls: AUDIT_CALLS,
    policies_measured: AUDIT_POLICIES,
    gc: gc !== undefined,
    short_result_chars: 60,
    short_result_bytes: Math.round(auditShort),
    long_result_chars: 4_000,
    long_result_bytes: Math.round(auditLong),
  },
});
