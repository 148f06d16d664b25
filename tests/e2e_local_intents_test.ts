/**
 * Local intents, acceptance: everyday house commands in Chinese and English understood without a model and carried
 * out through Home Assistant. A real homed, the strict fake Home Assistant holding a bilingual house
 * (`fixtures/local_intents/house.ts`: 34 entities, eight areas, two floors), and the model down (its port refuses
 * connections): the owner sends every command of `fixtures/local_intents/commands.ts` over `POST /api/chat`, and each
 * must cause exactly its Home Assistant calls — one per entity — or none: no call that was not expected may ever
 * happen, and at least 95 % must be exactly right. Locks and the garage door wait for the owner's yes (a yes runs
 * exactly that call); a reminder made with no model fires with its own text. With `agent.local_intents: prefer` and a
 * live model, a matching command costs no model request and anything else is the model's as usual; with `off`, a
 * matching command does nothing while the model is down.
 *
 * Each command's time from request to reply is printed (p50, p99, max), never asserted: speed is the benchmarks'.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { isDeepStrictEqual } from "node:util";
import {
  type Command,
  COMMANDS,
  type Expectation,
  type ExpectedCall,
  type Intent,
  isChinese,
} from "./fixtures/local_intents/commands.ts";
import { CONFIRM, DOMAINS, ENTITIES, HOUSE, initialState } from "./fixtures/local_intents/house.ts";
import { DEFAULT_CONTRACT, TEST_KEY } from "./support/contract.ts";
import { FakeHomeAssistant, type RecordedCall } from "./support/fake_home_assistant.ts";
import { FakeLlm } from "./support/fake_llm.ts";
import { deno, freePort, type HomedProcess, startHomed, taskFlags, workspace } from "./support/homed_process.ts";
import { listenToEvents } from "./support/events.ts";
import { teardown } from "./support/teardown.ts";
import { waitFor } from "./support/wait.ts";

const OWNER_TOKEN = "owner-token-local-intents-0123456789";
const AUTH = { authorization: `Bearer ${OWNER_TOKEN}` };
/** What a reply says when an action waits for the owner's yes. */
const WAITS_FOR_OWNER = /owner|confirm|\byes\b|是|确认|主人|同意/i;
/** A request that takes longer is given up (and counted as a miss); a hang must not stall the whole run. */
const REPLY_LIMIT_MS = 60_000;

type Mode = "fallback" | "prefer" | "off";

async function homedFor(ha: FakeHomeAssistant, mode: Mode, llmBaseUrl: string): Promise<HomedProcess> {
  return await startHomed(
    await workspace({
      agent: { local_intents: mode },
      llm: { base_url: llmBaseUrl, api_key: TEST_KEY },
      daemon: { api_token: OWNER_TOKEN, timezone: "Asia/Shanghai" },
      smart_home: { home_assistant: { url: ha.url, token: ha.token, domains: DOMAINS, confirm: CONFIRM } },
    }),
  );
}

/** A loopback URL nothing listens on: the model is down, connections are refused. */
function refusedModel(): string {
  return `http://127.0.0.1:${freePort()}/v1`;
}

async function api<T = Record<string, unknown>>(homed: HomedProcess, path: string): Promise<T> {
  const response = await fetch(`${homed.url}${path}`, { headers: AUTH });
  const body = await response.json();
  assert.equal(response.status, 200, `${path}: ${JSON.stringify(body)}`);
  return body as T;
}

/** Until homed is connected to Home Assistant and has read its states and registries (aliases last). */
async function houseLoaded(homed: HomedProcess, ha: FakeHomeAssistant): Promise<void> {
  await waitFor(
    async () => {
      const status =
        (await api<{ services: { io: { devices: Record<string, { state?: string; entities?: number }> } } }>(
          homed,
          "/api/status",
        )).services.io.devices.ha;
      // Aliases (get_entries) are read last, after the area, device, entity and floor registries.
      return status?.state === "connected" && status.entities === ENTITIES.length &&
        ha.commandsOf("config/entity_registry/get_entries").length > 0;
    },
    "homed connected to Home Assistant with the house loaded",
    { limitMs: 30_000 },
  );
}

