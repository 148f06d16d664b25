import assert from "node:assert/strict";
import { getLogger } from "@logtape/logtape";
import { FakeClock } from "../../tests/support/fake_clock.ts";
import { FakeLlm } from "../../tests/support/fake_llm.ts";
import { fakeLlmProvider } from "../../tests/support/fake_llm_provider.ts";
import type { OpenAIProvider } from "../provider/openai_provider.ts";
import { ContextWindow } from "../context/context_window.ts";
import { testToolContext } from "../../tests/support/tool_context.ts";
import { ToolRegistry } from "../tools/registry.ts";
import { MemoryService } from "./memory_service.ts";
import { openMemory } from "./memory.ts";
import { focused } from "./recall/focused.ts";
import { openMemoryDb, readMeta } from "./database.ts";
import { join } from "node:path";

const DAY = 86_400_000;
const KEY = "sk-memory-test-0123";

async function service(dir: string, clock: FakeClock, provider?: OpenAIProvider) {
  const memory = new MemoryService({ dir, clock, logger: getLogger(["test"]), provider, persona: "# Persona\n" });
  await memory.start();
  const context = new ContextWindow({
    maxEntries: 4,
    entries: memory.restored,
    onEvict: (gone) => memory.archive(gone),
  });
  memory.keep(context);
  return { memory, context };
}

Deno.test("a fact said on day 1 passes layers 1 → 2 → 3 and is recalled on day 10, across a restart", async () => {
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-memory-days-" });
  const clock = new FakeClock({ start: Date.UTC(2026, 10, 1, 9) });
  let { memory, context } = await service(dir, clock);
  const turn = async (n: number, text: string, reply: string) => {
    const origin = { eventId: `e${n}`, time: clock.now(), source: "qq:private:20002000", sender: "20002000" };
    context.appendTurn([{ role: "user", content: `[via qq:private:20002000, from 20002000, trust owner] ${text}` }, {
      role: "assistant",
      content: reply,
    }], origin);
    await memory.afterTurn({ ...origin, trust: "owner", text, reply });
    clock.advance(DAY);
  };
  await turn(1, "The spare key is under the blue flowerpot.", "Noted.");
  for (let n = 2; n <= 6; n++) await turn(n, `Day ${n}: nothing special, the weather was fine.`, "Good to hear.");
  // Layer 1 → 2: the first exchange left the context and is a document.
  assert.ok(!context.records().some((entry) => entry.eventId === "e1"));
  assert.ok((memory.status() as { documents: number }).documents >= 1);
  // Layer 2 → 3: the memory job distils the journal (rule fallback: no LLM) and archives cold documents.
  const [job] = memory.jobs();
  await job!.run(new AbortController().signal);
  const status = memory.status() as Record<string, number>;
  assert.equal(status.facts, 1);
  assert.ok(status.archived_documents! >= 1, "documents untouched for 72 h with ≤ 2 hits are archived");
  // Learnt only in the owner's private chat: not in the system message's index, which everyone's turn carries.
  assert.equal(memory.system("owner"), undefined);
  await memory.stop();

  clock.advance(3 * DAY); // day 10, after a restart
  ({ memory, context } = await service(dir, clock));
  const recalled = await memory.recall("where is the spare key?", 5);
  const fact = recalled.find((item) => item.kind === "fact")!;
  assert.equal(fact.text, "spare key (thing) location: under blue flowerpot");
  assert.deepEqual(fact.provenance, ["e1"]);
  assert.equal(fact.time, Date.UTC(2026, 10, 6, 9), "the fact was distilled from the batch ending on day 6");
  const document = recalled.find((item) => item.kind === "document")!;
  assert.deepEqual(document.provenance, ["e1"], "the archived document stays searchable");
  await memory.stop();
  await Deno.remove(dir, { recursive: true });
});

