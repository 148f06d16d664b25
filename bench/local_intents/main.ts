/**
 * `deno task bench:intents` (issue 35): what answering the house's everyday commands without a model costs, and how
 * often it is right — over the acceptance test's command set (`tests/fixtures/local_intents/commands.ts`, the house of
 * `house.ts` as Home Assistant targets, built in-process).
 *
 * - Per command: `LocalIntents.understand` (the template match, closed then open pass) and `run` (the plan; tool calls
 *   answered at once by a recorder), timed alone; p50/p99/max. Accuracy as the acceptance test scores it: the exact
 *   calls, no call where none is expected, a held call for what waits for the owner, a `schedule_create` for a
 *   reminder; and the wrong actions (a call nobody asked for).
 * - Beside it, through one `Agent` in `prefer` mode: a turn answered by a local intent against a turn answered by the
 *   model path — the anchor — with a provider that answers at once in-process, so the anchor is homed's own work per
 *   model turn (prompt, reference block, context, tool offer) without the model's seconds.
 *
 * Run: deno task bench:intents (writes bench/out/local_intents/results.json; with --record, the committed file).
 */

import { getLogger } from "@logtape/logtape";
import { systemClock } from "../../src/clock.ts";
import { ContextWindow } from "../../src/context/context_window.ts";
import { Agent } from "../../src/agent/core/agent.ts";
import { EMBEDDED_INTENT_FILES } from "../../src/intents/embedded_intents.ts";
import { LocalIntents } from "../../src/intents/local_intents.ts";
import { IntentMatcher } from "../../src/intents/matcher.ts";
import type { HomeTarget } from "../../src/io/home_target.ts";
import { IOManager } from "../../src/io/io_manager.ts";
import { RouteTable } from "../../src/io/route_table.ts";
import { haTargets } from "../../src/devices/home_assistant/ha_targets.ts";
import { ToolRegistry } from "../../src/tools/registry.ts";
import type { ToolOutcome } from "../../src/tools/tool.ts";
import { type Command, COMMANDS } from "../../tests/fixtures/local_intents/commands.ts";
import { AREAS, CONFIRM, DEVICES, ENTITIES, FLOORS } from "../../tests/fixtures/local_intents/house.ts";
import { RecordingDevice } from "../../tests/support/recording_device.ts";
import { ScriptedProvider } from "../../tests/support/scripted_provider.ts";
import { environment, percentile, writeResults } from "../support/report.ts";

const ROUNDS = 20;
const AGENT_TURNS = 300;

/** The fixture's house as Home Assistant's device would make it. */
function houseTargets(): HomeTarget[] {
  const floors = new Map(FLOORS.map((floor) => [floor.floor_id, floor]));
  return haTargets(ENTITIES.map((entity) => {
    const areaId = entity.area_id ?? DEVICES.find((device) => device.id === entity.device_id)?.area_id;
    const area = AREAS.find((candidate) => candidate.area_id === areaId);
    const floor = area ? floors.get(area.floor_id) : undefined;
    return {
      id: entity.entity_id,
      name: String(entity.attributes?.friendly_name ?? entity.entity_id),
      aliases: entity.aliases ?? [],
      area: area ? { name: area.name, aliases: area.aliases } : undefined,
      floor: floor ? { name: floor.name, aliases: floor.aliases ?? [] } : undefined,
      current: () => ({ state: entity.state, attributes: entity.attributes ?? {} }),
    };
  }));
}

const TARGETS = houseTargets();
const sensitive = (args: Record<string, unknown>) =>
  CONFIRM.includes(String(args.domain)) || CONFIRM.includes(String(args.entity_id));

function intents(): LocalIntents {
  return new LocalIntents({
    matcher: IntentMatcher.compile(EMBEDDED_INTENT_FILES),
    targets: () => TARGETS,
    clock: systemClock,
    timezone: "Asia/Shanghai",
    persona: () => "你是管家阿福。You are Alfred, the butler.",
    modelUp: () => false,
  });
}

interface Outcome {
  calls: Array<Record<string, unknown>>;
  held: number;
  reminders: number;
}

async function runOne(local: LocalIntents, text: string): Promise<{ ms: number; outcome: Outcome }> {
  const outcome: Outcome = { calls: [], held: 0, reminders: 0 };
  const started = performance.now();
  const understood = local.understand(text, { open: true });
  if (understood) {
    await local.run(understood, {
      call: (tool, args): Promise<ToolOutcome> => {
        if (tool === "schedule_create") outcome.reminders++;
        if (tool === "schedule_list") return Promise.resolve({ ok: true, content: "[]" });
        if (tool !== "ha_call_service") return Promise.resolve({ ok: true, content: "{}" });
        if (sensitive(args)) {
          outcome.held++;
          return Promise.resolve({ ok: true, content: "asked", held: true });
        }
        outcome.calls.push(args);
        return Promise.resolve({ ok: true, content: "done" });
      },
      sender: "owner",
      trust: "owner",
    });
  }
  return { ms: performance.now() - started, outcome };
}

