import assert from "node:assert/strict";
import { getLogger } from "@logtape/logtape";
import { RecordingDevice } from "../../../tests/support/recording_device.ts";
import { call, ScriptedProvider } from "../../../tests/support/scripted_provider.ts";
import { systemClock } from "../../clock.ts";
import { IOManager } from "../../io/io_manager.ts";
import { outputTools } from "../../io/output_tools.ts";
import { RouteTable } from "../../io/route_table.ts";
import { ToolRegistry } from "../../tools/registry.ts";
import type { Persona } from "../personal.ts";
import { ProviderError } from "../provider/provider_error.ts";
import { Agent } from "./agent.ts";

const PERSONA: Persona = Object.freeze({ text: "# Test persona\n", source: "test", sha256: "x" });

async function setup(options: { maxToolRounds?: number; contextSize?: number; routes?: Record<string, string> } = {}) {
  const tools = new ToolRegistry();
  const io = new IOManager({
    clock: { ...systemClock, now: () => Date.UTC(2026, 10, 30, 8) },
    routes: new RouteTable(options.routes ?? {}, {}, undefined),
    tools,
    logger: getLogger(["test"]),
  });
  for (const tool of outputTools(io, getLogger(["test"]))) tools.register(tool);
  const provider = new ScriptedProvider({ personaPrefix: PERSONA.text });
  const tv = new RecordingDevice("tv");
  const lamp = new RecordingDevice("lamp");
  await io.replaceDevices([tv, lamp]);
  const agent = new Agent({
    io,
    provider,
    tools,
    persona: PERSONA,
    clock: systemClock,
    logger: getLogger(["test"]),
    maxToolRounds: options.maxToolRounds ?? 10,
    contextSize: options.contextSize ?? 30,
    keepReasoning: false,
  });
  return { io, provider, tv, lamp, agent, tools };
}

async function nextTurn(io: IOManager, agent: Agent) {
  return await agent.handle((await io.next())!);
}

Deno.test("one system message, beginning with the persona; the user message tagged with source and sender", async () => {
  const { io, provider, tv, agent } = await setup();
  provider.enqueue({ content: "Hello" });
  tv.emit("Hi there", "alice", "tv:room1");
  const result = await nextTurn(io, agent);
  assert.deepEqual(result, { eventId: result.eventId, reply: "Hello", channel: "tv:room1", rounds: 1 });
  const messages = provider.requests[0]!.messages;
  assert.equal(messages.filter((m) => m.role === "system").length, 1);
  assert.ok((messages[0]!.content as string).startsWith(PERSONA.text));
  assert.deepEqual(messages[1], { role: "user", content: "[via tv:room1, from alice] Hi there" });
  assert.deepEqual(tv.sent, [{
    target: "tv:room1",
    type: "message",
    payload: { text: "Hello" },
    replyTo: result.eventId,
  }]);
  assert.deepEqual(tv.turnEvents.filter((e) => e.type === "delta"), [], "no streaming unless the input asks for it");
  assert.deepEqual(tv.turnEvents.map((e) => e.type), ["done"]);
  assert.deepEqual(provider.violations, []);
  assert.throws(() => {
    (PERSONA as { text: string }).text = "changed";
  }, TypeError);
  await io.close();
});

Deno.test("an input with payload.stream gets the reply as deltas before done", async () => {
  const { io, provider, tv, agent } = await setup();
  provider.enqueue({ content: "Streamed reply" });
  io.submit({ source: "tv", sender: "owner", type: "message", payload: { text: "hi", stream: true } });
  await nextTurn(io, agent);
  const deltas = tv.turnEvents.filter((e) => e.type === "delta").map((e) => e.type === "delta" ? e.text : "");
  assert.ok(deltas.length > 1);
  assert.equal(deltas.join(""), "Streamed reply");
  assert.equal(tv.turnEvents.at(-1)!.type, "done");
  await io.close();
});

Deno.test("duplicate tool-call ids are made unique so each is answered exactly once", async () => {
  const { io, provider, tv, agent } = await setup();
  provider.enqueue(
    { toolCalls: [call("output_list_channels", {}, "same"), call("output_list_channels", {}, "same")] },
    { content: "done" },
  );
  tv.emit("go");
  await nextTurn(io, agent);
  const second = provider.requests[1]!.messages;
  const assistant = second.find((m) => m.role === "assistant")!;
  assert.deepEqual(assistant.role === "assistant" && assistant.tool_calls?.map((c) => c.id), ["same", "same_2"]);
  assert.deepEqual(
    second.filter((m) => m.role === "tool").map((m) => m.role === "tool" && m.tool_call_id),
    ["same", "same_2"],
  );
  assert.deepEqual(provider.violations, []);
  await io.close();
});

Deno.test("the last allowed round goes without tools; calls asked for anyway are dropped with a note", async () => {
  const { io, provider, tv, agent } = await setup({ maxToolRounds: 1 });
  provider.enqueue({ content: "", toolCalls: [call("output_list_channels"), call("output_send", {}, "b")] });
  tv.emit("go");
  const result = await nextTurn(io, agent);
  assert.equal(provider.requests[0]!.tools, undefined);
  assert.equal(result.reply, "(Stopped after 1 rounds of tool use; 2 further tool calls were not run.)");
  provider.enqueue({ content: "next" });
  tv.emit("again");
  await nextTurn(io, agent);
  assert.deepEqual(provider.requests[1]!.messages.map((m) => m.role), ["system", "user", "assistant", "user"]);
  assert.deepEqual(provider.violations, []);
  await io.close();
});