Deno.test("the LLM distiller: strict JSON, one retry, a failed batch waits; nothing new costs no call", async () => {
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-distiller-" });
  const fake = FakeLlm.start({ personaPrefix: "# Persona\n", apiKey: KEY });
  const clock = new FakeClock({ start: Date.UTC(2026, 10, 1, 9) });
  const provider = fakeLlmProvider({ baseUrl: fake.baseUrl, apiKey: KEY, clock });
  const memory = await openMemory({ dir, clock, provider, persona: "# Persona\n", logger: getLogger(["test"]) });
  await memory.observe({
    eventId: "e1",
    time: clock.now(),
    role: "user",
    source: "http",
    sender: "owner",
    text: "客厅灯现在在卧室",
  });
  await memory.observe({
    eventId: "e1",
    time: clock.now(),
    role: "assistant",
    source: "http",
    sender: "butler",
    text: "好的",
  });
  // Not JSON, then a fact citing an event that is not in the batch: the batch waits.
  fake.enqueue({ reply: "Sure! Here are the facts." }, {
    reply:
      '{"facts":[{"subject":{"name":"灯","type":"device"},"predicate":"位于","object":"卧室","single":true,"provenance":["e99"]}]}',
  });
  const failed = await memory.runJobs();
  assert.equal(failed.distilled, 0);
  assert.match(
    failed.error!,
    /broke the contract twice: facts\[0\]\.provenance must list event ids of this batch, got \["e99"\]/,
  );
  assert.match(
    String((fake.requests[1]!.body.messages as Array<{ content: string }>)[1]!.content),
    /^Your last answer was rejected: the answer is not JSON/,
  );
  // The next run: a valid answer is recorded, the cursor moves.
  fake.enqueue({
    reply:
      '```json\n{"facts":[{"subject":{"name":"客厅灯","type":"device"},"predicate":"位于","object":"卧室","single":true,"provenance":["e1"]}]}\n```',
    usage: { prompt_tokens: 300, completion_tokens: 40 },
  });
  const ok = await memory.runJobs();
  assert.deepEqual([ok.distilled, ok.facts, ok.tokens], [2, 1, 340]);
  assert.deepEqual(memory.graph().facts("客厅灯").map((f) => [f.predicate, f.object, f.provenance]), [["位于", "卧室", [
    "e1",
  ]]]);
  const idle = await memory.runJobs();
  assert.deepEqual([idle.distilled, idle.tokens], [0, 0]);
  assert.equal(fake.requests.length, 3, "an idle run makes no LLM call");
  assert.equal(
    (memory.status() as { distiller_tokens: number }).distiller_tokens,
    340 + 2 * 15,
    "the rejected answers count too",
  );
  await memory.close();
  await fake.close();
  await Deno.remove(dir, { recursive: true });
});

