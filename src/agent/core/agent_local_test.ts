import assert from "node:assert/strict";
import { getLogger } from "@logtape/logtape";
import { RecordingDevice } from "../../../tests/support/recording_device.ts";
import { ScriptedProvider } from "../../../tests/support/scripted_provider.ts";
import { systemClock } from "../../clock.ts";
import { ContextWindow } from "../../context/context_window.ts";
import { EMBEDDED_INTENT_FILES } from "../../intents/embedded_intents.ts";
import { LocalIntents } from "../../intents/local_intents.ts";
import { IntentMatcher } from "../../intents/matcher.ts";
import type { HomeTarget } from "../../io/home_target.ts";
import { IOManager } from "../../io/io_manager.ts";
import { RouteTable } from "../../io/route_table.ts";
import { ProviderError } from "../../provider/provider_error.ts";
import { ToolRegistry } from "../../tools/registry.ts";
import type { Persona } from "../personal.ts";
import { Agent } from "./agent.ts";
import { TurnTraces } from "./turn_traces.ts";

const PERSONA: Persona = Object.freeze({ text: "You are Alfred, the butler.\n", source: "test", sha256: "x" });
const MATCHER = IntentMatcher.compile(EMBEDDED_INTENT_FILES);

/** A device with one lamp local intents may switch, through its own tool. */
class LampDevice extends RecordingDevice {
  on = false;
  constructor() {
    super("house", {
      tools: [{
        name: "lamp_switch",
        description: "Switch the lamp",
        parameters: { type: "object", properties: { on: { type: "boolean" } }, required: ["on"] },
        effect: "act",
        execute: (args) => {
          this.on = args.on === true;
          return `lamp ${this.on ? "on" : "off"}`;
        },
      }],
    });
  }

  homeTargets(): readonly HomeTarget[] {
    return [{
      id: "house:lamp",
      kind: "light",
      names: ["Kitchen light"],
      places: ["Kitchen"],
      state: this.on ? "on" : "off",
      plan: (action) =>
        action.kind === "turn_on" || action.kind === "turn_off"
          ? { tool: "lamp_switch", args: { on: action.kind === "turn_on" } }
          : undefined,
    }];
  }
}

async function setup(mode: "prefer" | "fallback" | "off", modelDown?: () => string | undefined) {
  const clock = systemClock;
  const tools = new ToolRegistry({ clock });
  const io = new IOManager({ clock, routes: new RouteTable({}, {}, undefined), tools, logger: getLogger(["test"]) });
  const provider = new ScriptedProvider({});
  const house = new LampDevice();
  const phone = new RecordingDevice("phone");
  const timer = new RecordingDevice("timer");
  await io.replaceDevices([house, phone, timer]);
  const context = new ContextWindow({ maxEntries: 30, maxTokens: 48_000 });
  const traces = new TurnTraces({ clock });
  const intents = new LocalIntents({
    matcher: MATCHER,
    targets: () => io.homeTargets(),
    clock,
    timezone: "UTC",
    persona: () => PERSONA.text,
    modelUp: () => modelDown?.() === undefined,
  });
  const agent = new Agent({
    io,
    provider,
    tools,
    persona: PERSONA,
    clock,
    logger: getLogger(["test"]),
    maxToolRounds: 5,
    context,
    keepReasoning: false,
    traces,
    localIntents: { intents, mode },
    ...(modelDown ? { modelDown } : {}),
  });
  await agent.start();
  const close = async () => {
    await agent.stop();
    await io.close();
  };
  const say = async (text: string, source = "phone", payload: Record<string, unknown> = {}) => {
    const device = source.startsWith("timer:") ? timer : phone;
    const event = device.emit(text, "alice", source);
    // The timer's payload carries the schedule's own text (the agent reads it when the turn begins).
    Object.assign(event.payload, payload);
    return await device.doneFor(event.id);
  };
  return { provider, house, phone, agent, context, traces, close, say };
}