/** Right, and the calls nobody asked for. */
function score(command: Command, outcome: Outcome): { right: boolean; wrong: number } {
  const key = (call: { domain?: unknown; service?: unknown; entity_id?: unknown; data?: unknown }) =>
    JSON.stringify([call.domain, call.service, call.entity_id, call.data ?? {}]);
  const got = outcome.calls.map(key).sort();
  const { expect } = command;
  if ("calls" in expect) {
    const wanted = expect.calls.map(key).sort();
    const wrong = got.filter((call) => !wanted.includes(call)).length;
    return { right: JSON.stringify(got) === JSON.stringify(wanted), wrong };
  }
  const wrong = got.length;
  if ("waitsForOwner" in expect) return { right: wrong === 0 && outcome.held > 0, wrong };
  if ("reminder" in expect) return { right: wrong === 0 && outcome.reminders === 1, wrong };
  // A cancel is scored by the acceptance test (it needs the reminders made before it): here, nothing ran.
  return { right: wrong === 0 && outcome.reminders === 0, wrong };
}

async function commandFigures() {
  const local = intents();
  const samples: number[] = [];
  let right = 0;
  let wrong = 0;
  const misses: string[] = [];
  for (let round = 0; round <= ROUNDS; round++) {
    for (const command of COMMANDS) {
      const { ms, outcome } = await runOne(local, command.text);
      if (round === 0) {
        const scored = score(command, outcome);
        if (scored.right) right++;
        else misses.push(command.text);
        wrong += scored.wrong;
      } else samples.push(ms);
    }
  }
  return {
    commands: COMMANDS.length,
    right,
    accuracy: Math.round((right / COMMANDS.length) * 1000) / 1000,
    wrong_actions: wrong,
    misses,
    p50_ms: round3(percentile(samples, 50)),
    p99_ms: round3(percentile(samples, 99)),
    max_ms: round3(Math.max(...samples)),
  };
}

/** One Agent in `prefer` mode: a local turn and a model turn (the anchor), interleaved. */
async function agentFigures() {
  const clock = systemClock;
  const tools = new ToolRegistry({ clock });
  const io = new IOManager({ clock, routes: new RouteTable({}, {}, undefined), tools, logger: getLogger(["bench"]) });
  const house = Object.assign(
    new RecordingDevice("ha", {
      tools: [{
        name: "ha_call_service",
        description: "Call a service",
        parameters: { type: "object", properties: {}, additionalProperties: true },
        execute: () => "done",
      }],
    }),
    { homeTargets: () => TARGETS },
  );
  const phone = new RecordingDevice("phone");
  await io.replaceDevices([house, phone]);
  const provider = new ScriptedProvider({});
  const agent = new Agent({
    io,
    provider,
    tools,
    persona: { text: "你是管家阿福。You are Alfred, the butler.\n", source: "bench", sha256: "x" },
    clock,
    logger: getLogger(["bench"]),
    maxToolRounds: 5,
    context: new ContextWindow({ maxEntries: 30, maxTokens: 48_000 }),
    keepReasoning: false,
    localIntents: { intents: intents(), mode: "prefer" },
  });
  await agent.start();
  const local: number[] = [];
  const model: number[] = [];
  const turn = async (text: string) => {
    const started = performance.now();
    await phone.doneFor(phone.emit(text, "owner", "phone").id);
    return performance.now() - started;
  };
  for (let i = 0; i < AGENT_TURNS; i++) {
    const sample = i >= 20;
    const localMs = await turn(i % 2 ? "turn off the kitchen light" : "把客厅的灯关了");
    provider.enqueue({ content: "好的，这是一个模型的回答。" });
    const modelMs = await turn(i % 2 ? "tell me something about the weather" : "讲个笑话");
    if (sample) {
      local.push(localMs);
      model.push(modelMs);
    }
  }
  await agent.stop();
  await io.close();
  if (provider.requests.length !== AGENT_TURNS) {
    throw new Error(
      `the model was asked ${provider.requests.length} times, not ${AGENT_TURNS}: a local turn reached it`,
    );
  }
  return {
    local_turn: { p50_ms: round3(percentile(local, 50)), p99_ms: round3(percentile(local, 99)) },
    model_turn_anchor: { p50_ms: round3(percentile(model, 50)), p99_ms: round3(percentile(model, 99)) },
  };
}

function round3(value: number): number {
  return Math.round(value * 1000) / 1000;
}

const commands = await commandFigures();
const agent = await agentFigures();
console.log(
  `commands: ${commands.commands}, right ${commands.right} (${(commands.accuracy * 100).toFixed(1)} %), ` +
    `wrong actions ${commands.wrong_actions}`,
);
console.log(`understand + run: p50 ${commands.p50_ms} ms, p99 ${commands.p99_ms} ms, max ${commands.max_ms} ms`);
console.log(
  `agent turn, local intent: p50 ${agent.local_turn.p50_ms} ms, p99 ${agent.local_turn.p99_ms} ms; model path ` +
    `(anchor, a model that answers at once): p50 ${agent.model_turn_anchor.p50_ms} ms, p99 ${agent.model_turn_anchor.p99_ms} ms`,
);
if (commands.misses.length) console.log(`not right here: ${commands.misses.join(" | ")}`);
await writeResults(new URL("./results.json", import.meta.url), {
  ...await environment(),
  rounds: ROUNDS,
  commands,
  agent,
});