Deno.test("memory_forget removes what a message said from every layer, for good; only the owner may ask", async () => {
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-forget-" });
  const clock = new FakeClock({ start: Date.UTC(2026, 10, 1, 9) });
  let { memory, context } = await service(dir, clock);
  const turn = async (n: number, text: string) => {
    const origin = { eventId: `e${n}`, time: clock.now(), source: "http", sender: "owner" };
    context.appendTurn([{ role: "user", content: `[via http, from owner, trust owner] ${text}` }, {
      role: "assistant",
      content: "Noted.",
    }], origin);
    await memory.afterTurn({ ...origin, trust: "owner", text, reply: "Noted." });
    clock.advance(DAY);
  };
  await turn(1, "The spare key is under the blue flowerpot.");
  for (let n = 2; n <= 4; n++) await turn(n, `Filler ${n}: the weather was fine.`);
  await turn(5, "The bike is in the garage.");
  await memory.jobs()[0]!.run(new AbortController().signal);
  assert.equal((memory.status() as { facts: number }).facts, 2);

  const registry = new ToolRegistry({ clock });
  for (const tool of memory.tools()) registry.register(tool);
  const household = { ...testToolContext("http", "household") };
  assert.match(
    (await registry.call("memory_forget", '{"event_ids":["e1"]}', household)).content,
    /is for the owner only/,
  );
  const done = await registry.call("memory_forget", '{"event_ids":["e1"]}', testToolContext("http", "owner"));
  assert.equal(done.content, "Forgotten: 0 context entries, 2 journal lines, 1 documents, 1 facts");

  const recalled = await memory.recall("spare key flowerpot", 10);
  assert.deepEqual(recalled.filter((item) => item.provenance.includes("e1")), []);
  assert.equal((memory.status() as { facts: number }).facts, 1, "the bike's fact stays");
  assert.doesNotMatch(memory.system("household")?.body ?? "", /spare key/);
  await memory.stop();
  const journal = await Deno.readTextFile(`${dir}/candidates.jsonl`);
  assert.ok(!journal.includes('"e1"') && journal.includes('"e5"'));
  ({ memory, context } = await service(dir, clock));
  assert.deepEqual(
    (await memory.recall("spare key flowerpot", 10)).filter((item) => item.provenance.includes("e1")),
    [],
  );
  // The distiller's cursor moved back with the removed lines: nothing is distilled twice, nothing skipped.
  const again = await memory.jobs()[0]!.run(new AbortController().signal);
  assert.equal(again, undefined);
  assert.equal((memory.status() as { facts: number }).facts, 1);
  await memory.stop();
  await Deno.remove(dir, { recursive: true });
});

Deno.test("a reply is recalled by the words of the question before it, in the same chat and only shortly after", async () => {
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-memory-reply-" });
  const clock = new FakeClock({ start: Date.UTC(2026, 10, 1, 9) });
  const memory = await openMemory({ dir, clock, logger: getLogger(["test"]), recentLimit: 1 });
  const say = async (eventId: string, source: string, sender: string, text: string, afterMs: number) => {
    clock.advance(afterMs);
    await memory.observe({ eventId, time: clock.now(), role: "user", source, sender, text });
  };
  const group = "qq:group:1001";
  await say("q1", group, "Anna", "Has anyone seen the passport? I need it for the form.", 0);
  await say("x1", "qq:private:2002", "Leo", "Can we have pasta tonight?", 30_000);
  await say("r1", group, "Ben", "Top drawer of the hall desk, under the envelopes.", 60_000);
  await say("q2", group, "Anna", "Where did the spare car key go?", 3_600_000);
  await say("r2", group, "Mia", "Glovebox of the car.", 31 * 60_000);
  for (const id of ["q1", "x1", "r1", "q2", "r2"]) {
    const text = (await memory.candidates()).find((entry) => entry.eventId === id)!.text;
    memory.keepDocument({ lines: [{ speaker: "someone", text }], time: clock.now(), provenance: [id] });
  }
  const provenance = async (query: string) =>
    (await memory.recall(query, { k: 5 })).filter((item) => item.kind === "document").flatMap((item) =>
      item.provenance
    );
  assert.deepEqual(await provenance("where is the passport"), ["q1", "r1"], "the question's words find its reply");
  const [pair] = await memory.recall("where is the passport", { k: 5 });
  assert.equal(
    pair?.text,
    "someone: Has anyone seen the passport? …\nsomeone: Top drawer of the hall desk, under the envelopes.",
    "the question and its reply are one item: the reply was found by the question's words (the question's sentence " +
      "that matches, the reply whole)",
  );
  assert.ok(
    !(await provenance("where did the spare key go")).includes("r2"),
    "31 minutes later is not a reply any more",
  );
  assert.ok(!(await provenance("pasta tonight")).includes("r1"), "another chat's message is not its context");
  await memory.close();
  await Deno.remove(dir, { recursive: true });
});