Deno.test("events are handled in arrival order and a new one never preempts the turn in flight", async () => {
  const { io, provider, tv, agent } = await setup();
  const sentWhenAsked: number[] = [];
  for (const reply of ["r1", "r2", "r3"]) {
    provider.enqueue(() => {
      sentWhenAsked.push(tv.sent.length);
      return { content: reply };
    });
  }
  tv.emit("m1");
  tv.emit("m2");
  tv.emit("m3");
  agent.start();
  while (tv.sent.length < 3) await new Promise((resolve) => setTimeout(resolve, 1));
  await agent.stop(1000);
  assert.deepEqual(sentWhenAsked, [0, 1, 2], "each request starts only after the previous reply went out");
  assert.deepEqual(tv.sent.map((e) => e.payload.text), ["r1", "r2", "r3"]);
  const last = provider.requests[2]!.messages;
  assert.deepEqual(last.filter((m) => m.role === "user").map((m) => m.content), [
    "[via tv, from owner] m1",
    "[via tv, from owner] m2",
    "[via tv, from owner] m3",
  ]);
  await io.close();
});

Deno.test("non-message events start no turn and are shown coalesced in the next prompt", async () => {
  const { io, provider, tv, agent } = await setup();
  provider.enqueue({ content: "It is 23 degrees." });
  for (const value of ["21", "22", "23"]) tv.emit(value, "sensor", "tv:thermo", "temperature");
  tv.emit("How warm is it?");
  agent.start();
  while (tv.sent.length < 1) await new Promise((resolve) => setTimeout(resolve, 1));
  await agent.stop(1000);
  assert.equal(provider.requests.length, 1);
  const system = provider.requests[0]!.messages[0]!.content as string;
  assert.match(
    system,
    /## \[homed\] Recent device events \(recorded, not messages\)\n- .* tv:thermo temperature ×3: \{"value":"23"\}/,
  );
  await io.close();
});

Deno.test("output_set_channel moves the reply; a failed channel falls back to the source", async () => {
  const { io, provider, tv, lamp, agent } = await setup();
  provider.enqueue({ toolCalls: [call("output_set_channel", { channel: "lamp" })] }, { content: "On the lamp" });
  tv.emit("Reply on the lamp");
  const moved = await nextTurn(io, agent);
  assert.equal(moved.channel, "lamp");
  assert.equal(lamp.sent[0]!.payload.text, "On the lamp");

  const broken = new RecordingDevice("fax", { failSend: "paper jam" });
  await io.replaceDevices([tv, lamp, broken]);
  provider.enqueue({ toolCalls: [call("output_set_channel", { channel: "fax" })] }, { content: "Fallback" });
  tv.emit("Reply on the fax");
  const fallback = await nextTurn(io, agent);
  assert.equal(fallback.channel, "tv");
  assert.equal(tv.sent.at(-1)!.payload.text, "Fallback");
  await io.close();
});

Deno.test("an LLM failure reports a clear error, sends it to the channel, and leaves the context as it was", async () => {
  const { io, provider, tv, agent } = await setup();
  provider.enqueue({ content: "first" });
  tv.emit("one");
  await nextTurn(io, agent);
  provider.enqueue(
    { toolCalls: [call("output_list_channels")] },
    new ProviderError("server", "The LLM server at x failed (HTTP 500: boom)", { status: 500 }),
  );
  tv.emit("two");
  const failed = await nextTurn(io, agent);
  assert.deepEqual(failed.error, { code: "server", message: "The LLM server at x failed (HTTP 500: boom)" });
  assert.deepEqual(tv.sent.at(-1), {
    target: "tv",
    type: "error",
    payload: { text: "The LLM server at x failed (HTTP 500: boom)", code: "server" },
    replyTo: failed.eventId,
  });
  provider.enqueue({ content: "third" });
  tv.emit("three");
  await nextTurn(io, agent);
  assert.deepEqual(provider.requests.at(-1)!.messages.map((m) => m.role), ["system", "user", "assistant", "user"]);
  assert.equal(agent.status().failedTurns, 1);
  assert.equal(agent.status().turns, 2);

  tv.emit("");
  const empty = await nextTurn(io, agent);
  assert.deepEqual(empty.error, { code: "bad_input", message: "A message event needs a non-empty payload.text" });
  await io.close();
});

Deno.test("an empty answer is replaced by a visible placeholder", async () => {
  const { io, provider, tv, agent } = await setup();
  provider.enqueue({ content: "   " });
  tv.emit("?");
  assert.equal((await nextTurn(io, agent)).reply, "(The model returned an empty answer.)");
  await io.close();
});

Deno.test("over many tool turns the context stays within its size and every request stays valid", async () => {
  const { io, provider, tv, agent } = await setup({ contextSize: 8 });
  for (let n = 0; n < 20; n++) {
    provider.enqueue({ toolCalls: [call("output_list_channels", {}, `c${n}`)] }, { content: `a${n}` });
    tv.emit(`m${n}`);
    await nextTurn(io, agent);
    assert.ok(agent.status().contextEntries <= 8);
  }
  assert.deepEqual(provider.violations, []);
  await io.close();
});