Deno.test("prefer: a command the templates cover costs no model call; anything else goes to the model as before", async () => {
  const { provider, house, context, traces, close, say } = await setup("prefer");
  try {
    const done = await say("turn on the kitchen light");
    assert.equal(done.rounds, 0);
    assert.match(done.reply, /Kitchen light turned on/);
    assert.equal(house.on, true);
    assert.equal(provider.requests.length, 0, "no model call");
    assert.equal(context.size, 2, "the exchange is in the context like any other");
    assert.match(traces.list()[0]!.local_intent ?? "", /^HassTurnOn \(en\.yaml:\d+\)$/);

    provider.enqueue({ content: "Time to call mum: shall I dial?" });
    const fired = await say("[Scheduled by alice; due 2026-12-04 19:00 (UTC)] call mum", "timer:s-1", {
      schedule: "s-1",
      schedule_text: "call mum",
    });
    assert.equal(fired.reply, "Time to call mum: shall I dial?", "with a model up a reminder is the model's to act on");

    provider.enqueue({ content: "Why did the lamp go to school? To get brighter." });
    const joke = await say("tell me a joke");
    assert.equal(joke.reply, "Why did the lamp go to school? To get brighter.");
    assert.equal(provider.requests.length, 2);
    assert.equal(traces.list()[0]!.local_intent, undefined);
  } finally {
    await close();
  }
});

Deno.test("prefer: an unknown name is left to the model when one answers", async () => {
  const { provider, close, say } = await setup("prefer");
  try {
    provider.enqueue({ content: "There is no sauna here." });
    const done = await say("turn on the sauna");
    assert.equal(done.reply, "There is no sauna here.");
    assert.equal(provider.requests.length, 1);
  } finally {
    await close();
  }
});

Deno.test("fallback: a model that fails is answered locally — the command runs; chat fails at once saying what works", async () => {
  const { provider, house, close, say } = await setup("fallback");
  try {
    provider.enqueue(new ProviderError("network", "Cannot reach api.deepseek.com: connection refused"));
    const done = await say("turn on the kitchen light");
    assert.equal(done.error, undefined);
    assert.equal(house.on, true);
    assert.match(done.reply, /Kitchen light turned on/);

    provider.enqueue(new ProviderError("network", "Cannot reach api.deepseek.com: connection refused"));
    const chat = await say("tell me a joke");
    assert.equal(chat.error?.code, "network", "the provider's code: the same HTTP status as before");
    assert.match(chat.error?.message ?? "", /not answering \(Cannot reach api\.deepseek\.com: connection refused\)/);
    assert.match(chat.error?.message ?? "", /Without it I can still switch lights and devices/);

    provider.enqueue(new ProviderError("bad_request", "The LLM server refused the request (HTTP 400)"));
    const refused = await say("what is love");
    assert.equal(refused.error?.code, "bad_request", "a refused request is not an outage: no local answer");
  } finally {
    await close();
  }
});

Deno.test("fallback: with no model up nothing is sent to one; an unknown name is answered with the known ones", async () => {
  const { provider, house, close, say } = await setup("fallback", () => "all providers are down");
  try {
    const done = await say("turn on the kitchen light");
    assert.equal(house.on, true);
    assert.match(done.reply, /Kitchen light/);
    const unknown = await say("turn on the sauna");
    assert.match(unknown.reply, /I don't know a device called "sauna"/);
    assert.match(unknown.reply, /Kitchen light/, "names what it knows");
    assert.equal(provider.requests.length, 0);
  } finally {
    await close();
  }
});

Deno.test("a reminder that fires with no model up says its own text; off mode never runs a local command", async () => {
  const down = () => "connection refused";
  {
    const { provider, close, say } = await setup("fallback", down);
    try {
      const fired = await say("[Scheduled by alice; due 2026-12-04 19:00 (UTC)] call mum", "timer:s-1", {
        schedule: "s-1",
        schedule_text: "call mum",
      });
      assert.equal(fired.reply, "⏰ Reminder: call mum");
      assert.equal(provider.requests.length, 0);
    } finally {
      await close();
    }
  }
  const { house, close, say } = await setup("off", down);
  try {
    const done = await say("turn on the kitchen light");
    assert.equal(house.on, false, "off: the command is not run locally");
    assert.equal(done.error?.code, "unavailable");
    assert.match(done.error?.message ?? "", /not answering \(connection refused\)/);
  } finally {
    await close();
  }
});