Deno.test("a reply found by the question before it shows that question and names its event, when only the reply is kept", async () => {
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-memory-context-" });
  const clock = new FakeClock({ start: Date.UTC(2026, 10, 1, 9) });
  const memory = await openMemory({ dir, clock, logger: getLogger(["test"]), recentLimit: 1 });
  const group = "qq:group:1001";
  await memory.observe({
    eventId: "q1",
    time: clock.now(),
    role: "user",
    source: group,
    sender: "Anna",
    text: "Has anyone seen the passport?",
  });
  clock.advance(60_000);
  await memory.observe({
    eventId: "r1",
    time: clock.now(),
    role: "user",
    source: group,
    sender: "Ben",
    text: "Top drawer of the hall desk.",
  });
  memory.keepDocument({
    lines: [{ speaker: "Ben", text: "Top drawer of the hall desk." }],
    time: clock.now(),
    provenance: ["r1"],
  });
  const [item] = await memory.recall("where is the passport", { k: 5 });
  assert.equal(item?.text, "(before: Has anyone seen the passport?)\nBen: Top drawer of the hall desk.");
  assert.deepEqual(item?.provenance, ["q1", "r1"]);
  // Found by its own words, a document shows only them.
  const [own] = await memory.recall("hall desk drawer", { k: 5 });
  assert.equal(own?.text, "Ben: Top drawer of the hall desk.");
  assert.deepEqual(own?.provenance, ["r1"]);
  await memory.close();
  await Deno.remove(dir, { recursive: true });
});

Deno.test("a when-question prefers what names a time over what only repeats its words", async () => {
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-memory-when-" });
  const clock = new FakeClock({ start: Date.UTC(2026, 10, 1, 9) });
  const memory = await openMemory({ dir, clock, logger: getLogger(["test"]), recentLimit: 1 });
  const keep = (id: string, text: string) =>
    memory.keepDocument({ lines: [{ speaker: "Anna", text }], time: clock.now(), provenance: [id] });
  keep("d1", "Leo's dentist appointment is on Thursday at 9:30.");
  keep("d2", "Leo hates his dentist appointment; every dentist appointment ends in tears.");
  const first = async (query: string) => (await memory.recall(query, { k: 2 }))[0]?.provenance[0];
  assert.equal(await first("When is Leo's dentist appointment?"), "d1");
  assert.equal(await first("Leo dentist appointment"), "d2", "not a when-question: the words decide");
  await memory.close();
  await Deno.remove(dir, { recursive: true });
});

Deno.test("recall prefers what was said in the month or on the day a query names, and counts only what it returns", async () => {
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-memory-dates-" });
  const clock = new FakeClock({ start: new Date(2026, 8, 10, 12).getTime() });
  const memory = await openMemory({ dir, clock, logger: getLogger(["test"]) });
  const keep = (eventId: string, text: string) =>
    memory.keepDocument({ lines: [{ speaker: "Anna", text }], time: clock.now(), provenance: [eventId] });
  keep("sep", "The boiler man said the pressure is too low");
  clock.advance(30 * DAY); // 10 October
  keep("oct", "The boiler man said the pressure is fine now");
  for (let i = 0; i < 40; i++) keep(`filler${i}`, `The boiler makes a noise again, note ${i}`);
  clock.advance(DAY);
  const top = async (query: string) => (await memory.recall(query, { k: 1 }))[0]!.provenance[0];
  assert.equal(await top("what did the boiler man say about the pressure"), "oct", "no date: the newer");
  assert.equal(await top("what did the boiler man say about the pressure in September"), "sep");
  assert.equal(await top("9月10日锅炉 boiler man pressure"), "sep");
  const hits = () => memory.documents().search("boiler pressure", 50, false).map((hit) => hit.document.hits);
  assert.equal(hits().reduce((sum, n) => sum + n, 0), 3, "one hit per returned document, none for the wider pool");
  await memory.close();
  await Deno.remove(dir, { recursive: true });
});