/** One message from the owner: the HTTP status, the reply (or the error body's message), and how long it took. */
interface Answer {
  status: number;
  reply: string;
  ms: number;
}

async function say(homed: HomedProcess, text: string): Promise<Answer> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), REPLY_LIMIT_MS);
  const started = performance.now();
  try {
    const response = await fetch(`${homed.url}/api/chat`, {
      method: "POST",
      headers: { ...AUTH, "content-type": "application/json" },
      body: JSON.stringify({ text }),
      signal: controller.signal,
    });
    const raw = await response.text();
    const ms = performance.now() - started;
    let body: { reply?: unknown; error?: { message?: unknown } } | undefined;
    try {
      body = JSON.parse(raw);
    } catch { /* not JSON: the raw text is the reply */ }
    const reply = typeof body?.reply === "string"
      ? body.reply
      : typeof body?.error?.message === "string"
      ? body.error.message
      : raw;
    return { status: response.status, reply, ms };
  } catch (error) {
    return { status: 0, reply: `(no answer: ${(error as Error).message})`, ms: performance.now() - started };
  } finally {
    clearTimeout(timer);
  }
}

/** Puts every entity back to its initial state (pushing `state_changed` to homed) where a command changed it. */
function restoreHouse(ha: FakeHomeAssistant): void {
  for (const entity of ENTITIES) {
    const now = ha.state(entity.entity_id);
    const attributes = entity.attributes ?? {};
    if (!now || now.state !== entity.state || !isDeepStrictEqual(now.attributes, attributes)) {
      ha.setState(entity.entity_id, entity.state, attributes);
    }
  }
}

/** Until no new call has reached Home Assistant for a moment (a call made just after the reply is still counted). */
async function settled(ha: FakeHomeAssistant, from: number, expected: number): Promise<RecordedCall[]> {
  if (expected > 0) {
    await waitFor(() => ha.calls.length - from >= expected, "the expected calls", { limitMs: 1_000 }).catch(() => {});
  }
  let seen = -1;
  while (seen !== ha.calls.length) {
    seen = ha.calls.length;
    await new Promise((resolve) => setTimeout(resolve, 30));
  }
  return ha.calls.slice(from);
}

/** A call as one action on one entity (a call on several is several actions; one on none is shown as such). */
interface Action {
  domain: string;
  service: string;
  entity_id: string;
  data: Record<string, unknown>;
}

function actionsOf(calls: RecordedCall[]): Action[] {
  return calls.flatMap((call) =>
    (call.entity_ids.length ? call.entity_ids : ["(no entity)"]).map((entityId) => ({
      domain: call.domain,
      service: call.service,
      entity_id: entityId,
      data: call.service_data,
    }))
  );
}

const shown = (action: Action | ExpectedCall) =>
  `${action.domain}.${action.service} ${action.entity_id}${
    action.data && Object.keys(action.data).length ? ` ${JSON.stringify(action.data)}` : ""
  }`;

/** Whether `needle` is in `text`: Latin words as whole words (any case), Chinese as a substring. */
function mentions(text: string, needle: string): boolean {
  if (/^[\x20-\x7e]+$/.test(needle)) {
    const escaped = needle.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    return new RegExp(`(?<![A-Za-z0-9])${escaped}(?![A-Za-z0-9])`, "i").test(text);
  }
  return text.includes(needle);
}

interface Schedule {
  id: string;
  text: string;
  next_run: string | null;
}

interface Outcome {
  index: number;
  command: Command;
  answer: Answer;
  actions: Action[];
  /** Actions nobody asked for. */
  wrong: Action[];
  right: boolean;
  /** Why it is not right. */
  why: string[];
}

