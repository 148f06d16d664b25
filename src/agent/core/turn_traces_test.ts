import assert from "node:assert/strict";
import { FakeClock } from "../../../tests/support/fake_clock.ts";
import type { ChatMessage } from "../../provider/provider.ts";
import { TurnTraces } from "./turn_traces.ts";

const PRICES = { input: 2, input_cache_hit: 0.5, output: 8, currency: "CNY" };
const usage = (hit: number, miss: number, out: number) => ({
  promptTokens: hit + miss,
  completionTokens: out,
  totalTokens: hit + miss + out,
  cacheHitTokens: hit,
  cacheMissTokens: miss,
});

function turn(traces: TurnTraces, id: string, knowledge: string, history: ChatMessage[], clock: FakeClock) {
  const recorder = traces.begin({ id, time: clock.now(), source: "http", sender: "owner", trust: "owner", text: id });
  const systemSections = [{ title: "Tools", body: "Use them." }, { title: "Knowledge", body: knowledge }];
  const system: ChatMessage = {
    role: "system",
    content: `# Alfred\n\n## Tools\nUse them.\n\n## Knowledge\n${knowledge}`,
  };
  const messages: ChatMessage[] = [system, ...history, { role: "user", content: `[reference]\n${id}` }];
  const request = recorder.request({
    round: 1,
    persona: "# Alfred",
    systemSections,
    referenceSections: [{ title: "Now", body: "2026-12-01T09:00:00Z" }],
    messages,
    historyEnd: 1 + history.length,
    tools: ["memory_recall"],
  });
  clock.advance(120);
  request.answered({ content: `answer ${id}`, toolCalls: [], finishReason: "stop", usage: usage(64, 36, 10) });
  recorder.finish({ rounds: 1 });
  return messages;
}

Deno.test("turn traces: sections with tokens, latency, cost; the prefix kept, then a changed system section named", () => {
  const clock = new FakeClock();
  const traces = new TurnTraces({ clock, prices: PRICES });
  turn(traces, "t1", "cooking", [], clock);
  const history: ChatMessage[] = [{ role: "user", content: "t1" }, { role: "assistant", content: "answer t1" }];
  turn(traces, "t2", "cooking", history, clock);
  turn(traces, "t3", "cooking, smart_home", [...history, { role: "user", content: "t2" }], clock);

  assert.deepEqual(traces.list().map((summary) => summary.id), ["t3", "t2", "t1"]);
  const first = traces.get("t1")!;
  assert.equal(first.latency_ms, 120);
  assert.equal(first.prompt_tokens, 100);
  // 36 missed at 2, 64 hit at 0.5, 10 out at 8 (per million).
  assert.equal(first.cost, (36 * 2 + 64 * 0.5 + 10 * 8) / 1e6);
  const request = first.requests[0]!;
  assert.deepEqual(request.system_sections.map((section) => section.title), ["Persona", "Tools", "Knowledge"]);
  assert.ok(request.system_sections.every((section) => section.tokens > 0));
  assert.deepEqual(request.reference_sections.map((section) => section.title), ["Now"]);
  assert.deepEqual(request.tools, ["memory_recall"]);
  assert.equal(request.response?.content, "answer t1");
  assert.match(request.cache.miss_reason ?? "", /first request since homed started/);

  const second = traces.get("t2")!.requests[0]!;
  assert.equal(second.cache.miss_reason, undefined, "system message unchanged: the prefix was kept");
  assert.ok(second.cache.shared_tokens > 0);
  assert.deepEqual(second.history, { messages: 2, tokens: second.history.tokens });

  const third = traces.get("t3")!.requests[0]!;
  assert.equal(third.cache.miss_reason, 'The system message changed: section "Knowledge" changed');
  assert.equal(third.cache.shared_tokens, 0);
});

Deno.test("turn traces: a dropped history entry is named; a failed request and turn are kept with their error", () => {
  const clock = new FakeClock();
  const traces = new TurnTraces({ clock });
  const history: ChatMessage[] = [{ role: "user", content: "old" }, { role: "assistant", content: "old answer" }];
  turn(traces, "t1", "k", history, clock);
  turn(traces, "t2", "k", history.slice(1), clock);
  assert.match(traces.get("t2")!.requests[0]!.cache.miss_reason ?? "", /^History message 1 \(user\) differs/);
  assert.equal(traces.get("t2")!.cost, null, "no prices: no cost");

  const recorder = traces.begin({
    id: "t3",
    time: clock.now(),
    source: "qq",
    sender: "1",
    trust: "household",
    text: "x",
  });
  recorder.request({
    round: 1,
    persona: "# Alfred",
    systemSections: [],
    referenceSections: [],
    messages: [{ role: "system", content: "# Alfred" }],
    historyEnd: 1,
    tools: [],
  }).failed(new Error("The LLM did not answer within 30 s"));
  recorder.finish({ rounds: 0, error: "timeout: The LLM did not answer within 30 s" });
  const failed = traces.get("t3")!;
  assert.equal(failed.error, "timeout: The LLM did not answer within 30 s");
  assert.equal(failed.requests[0]!.error, "The LLM did not answer within 30 s");
  assert.equal(failed.requests[0]!.response, null);
});

Deno.test("turn traces: only the last turns are kept; an unknown id is undefined", () => {
  const clock = new FakeClock();
  const traces = new TurnTraces({ clock, keep: 3 });
  for (let i = 1; i <= 5; i++) turn(traces, `t${i}`, "k", [], clock);
  assert.deepEqual(traces.list().map((summary) => summary.id), ["t5", "t4", "t3"]);
  assert.equal(traces.get("t1"), undefined);
});

Deno.test("turn traces: a tool result cut in place later does not change what the earlier round recorded", () => {
  const clock = new FakeClock();
  const traces = new TurnTraces({ clock });
  const recorder = traces.begin({ id: "t1", time: 0, source: "http", sender: "owner", trust: "owner", text: "x" });
  const tool: ChatMessage = { role: "tool", tool_call_id: "c1", content: "a long result" };
  const messages: ChatMessage[] = [{ role: "system", content: "s" }, { role: "user", content: "x" }, tool];
  recorder.request({
    round: 1,
    persona: "s",
    systemSections: [],
    referenceSections: [],
    messages,
    historyEnd: 1,
    tools: [],
  })
    .answered({ content: "", toolCalls: [], finishReason: "stop" });
  tool.content = "cut";
  recorder.request({
    round: 2,
    persona: "s",
    systemSections: [],
    referenceSections: [],
    messages,
    historyEnd: 1,
    tools: [],
  })
    .answered({ content: "done", toolCalls: [], finishReason: "stop" });
  const detail = traces.get("t1")!;
  assert.equal(detail.requests[0]!.messages[2]!.content, "a long result");
  assert.match(detail.requests[1]!.cache.miss_reason ?? "", /^Message 2 \(tool\) differs from the round before/);
});