Deno.test("a long line of a recalled document shows its sentences that match best, in order, with its speaker", () => {
  const line = "Anna: We went camping last weekend with the kids. The tent leaked all night, so nobody slept. " +
    "Next time we take the blue tent from the garage. The lake was lovely though, and the fish were biting.";
  const shown = focused(line, "which tent leaked");
  assert.ok(shown.length <= 120, shown);
  assert.match(shown, /^Anna: … The tent leaked all night, so nobody slept\./);
  assert.ok(!shown.includes("fish"), shown);
  assert.equal(focused("Ben: Top drawer.", "passport"), "Ben: Top drawer.", "a line that fits stays whole");
  assert.equal(
    focused("Ben: Hi Anna! The passport is in the top drawer.", "where is the passport"),
    "Ben: … The passport is in the top drawer.",
    "a short line shows only its sentences that match, too",
  );
  assert.equal(
    focused("Ben: Hi Anna! It is in the top drawer.", "where is the passport"),
    "Ben: Hi Anna! It is in the top drawer.",
    "a line none of whose sentences matches shows them all when they fit",
  );
  assert.equal(
    focused("Ben: The passport?  The passport is in the drawer.", "where is the passport"),
    "Ben: The passport?  The passport is in the drawer.",
    "a line whose every sentence matches stays as it is",
  );
  const chinese =
    "妈妈：我们上周去露营了。帐篷漏了一整夜，谁都没睡好。下次带车库里那顶蓝色的帐篷。湖边很美，鱼也很多。" +
    "孩子们玩得很开心，还捡了很多石头回家，说要做成一面墙，挂在客厅里，每天都能看到。";
  assert.match(focused(chinese, "帐篷漏了", 40), /帐篷漏了一整夜/);
});

Deno.test("a question that names a person prefers what that person said", async () => {
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-memory-speaker-" });
  const clock = new FakeClock({ start: Date.UTC(2026, 10, 1, 9) });
  const memory = await openMemory({ dir, clock, logger: getLogger(["test"]), recentLimit: 1 });
  memory.keepDocument({
    lines: [{ speaker: "Leo", text: "I went to the pottery class on Monday." }],
    time: clock.now(),
    provenance: ["l1"],
  });
  clock.advance(3_600_000);
  memory.keepDocument({
    lines: [{ speaker: "Mia", text: "I went to the pottery class on Friday." }],
    time: clock.now(),
    provenance: ["m1"],
  });
  const first = async (query: string) => (await memory.recall(query, { k: 2 }))[0]?.provenance[0];
  assert.equal(await first("when did Leo go to the pottery class"), "l1");
  assert.equal(await first("when did Mia go to the pottery class"), "m1");
  await memory.close();
  await Deno.remove(dir, { recursive: true });
});

Deno.test("a question that names a person finds what they said beyond the k documents that match its words best", async () => {
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-memory-speaker-pool-" });
  const clock = new FakeClock({ start: Date.UTC(2026, 10, 1, 9) });
  const memory = await openMemory({ dir, clock, logger: getLogger(["test"]), recentLimit: 1 });
  const keep = (id: string, speaker: string, text: string) => {
    memory.keepDocument({ lines: [{ speaker, text }], time: clock.now(), provenance: [id] });
    clock.advance(3_600_000);
  };
  keep("leo", "Leo", "I made a bowl in the pottery class.");
  for (let i = 0; i < 8; i++) keep(`leo${i}`, "Leo", `Football practice ${i} was long.`);
  for (let i = 0; i < 4; i++) {
    keep(`mia${i}`, "Mia", `We make things at the pottery class: the pottery class makes vase ${i}.`);
  }
  const query = "what did Leo make at the pottery class";
  // By its words Leo's turn is fifth; the preference for what Leo said re-ranks a pool wider than the k kept.
  const search = memory.documents().search(query, 5, false);
  assert.deepEqual(search.map((hit) => hit.document.provenance[0]), ["mia3", "mia2", "mia1", "mia0", "leo"]);
  const recalled = await memory.recall(query, { k: 2 });
  assert.deepEqual(recalled.map((item) => [item.provenance[0], item.score]), [["leo", 1.182], ["mia3", 0.92]]);
  await memory.close();
  await Deno.remove(dir, { recursive: true });
});