/** Sends one command and judges what happened against its expectation. */
async function run(homed: HomedProcess, ha: FakeHomeAssistant, command: Command, index: number): Promise<Outcome> {
  const expect: Expectation = command.expect;
  const before = ha.calls.length;
  const schedulesBefore = "reminder" in expect || ("noCall" in expect && expect.cancels)
    ? (await api<{ schedules: Schedule[] }>(homed, "/api/schedules")).schedules
    : [];
  const answer = await say(homed, command.text);
  const expectedCalls = "calls" in expect ? expect.calls : [];
  const calls = await settled(ha, before, expectedCalls.length);
  const actions = actionsOf(calls);
  const why: string[] = [];
  let wrong: Action[] = actions;

  if ("calls" in expect) {
    const remaining = [...expect.calls];
    wrong = [];
    for (const action of actions) {
      const at = remaining.findIndex((call) =>
        call.domain === action.domain && call.service === action.service && call.entity_id === action.entity_id &&
        isDeepStrictEqual(action.data, call.data ?? {})
      );
      if (at >= 0) remaining.splice(at, 1);
      else wrong.push(action);
    }
    if (remaining.length) why.push(`not done: ${remaining.map(shown).join("; ")}`);
    const batched = calls.filter((call) => call.entity_ids.length !== 1);
    if (batched.length) why.push(`${batched.length} call(s) not on exactly one entity`);
    if (answer.status !== 200) why.push(`HTTP ${answer.status}`);
  } else {
    // Nothing may be called now, whatever the reply.
    if (actions.length) why.push("a call where none was expected");
  }

  if ("noCall" in expect) {
    // A chat the model would have answered may come back as a clear error body; a crash (500) or no answer may not.
    if (answer.status === 0 || answer.status === 500) why.push(`HTTP ${answer.status}`);
    if (expect.replyIncludes && !expect.replyIncludes.some((needle) => mentions(answer.reply, needle))) {
      why.push(`the reply names none of ${JSON.stringify(expect.replyIncludes.slice(0, 8))}`);
    }
    for (const group of expect.replyIncludesAll ?? []) {
      if (!group.some((needle) => mentions(answer.reply, needle))) {
        why.push(`the reply names none of ${JSON.stringify(group)}`);
      }
    }
    if (expect.replyMatches && !expect.replyMatches.test(answer.reply)) {
      why.push(`the reply does not match ${expect.replyMatches}`);
    }
    if (expect.cancels) {
      const cancels = expect.cancels;
      if (!schedulesBefore.some((schedule) => mentions(schedule.text, cancels))) {
        why.push(`no reminder about "${cancels}" to cancel (an earlier command did not make it)`);
      }
      const after = (await api<{ schedules: Schedule[] }>(homed, "/api/schedules")).schedules;
      const left = after.filter((schedule) => mentions(schedule.text, cancels));
      if (left.length) why.push(`still scheduled: ${left.map((schedule) => JSON.stringify(schedule.text)).join(", ")}`);
    }
  }

  if ("waitsForOwner" in expect) {
    if (answer.status !== 200) why.push(`HTTP ${answer.status}`);
    if (!WAITS_FOR_OWNER.test(answer.reply)) why.push("the reply does not say it waits for the owner's yes");
    const { pending } = await api<{ pending: Array<{ summary: string }> }>(homed, "/api/confirmations");
    const entityId = expect.entity_id;
    if (entityId) {
      const name = String(initialState(entityId).attributes?.friendly_name);
      if (!pending.some((waiting) => waiting.summary.includes(entityId) || waiting.summary.includes(name))) {
        why.push(`no action on ${entityId} waits for the owner (waiting: ${JSON.stringify(pending)})`);
      }
    } else if (pending.length === 0) why.push("nothing waits for the owner");
  }

  if ("reminder" in expect) {
    if (answer.status !== 200) why.push(`HTTP ${answer.status}`);
    const known = new Set(schedulesBefore.map((schedule) => schedule.id));
    const made = (await api<{ schedules: Schedule[] }>(homed, "/api/schedules")).schedules
      .filter((schedule) => !known.has(schedule.id));
    if (made.length !== 1) why.push(`${made.length} new schedules, not 1`);
    else if (expect.about && !expect.about.some((needle) => mentions(made[0]!.text, needle))) {
      why.push(`the reminder's text ${JSON.stringify(made[0]!.text)} names none of ${JSON.stringify(expect.about)}`);
    }
  }

  if (wrong.length && !why.some((reason) => reason.startsWith("a call"))) why.push("a call nobody asked for");
  return { index, command, answer, actions, wrong, right: why.length === 0 && wrong.length === 0, why };
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

function latencyLine(label: string, outcomes: Outcome[]): string {
  const times = outcomes.map((outcome) => outcome.answer.ms).sort((a, b) => a - b);
  const ms = (value: number) => `${value.toFixed(1)} ms`;
  return `${label.padEnd(28)} n=${String(times.length).padStart(3)}  p50 ${ms(percentile(times, 50))}  p99 ${
    ms(percentile(times, 99))
  }  max ${ms(times.at(-1) ?? NaN)}`;
}

function report(outcomes: Outcome[]): void {
  const lines: string[] = ["", "Local intents: the command set"];
  const intents = [...new Set(outcomes.map((outcome) => outcome.command.intent))] as Intent[];
  lines.push(`${"intent".padEnd(18)} ${"zh".padStart(7)} ${"en".padStart(7)}`);
  for (const intent of intents) {
    const cell = (chinese: boolean) => {
      const mine = outcomes.filter((o) => o.command.intent === intent && isChinese(o.command.text) === chinese);
      return `${mine.filter((o) => o.right).length}/${mine.length}`.padStart(7);
    };
    lines.push(`${intent.padEnd(18)} ${cell(true)} ${cell(false)}`);
  }
  const right = outcomes.filter((outcome) => outcome.right).length;
  lines.push(
    `right ${right}/${outcomes.length} (${((100 * right) / outcomes.length).toFixed(1)} %), wrong actions ${
      outcomes.reduce((sum, outcome) => sum + outcome.wrong.length, 0)
    }`,
  );
  lines.push("Time from request to reply (shown, not asserted):");
  const acting = (o: Outcome) => "calls" in o.command.expect || "waitsForOwner" in o.command.expect;
  lines.push(latencyLine("all", outcomes));
  lines.push(latencyLine("commands that act", outcomes.filter(acting)));
  lines.push(latencyLine("questions and no-action", outcomes.filter((o) => !acting(o))));
  lines.push(latencyLine("chat (no model)", outcomes.filter((o) => o.command.intent === "chitchat")));
  console.log(lines.join("\n"));
}

function describe(outcome: Outcome): string {
  const did = outcome.actions.length ? outcome.actions.map(shown).join("; ") : "no call";
  return `#${outcome.index} ${JSON.stringify(outcome.command.text)} [${outcome.command.intent}]: ${
    outcome.why.join("; ")
  }\n    did: ${did}; HTTP ${outcome.answer.status}; reply: ${JSON.stringify(outcome.answer.reply.slice(0, 200))}`;
}

/** Collects what `/api/events` pushes (messages for the http channel no request waits for, reminders among them). */
function listen(homed: HomedProcess) {
  return listenToEvents(homed.url, AUTH);
}

Deno.test("the command set is well formed: 220+ commands, half of them Chinese, every expected call on the house", () => {
  assert.ok(COMMANDS.length >= 220, `${COMMANDS.length} commands`);
  const chinese = COMMANDS.filter((command) => isChinese(command.text)).length;
  assert.ok(Math.abs(chinese - (COMMANDS.length - chinese)) <= COMMANDS.length * 0.1, `${chinese} in Chinese`);
  const noAction = COMMANDS.filter((command) =>
    ["unknown_name", "out_of_range", "ambiguous", "chitchat", "not_a_command"].includes(command.intent)
  );
  assert.ok(noAction.length >= 25, `${noAction.length} that must cause no action`);
  assert.ok(noAction.every((command) => "noCall" in command.expect));
  const texts = COMMANDS.map((command) => command.text);
  assert.deepEqual(texts.filter((text, at) => texts.indexOf(text) !== at), [], "no command twice");
  for (const command of COMMANDS) {
    const expect = command.expect;
    const ids = "calls" in expect
      ? expect.calls.map((call) => call.entity_id)
      : "waitsForOwner" in expect && expect.entity_id
      ? [expect.entity_id]
      : [];
    for (const id of ids) assert.ok(initialState(id), `${command.text}: ${id}`);
    if ("calls" in expect) {
      assert.ok(expect.calls.length > 0, command.text);
      for (const call of expect.calls) {
        assert.ok(call.entity_id.startsWith(`${call.domain}.`), `${command.text}: ${call.entity_id}`);
        assert.ok(DOMAINS.includes(call.domain), `${command.text}: ${call.domain} is not a configured domain`);
        assert.ok(
          !CONFIRM.some((entry) => entry === call.domain || entry === call.entity_id),
          `${command.text}: ${call.entity_id} waits for the owner`,
        );
      }
    }
  }
});

Deno.test({
  name:
    "local intents with the model down: every command of the set does exactly its Home Assistant calls or none, ≥ 95 % right, no wrong action; a lock waits for the owner's yes; an offline reminder fires with its text",
  async fn(t) {
    const ha = FakeHomeAssistant.start(HOUSE);
    const homed = await homedFor(ha, "fallback", refusedModel());
    try {
      await houseLoaded(homed, ha);

      await t.step(`${COMMANDS.length} commands: exact calls or none`, async () => {
        const outcomes: Outcome[] = [];
        for (const [index, command] of COMMANDS.entries()) {
          outcomes.push(await run(homed, ha, command, index));
          restoreHouse(ha);
        }
        report(outcomes);
        const wrong = outcomes.filter((outcome) => outcome.wrong.length > 0);
        const misses = outcomes.filter((outcome) => !outcome.right);
        if (misses.length) console.log(`\nMisses (${misses.length}):\n${misses.map(describe).join("\n")}`);
        assert.deepEqual(
          wrong.map((outcome) => `#${outcome.index} ${outcome.command.text}: ${outcome.wrong.map(shown).join("; ")}`),
          [],
          "calls nobody asked for",
        );
        const accuracy = (outcomes.length - misses.length) / outcomes.length;
        assert.ok(
          accuracy >= 0.95,
          `accuracy ${(accuracy * 100).toFixed(1)} % < 95 % (${misses.length} misses, each listed above)`,
        );
      });

      await t.step("the owner's yes runs exactly the held unlock, once", async () => {
        restoreHouse(ha);
        const before = ha.calls.length;
        const asked = await say(homed, "unlock the front door");
        assert.equal(asked.status, 200, asked.reply);
        assert.match(asked.reply, WAITS_FOR_OWNER);
        assert.deepEqual(await settled(ha, before, 0), [], "not unlocked before the yes");
        const { pending } = await api<{ pending: Array<{ id: string; summary: string }> }>(homed, "/api/confirmations");
        assert.equal(pending.length, 1, JSON.stringify(pending));

        const yes = await say(homed, "yes");
        assert.equal(yes.status, 200, yes.reply);
        const calls = await settled(ha, before, 1);
        assert.deepEqual(actionsOf(calls), [{
          domain: "lock",
          service: "unlock",
          entity_id: "lock.front_door",
          data: {},
        }]);
        assert.equal(calls[0]!.entity_ids.length, 1);
        assert.equal(ha.state("lock.front_door")?.state, "unlocked");
        const again = await say(homed, "yes");
        assert.ok(again.status !== 0 && again.status !== 500, again.reply);
        assert.equal(ha.calls.length - before, 1, "a second yes runs nothing");
        restoreHouse(ha);
      });

      await t.step("reminders made with no model fire with their own text", async () => {
        const events = listen(homed);
        try {
          const before = ha.calls.length;
          const soon = (schedule: Schedule) =>
            schedule.next_run !== null && Date.parse(schedule.next_run) - Date.now() < 60_000;
          const asks = [["remind me in 3 seconds to check the oven", "oven"], ["3秒后提醒我关火", "关火"]] as const;
          for (const [text, about] of asks) {
            const answer = await say(homed, text);
            assert.equal(answer.status, 200, answer.reply);
            const { schedules } = await api<{ schedules: Schedule[] }>(homed, "/api/schedules");
            assert.ok(
              schedules.some((schedule) => mentions(schedule.text, about) && soon(schedule)),
              `${text}: ${JSON.stringify(schedules)}`,
            );
          }
          await waitFor(
            () =>
              events.messages.some((message) => mentions(String(message.text ?? ""), "check the oven")) &&
              events.messages.some((message) => String(message.text ?? "").includes("关火")),
            "both reminders on /api/events, each with its own text",
            { limitMs: 20_000 },
          );
          assert.equal(ha.calls.length, before, "a reminder calls nothing");
        } finally {
          await events.stop();
        }
      });
    } finally {
      await teardown(
        async () => assert.equal(await homed.stop(), 0, homed.stderr()),
        () => ha.close(),
      );
    }
  },
});

Deno.test("prefer, with a live model: a matching command costs no model request; anything else is the model's", async () => {
  const llm = FakeLlm.start(DEFAULT_CONTRACT);
  const ha = FakeHomeAssistant.start(HOUSE);
  const homed = await homedFor(ha, "prefer", llm.baseUrl);
  try {
    await houseLoaded(homed, ha);
    const matching = COMMANDS.filter((command) =>
      ["打开落地灯", "set the thermostat to 22", "关掉二楼所有的灯", "set the chandelier to warm light"].includes(
        command.text,
      )
    );
    assert.equal(matching.length, 4);
    const outcomes: Outcome[] = [];
    for (const [index, command] of matching.entries()) {
      outcomes.push(await run(homed, ha, command, index));
      restoreHouse(ha);
    }
    console.log(`\nprefer mode:\n${latencyLine("local commands", outcomes)}`);
    assert.deepEqual(outcomes.filter((outcome) => !outcome.right).map(describe), []);
    assert.equal(llm.requests.length, 0, "no request to the model for a command matched locally");

    llm.enqueue({ reply: "Why did the smart bulb go to school? To get a little brighter." });
    const before = ha.calls.length;
    const joke = await say(homed, "tell me a joke");
    assert.equal(joke.status, 200, joke.reply);
    assert.equal(joke.reply, "Why did the smart bulb go to school? To get a little brighter.");
    assert.equal(llm.requests.length, 1, "the joke is the model's");
    assert.deepEqual(await settled(ha, before, 0), []);
  } finally {
    await teardown(
      async () => assert.equal(await homed.stop(), 0, homed.stderr()),
      () => ha.close(),
      () => llm.close(),
    );
  }
});

Deno.test("off: with the model down, a command local intents would match does nothing", async () => {
  const ha = FakeHomeAssistant.start(HOUSE);
  const homed = await homedFor(ha, "off", refusedModel());
  try {
    await houseLoaded(homed, ha);
    for (const text of ["打开落地灯", "turn on the floor lamp", "关掉所有的灯"]) {
      const before = ha.calls.length;
      const answer = await say(homed, text);
      assert.notEqual(answer.status, 0, `${text}: ${answer.reply}`);
      // Give a call that would follow the reply its chance to arrive before saying there was none.
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.deepEqual(actionsOf(await settled(ha, before, 0)).map(shown), [], text);
      console.log(`off mode: ${JSON.stringify(text)} → HTTP ${answer.status} in ${answer.ms.toFixed(1)} ms`);
    }
  } finally {
    await teardown(
      async () => assert.equal(await homed.stop(), 0, homed.stderr()),
      () => ha.close(),
    );
  }
});

Deno.test("a template file of the household's with a mistake stops start-up naming the file, the line and the fault", async () => {
  const ws = await workspace({ onebot: { enabled: false } });
  await Deno.mkdir(join(ws.dir, "intents"));
  await Deno.writeTextFile(
    join(ws.dir, "intents", "family.yaml"),
    'language: zh\nintents:\n  HassTurnOn:\n    - "打开(客厅|{name}"\n',
  );
  const flags = await taskFlags("run", ws.env);
  const result = await deno(["run", ...flags, "src/main.ts", "run"], { env: ws.env });
  assert.notEqual(result.code, 0);
  assert.match(
    result.stderr,
    new RegExp(`Local intents: ${ws.dir.replaceAll("/", "\\/")}\\/intents\\/family\\.yaml:4: .*\\(`),
  );
  await Deno.remove(ws.dir, { recursive: true });
});