Deno.test("a question, its answer and the reply to that answer are one item", async () => {
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-memory-chain-" });
  const clock = new FakeClock({ start: Date.UTC(2026, 10, 1, 9) });
  const memory = await openMemory({ dir, clock, logger: getLogger(["test"]), recentLimit: 1 });
  const group = "qq:group:1001";
  const turns = [
    ["a1", "Anna", "Has anyone seen the passport? I need it for the form."],
    ["b1", "Ben", "Is it the old passport, the one with the torn cover and the old photo of you?"],
    ["c1", "Anna", "Yes, that one."],
  ];
  for (const [eventId, sender, text] of turns) {
    clock.advance(60_000);
    await memory.observe({
      eventId: eventId!,
      time: clock.now(),
      role: "user",
      source: group,
      sender: sender!,
      text: text!,
    });
  }
  for (const [eventId, sender, text] of turns) {
    memory.keepDocument({ lines: [{ speaker: sender!, text: text! }], time: clock.now(), provenance: [eventId!] });
  }
  const items = await memory.recall("where is the passport", { k: 5 });
  assert.deepEqual(items.map((item) => item.provenance), [["a1", "b1", "c1"]]);
  assert.equal(
    items[0]!.text,
    "Anna: Has anyone seen the passport? …\nBen: Is it the old passport, the one with the torn cover and the old photo of you?\n" +
      "Anna: Yes, that one.",
  );
  await memory.close();
  await Deno.remove(dir, { recursive: true });
});

Deno.test("memory.db says whether memory was closed cleanly: no while open, yes after close", async () => {
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-memory-clean-" });
  const flag = () => {
    const db = openMemoryDb(join(dir, "memory.db"));
    try {
      return readMeta(db, "closed_cleanly");
    } finally {
      db.close();
    }
  };
  let memory = await openMemory({ dir, clock: new FakeClock(0), logger: getLogger(["test"]) });
  assert.equal(flag(), "0", "a run that is killed leaves it unset");
  await memory.observe({
    eventId: "e1",
    time: 1,
    role: "user",
    source: "http",
    sender: "owner",
    text: "The key is here.",
  });
  await memory.close();
  assert.equal(flag(), "1");
  memory = await openMemory({ dir, clock: new FakeClock(0), logger: getLogger(["test"]) });
  assert.equal(flag(), "0");
  await memory.close();
  await Deno.remove(dir, { recursive: true });
});

Deno.test("the memory index in the system message: the household's for household and owner, none for a guest", async () => {
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-memory-index-" });
  const clock = new FakeClock({ start: Date.UTC(2026, 10, 1, 9) });
  const { memory, context } = await service(dir, clock);
  try {
    for (let n = 1; n <= 6; n++) {
      // Said in the household's group: the household may read it.
      const origin = { eventId: `g${n}`, time: clock.now(), source: "qq:group:555", sender: "30003000" };
      const text = n === 1 ? "The spare key is under the blue flowerpot." : `Day ${n}: nothing special.`;
      context.appendTurn([{ role: "user", content: `[via qq:group:555, from 30003000, trust household] ${text}` }, {
        role: "assistant",
        content: "Noted.",
      }], origin);
      await memory.afterTurn({ ...origin, trust: "household", text, reply: "Noted." });
      clock.advance(DAY);
    }
    await memory.jobs()[0]!.run(new AbortController().signal);
    assert.match(memory.system("household")?.body ?? "", /spare key/);
    assert.match(memory.system("owner")?.body ?? "", /spare key/);
    assert.equal(memory.system("guest"), undefined, "a guest reads no graph facts, not even their names");
  } finally {
    await memory.stop();
    await Deno.remove(dir, { recursive: true });
  }
});
