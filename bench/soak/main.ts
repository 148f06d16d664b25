/**
 * Soak (issue 38.5, "weeks without growing"): a real homed child, started with the daemon's own flags (`homed flags`,
 * `DAEMON_V8_FLAGS` included) and environment (`DAEMON_ENV`) from the sources or, with `--bundle`, as the bundled `homed.js`, driven for
 * `--minutes N` (default 30) with a compressed household's load:
 *
 * - chats over HTTP (`POST /api/chat`, one every 3 s) and over QQ (a simulated OneBot implementation on the reverse
 *   WebSocket, a private message every 4 s, answered through `send_private_msg`);
 * - reminders: one chat in five asks for one, the fake model calls `schedule_create` 30 s ahead, and it fires (a turn
 *   of its own, its reply sent back to QQ or HTTP);
 * - a console client polling `GET /api/status` every 2 s, and `/api/events` clients connecting, reading for a few
 *   seconds and disconnecting (one every 10 s);
 * - Home Assistant `state_changed` events (the strict fake HA, every 5 s) and MQTT messages (a real mosquitto, every
 *   2 s) on subscribed entities and topics;
 * - the memory job on its fastest clock (`memory.distill_interval` and `memory.cold_after`: 1 minute);
 * - the automatic backup (`backup.schedule`, in UTC) once a day, its first in the middle of the warm-up: a backup keeps
 *   one descriptor per database for the next (SQLite cannot close it while homed's own connection holds its locks), a
 *   bounded step that the descriptor verdict would otherwise read as growth whenever a run crossed the default 03:30.
 *
 * The fake LLM is a small server in this process that answers every request from its content (no script to run
 * out of; the distiller gets `{"facts": []}`, a valid answer). Every `--interval` seconds (default 60) it records
 * homed's RSS (`VmRSS` of `/proc/<pid>/status`, with its anonymous and file-backed parts), its JS heap (used and held)
 * and external memory (`/api/status` `process`), open descriptors (`/proc/<pid>/fd`), the SQLite WAL sizes under the
 * data dir and the p50/p99 turn latency of the interval (HTTP: request to response; QQ: message sent to the reply
 * action received). Deno grants `/proc` and `/sys` to nothing short
 * of `--allow-all`, so those are read with `cat` and `ls`, and a cgroup is made with `mkdir`, `tee` and `rmdir`.
 *
 * At the end, after a warm-up (the first 5 minutes; a third of a run shorter than 15 minutes): the least-squares
 * slope of RSS in MB/hour, the descriptors' growth (median of the last window minus the first), and the p99 of the
 * last window (5 minutes, or half of what follows the warm-up when shorter) against the first. Targets: RSS slope
 * ≤ 1 MB/hour, descriptors flat (growth ≤ 2: a sample may catch a connection in flight), p99 within 20 %. Anchor in
 * the same run: a bare Deno server under the same V8 flags, polled the same way, its RSS sampled beside homed's.
 *
 * `--memory-max 256M` puts the homed child into a memory-limited cgroup (v2 `memory.max` when `/sys/fs/cgroup` is
 * the unified hierarchy, else v1 `memory.limit_in_bytes` under `/sys/fs/cgroup/memory`; needs root), removed at the
 * end; reported: whether the child survived, its peak and OOM kills.
 *
 * Run: deno task bench:soak [--minutes N] [--interval S] [--memory-max 256M] [--bundle] [--warmup M] [--inspect PORT] [--child-env NAME=VALUE] [--child-v8 FLAGS] [--name NAME] (writes
 * bench/out/soak/results.json and homed's log beside it; --record: bench/soak/results.json; `--name NAME`:
 * results-NAME.json and homed-NAME.log instead, for runs side by side).
 *
 * @module
 */

import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { stringify } from "yaml";
import { DAEMON_ENV, DAEMON_V8_FLAGS } from "../../src/rights/command_flags.ts";
import { childEnv, freePort, homedReady, REPO, taskFlags, type Workspace } from "../../tests/support/homed_process.ts";
import { buildBundle, bundleRunArgs } from "../support/bundle.ts";
import { completionBody, streamResponse, type WireAnswer } from "../../tests/support/openai_wire.ts";
import { OneBotSim } from "../../tests/support/onebot_sim.ts";
import { FakeHomeAssistant } from "../../tests/support/fake_home_assistant.ts";
import { Mosquitto, TestMqttClient } from "../../tests/support/mosquitto.ts";
import { environment, percentile, writeResults } from "../support/report.ts";

// ---------------------------------------------------------------- options

/** The value after `--name`, if given. */
function option(name: string): string | undefined {
  const at = Deno.args.indexOf(`--${name}`);
  return at >= 0 ? Deno.args[at + 1] : undefined;
}

/** Bytes of a size such as `256M`, `1G`, `524288K` or a plain number. */
function parseSize(text: string): number {
  const match = /^(\d+(?:\.\d+)?)([KMG]?)B?$/i.exec(text.trim());
  if (!match) throw new Error(`--memory-max: got ${text}; allowed: a size such as 256M or 1G`);
  const unit = { "": 1, K: 1024, M: 1024 ** 2, G: 1024 ** 3 }[match[2]!.toUpperCase() as "" | "K" | "M" | "G"];
  return Math.round(Number(match[1]) * unit);
}

const MINUTES = Number(option("minutes") ?? 30);
const INTERVAL_S = Number(option("interval") ?? 60);
const MEMORY_MAX = option("memory-max");
const BUNDLE = Deno.args.includes("--bundle");
/** `--inspect PORT`: homed's V8 inspector on 127.0.0.1:PORT, for heap snapshots during a run (`heap_diff.ts`). */
const INSPECT = option("inspect");
/** `--child-env NAME=VALUE` (repeatable): more variables in homed's environment (e.g. `MALLOC_ARENA_MAX=1`), for experiments. */
const CHILD_ENV = Deno.args.flatMap((arg, at) => Deno.args[at - 1] === "--child-env" ? [arg] : []);
/** `--name NAME`: the run's files are results-NAME.json and homed-NAME.log (runs side by side do not overwrite). */
const NAME = option("name");
if (NAME !== undefined && !/^[a-z0-9-]+$/.test(NAME)) {
  throw new Error(`--name: got ${JSON.stringify(NAME)}; allowed: a-z, 0-9 and -, e.g. --name bundle-trim`);
}
for (const pair of CHILD_ENV.filter((pair) => !/^[A-Z_][A-Z0-9_]*=/.test(pair))) {
  throw new Error(`--child-env: got ${pair}; allowed: NAME=VALUE, e.g. MALLOC_ARENA_MAX=2`);
}
if (!(MINUTES > 0) || !(INTERVAL_S >= 1)) throw new Error("--minutes must be > 0 and --interval ≥ 1 (seconds)");
const DURATION_MS = MINUTES * 60_000;
/** `--warmup M`: the minutes left out of the verdicts (default 5; a third of a run shorter than 15 minutes). */
const WARMUP_MIN = option("warmup");
if (WARMUP_MIN !== undefined && !(Number(WARMUP_MIN) >= 0 && Number(WARMUP_MIN) < MINUTES)) {
  throw new Error(`--warmup: got ${WARMUP_MIN}; allowed: minutes from 0 to less than --minutes (${MINUTES})`);
}
const WARMUP_MS = WARMUP_MIN !== undefined ? Number(WARMUP_MIN) * 60_000 : MINUTES >= 15 ? 5 * 60_000 : DURATION_MS / 3;
/** The compared windows: 5 minutes each, or half of what follows the warm-up when that is shorter than 10. */
const WINDOW_MS = Math.min(5 * 60_000, (DURATION_MS - WARMUP_MS) / 2);

const OWNER = "20002000";
const KEY = "sk-bench-000000000000";
const REMINDER_LEAD_MS = 30_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const round = (x: number, digits = 1) => Math.round(x * 10 ** digits) / 10 ** digits;
const decoder = new TextDecoder();

// ---------------------------------------------------------------- helpers run as programs

/** Runs `program args` and returns its stdout, or undefined when it fails. */
async function run(program: string, args: string[], stdin?: string): Promise<string | undefined> {
  const child = new Deno.Command(program, {
    args,
    stdin: stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  if (stdin !== undefined) {
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(stdin));
    await writer.close();
  }
  const out = await child.output();
  return out.success ? decoder.decode(out.stdout) : undefined;
}

/** `VmRSS` of `pid` in MB (`/proc/<pid>/status`), with its anonymous and file-backed parts; undefined when it is gone. */
async function residentMb(pid: number): Promise<{ rss: number; anon: number; file: number } | undefined> {
  const status = await run("cat", [`/proc/${pid}/status`]);
  const field = (name: string) => {
    const kb = status && new RegExp(`^${name}:\\s+(\\d+)\\s+kB`, "m").exec(status)?.[1];
    return kb ? round(Number(kb) / 1024) : undefined;
  };
  const rss = field("VmRSS");
  return rss === undefined
    ? undefined
    : { rss, anon: field("RssAnon") ?? Number.NaN, file: field("RssFile") ?? Number.NaN };
}

/** homed's JS heap (used and held, and held by V8 space) and external memory in MB, from `/api/status`'s `process`. */
async function heapMb(): Promise<{ used: number; total: number; external: number; spaces: Record<string, number> }> {
  try {
    const body = await (await fetch(`${homed.url}/api/status`)).json() as {
      process?: {
        heap_used_bytes: number;
        heap_total_bytes: number;
        external_bytes: number;
        heap_spaces?: Record<string, { size_bytes: number }>;
      };
    };
    const mb = (bytes: number | undefined) => bytes === undefined ? Number.NaN : round(bytes / 1024 / 1024);
    return {
      used: mb(body.process?.heap_used_bytes),
      total: mb(body.process?.heap_total_bytes),
      external: mb(body.process?.external_bytes),
      spaces: Object.fromEntries(
        Object.entries(body.process?.heap_spaces ?? {}).map(([name, space]) => [name, mb(space.size_bytes)]),
      ),
    };
  } catch {
    return { used: Number.NaN, total: Number.NaN, external: Number.NaN, spaces: {} };
  }
}

/** Open descriptors of `pid` (entries of `/proc/<pid>/fd`). */
async function openFds(pid: number): Promise<number | undefined> {
  const listing = await run("ls", ["-1", `/proc/${pid}/fd`]);
  return listing === undefined ? undefined : listing.split("\n").filter(Boolean).length;
}

/** Every `*.db-wal` under `dir`, with its size in KB. */
async function walSizes(dir: string, base = dir): Promise<Record<string, number>> {
  const sizes: Record<string, number> = {};
  try {
    for await (const entry of Deno.readDir(dir)) {
      const path = join(dir, entry.name);
      if (entry.isDirectory) Object.assign(sizes, await walSizes(path, base));
      else if (entry.name.endsWith(".db-wal")) {
        const stat = await Deno.stat(path).catch(() => undefined);
        if (stat) sizes[path.slice(base.length + 1)] = Math.round(stat.size / 1024);
      }
    }
  } catch { /* a folder removed while walking */ }
  return sizes;
}

// ---------------------------------------------------------------- memory cgroup

/** A memory-limited cgroup holding the homed child. */
interface MemoryCgroup {
  version: 1 | 2;
  path: string;
  limitBytes: number;
  /** Peak usage in bytes, OOM kills so far. */
  read(): Promise<{ peakBytes: number | undefined; oomKills?: number }>;
  remove(): Promise<boolean>;
}

/** Creates `homed-soak-<pid>` (v2 when `/sys/fs/cgroup` is unified, else v1's memory controller) and moves `pid` in. */
async function memoryCgroup(limitBytes: number, pid: number): Promise<MemoryCgroup> {
  const unified = (await run("cat", ["/sys/fs/cgroup/cgroup.controllers"]))?.split(/\s+/).includes("memory");
  const version = unified ? 2 : 1;
  const root = unified ? "/sys/fs/cgroup" : "/sys/fs/cgroup/memory";
  const path = `${root}/homed-soak-${Deno.pid}`;
  const write = async (file: string, value: string) => {
    if (await run("tee", [`${path}/${file}`], value) === undefined) throw new Error(`could not write ${path}/${file}`);
  };
  if (unified) await run("tee", ["/sys/fs/cgroup/cgroup.subtree_control"], "+memory");
  if (await run("mkdir", [path]) === undefined) throw new Error(`could not create ${path} (root needed)`);
  await write(version === 2 ? "memory.max" : "memory.limit_in_bytes", String(limitBytes));
  if (version === 1) await run("tee", [`${path}/memory.memsw.limit_in_bytes`], String(limitBytes)); // if swap is accounted
  await write("cgroup.procs", String(pid));
  const number = async (file: string) => {
    const text = await run("cat", [`${path}/${file}`]);
    return text === undefined ? undefined : Number(text.trim());
  };
  return {
    version,
    path,
    limitBytes,
    async read() {
      if (version === 2) {
        const events = await run("cat", [`${path}/memory.events`]);
        const kills = events && /^oom_kill (\d+)/m.exec(events)?.[1];
        return { peakBytes: await number("memory.peak"), ...(kills ? { oomKills: Number(kills) } : {}) };
      }
      const control = await run("cat", [`${path}/memory.oom_control`]);
      const kills = control && /^oom_kill (\d+)/m.exec(control)?.[1];
      return { peakBytes: await number("memory.max_usage_in_bytes"), ...(kills ? { oomKills: Number(kills) } : {}) };
    },
    async remove() {
      for (let attempt = 0; attempt < 20; attempt++) {
        if (await run("rmdir", [path]) !== undefined) return true;
        await sleep(250);
      }
      return false;
    },
  };
}

// ---------------------------------------------------------------- the fake LLM

/** The last user message's text and whether the request ends on a tool result. */
function lastTurn(body: Record<string, unknown>): { text: string; afterTool: boolean } {
  const messages = (body.messages ?? []) as Array<{ role?: string; content?: unknown }>;
  const user = messages.findLast((message) => message.role === "user");
  const text = typeof user?.content === "string" ? user.content : JSON.stringify(user?.content ?? "");
  return { text, afterTool: messages.at(-1)?.role === "tool" };
}

/** Requests the fake answered, by kind. */
const llmCounts = { chat: 0, reminderCreated: 0, reminderFired: 0, distiller: 0, other: 0 };
let callCounter = 0;

/**
 * Answers every chat request from its content: a message with `remind-me <token>` (when `schedule_create` is offered)
 * gets a `schedule_create` call 30 s ahead for `reminder-fire <token>`; the fired reminder, any other message and the
 * round after a tool result get a short text naming the message's token (`h12`, `q7`, `r3`), which is how the QQ
 * simulator knows which turn a reply ends.
 */
function fakeLlmAnswer(body: Record<string, unknown>): WireAnswer {
  const { text, afterTool } = lastTurn(body);
  // The person's words come last (a reference block before them may name other turns' tokens).
  const token = [...text.matchAll(/\b([hq]\d+)\b/g)].at(-1)?.[1] ?? "x";
  const tools = (body.tools ?? []) as Array<{ function?: { name?: string } }>;
  // The memory job's distiller asks for strict JSON; no fact is a valid answer (the batch is consumed all the
  // same); it comes first, since the batch quotes the turns' words, reminders included.
  if (!tools.length && JSON.stringify(body.messages ?? []).includes("durable facts for long-term memory")) {
    llmCounts.distiller++;
    return { content: '{"facts": []}' };
  }
  if (!afterTool && /remind-me/.test(text) && tools.some((tool) => tool.function?.name === "schedule_create")) {
    llmCounts.reminderCreated++;
    const at = `${new Date(Date.now() + REMINDER_LEAD_MS).toISOString().slice(0, 19)}+00:00`;
    return {
      toolCalls: [{
        id: `call_${++callCounter}`,
        name: "schedule_create",
        arguments: JSON.stringify({ text: `reminder-fire r${token}`, at }),
      }],
    };
  }
  if (/reminder-fire/.test(text)) {
    llmCounts.reminderFired++;
    return { content: `Reminder fired (r${token}).` };
  }
  if (tools.length && /\b[hq]\d+\b/.test(text)) llmCounts.chat++;
  else llmCounts.other++;
  return { content: afterTool ? `Done, ${token}.` : `Noted, ${token}: the lamp is off.` };
}

function startFakeLlm(): { baseUrl: string; close: () => Promise<void> } {
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (request) => {
    const url = new URL(request.url);
    if (request.method === "GET" && url.pathname === "/v1/models") {
      return Response.json({ object: "list", data: [{ id: "fake-model", object: "model" }] });
    }
    if (request.method !== "POST" || url.pathname !== "/v1/chat/completions") {
      await request.body?.cancel();
      return Response.json({ error: { message: "no route" } }, { status: 404 });
    }
    const body = await request.json() as Record<string, unknown>;
    const answer = fakeLlmAnswer(body);
    return body.stream === true
      ? streamResponse(answer, body.model)
      : Response.json(completionBody(answer, body.model, `chatcmpl-${++callCounter}`));
  });
  return { baseUrl: `http://127.0.0.1:${server.addr.port}/v1`, close: () => server.shutdown() };
}

// ---------------------------------------------------------------- starting homed

// ---------------------------------------------------------------- the run

const HA_ENTITIES = Array.from({ length: 8 }, (_, i) => `binary_sensor.room_${i}_motion`);
const bundle = BUNDLE ? await buildBundle("homed-soak-bundle-") : undefined;
const fakeLlm = startFakeLlm();
const ha = FakeHomeAssistant.start({
  token: "soak-ha-token-0123456789",
  entities: [
    ...HA_ENTITIES.map((entity_id) => ({ entity_id, state: "off", attributes: { friendly_name: entity_id } })),
    { entity_id: "light.kitchen", state: "off", attributes: { friendly_name: "Kitchen" } },
  ],
});
const mosquitto = await Mosquitto.start();

const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-soak-" });
const dataDir = join(dir, "data");
await Deno.mkdir(join(dataDir, "knowledge"), { recursive: true });
const port = freePort();
const configPath = join(dir, "homed.yaml");
/** The daily backup's minute and hour (UTC): the warm-up's middle; off when the warm-up is too short to hold it. */
const backupAt = new Date(Date.now() + WARMUP_MS / 2);
const backupSchedule = WARMUP_MS >= 120_000 ? `${backupAt.getUTCMinutes()} ${backupAt.getUTCHours()} * * *` : "";
await Deno.writeTextFile(
  configPath,
  stringify({
    daemon: { listen_addr: `127.0.0.1:${port}`, data_dir: dataDir, timezone: "UTC" },
    backup: { schedule: backupSchedule },
    llm: { base_url: fakeLlm.baseUrl, api_key: KEY, max_retries: 0 },
    onebot: { owner: OWNER, min_send_interval: "0s" },
    paths: { personal: join(REPO, "personal.md"), knowledge: join(dataDir, "knowledge") },
    smart_home: {
      home_assistant: { url: ha.url, token: ha.token, subscribe: ["binary_sensor.*"] },
      mqtt: { url: mosquitto.url, subscribe: ["home/+/motion", "home/+/temperature"] },
    },
    memory: { distill_interval: "1m", cold_after: "1m" },
    // The HA and MQTT events in every turn's reference block are household words: without this, each reminder would
    // wait for the owner's yes (the taint rule), as it would in a real house whose owner had not allowed it.
    agent: { tool_policy: { schedule_create: "allow" } },
  }),
);
const extraEnv = Object.fromEntries(
  CHILD_ENV.map((pair) => [pair.slice(0, pair.indexOf("=")), pair.slice(pair.indexOf("=") + 1)]),
);
// DAEMON_ENV: homed's environment as `deno task start`, the supervisor and the unit give it.
const ws: Workspace = { dir, configPath, env: { HOMED_CONFIG: configPath, ...DAEMON_ENV, ...extraEnv }, port };
const inspect = INSPECT ? [`--inspect=127.0.0.1:${INSPECT}`] : [];
/** `--child-v8 FLAGS`: more V8 flags for homed after the daemon's own (comma-separated), for experiments. */
const CHILD_V8 = option("child-v8");
const withV8 = (flags: string[]) =>
  CHILD_V8 ? flags.map((flag) => flag.startsWith("--v8-flags=") ? `${flag},${CHILD_V8}` : flag) : flags;
const args = bundle
  ? ["run", ...inspect, ...withV8((await bundleRunArgs(bundle, ws.env)).slice(1))]
  : ["run", ...inspect, ...withV8(await taskFlags("run", ws.env)), "src/main.ts", "run"];
const child = new Deno.Command(Deno.execPath(), {
  args,
  cwd: REPO,
  env: childEnv(ws.env),
  clearEnv: true,
  stdin: "null",
  stdout: "piped",
  stderr: "piped",
}).spawn();
// Into the cgroup before it has loaded anything: the limit covers the whole life of the process.
let cgroup: MemoryCgroup | undefined;
let cgroupError: string | undefined;
if (MEMORY_MAX) {
  try {
    cgroup = await memoryCgroup(parseSize(MEMORY_MAX), child.pid);
  } catch (error) {
    cgroupError = String(error);
    console.error(`--memory-max: ${cgroupError}`);
  }
}
let exited: Deno.CommandStatus | undefined;
child.status.then((status) => exited = status);
const homed = await homedReady(child, ws, "homed");
const pid = homed.pid;

// Anchor: a bare Deno server under the same V8 flags, polled like the console polls homed.
const anchorPort = freePort();
const anchor = new Deno.Command(Deno.execPath(), {
  args: [
    "eval",
    DAEMON_V8_FLAGS,
    "--no-prompt",
    "--allow-net=127.0.0.1",
    `Deno.serve({ hostname: "127.0.0.1", port: ${anchorPort}, onListen() {} }, async (r) => ` +
    `Response.json({ ok: true, echo: r.method === "POST" ? await r.text() : "", at: Date.now() }));`,
  ],
  cwd: REPO,
  env: childEnv({ ...DAEMON_ENV }),
  clearEnv: true,
  stdin: "null",
  stdout: "null",
  stderr: "null",
}).spawn();

// ---------------------------------------------------------------- load

const started = performance.now();
const elapsed = () => performance.now() - started;
let running = true;
const alive = () => running && !exited;
const errors: Record<string, number> = {};
const fail = (what: string, error: unknown) => {
  errors[what] = (errors[what] ?? 0) + 1;
  if (errors[what] <= 3) console.error(`${what}: ${error instanceof Error ? error.message : String(error)}`);
};
const counts = { http: 0, qq: 0, status: 0, events: 0, ha: 0, mqtt: 0, anchor: 0 };
/** Turn latencies of the current interval, in ms. */
let latencies: { http: number[]; qq: number[] } = { http: [], qq: [] };

/** Repeats `step` every `everyMs` (measured from each start) while the run lasts. */
async function every(what: string, everyMs: number, step: (n: number) => Promise<void>): Promise<void> {
  for (let n = 0; alive(); n++) {
    const at = performance.now();
    try {
      await step(n);
    } catch (error) {
      fail(what, error);
    }
    const wait = everyMs - (performance.now() - at);
    if (wait > 0 && alive()) await sleep(wait);
  }
}

const http = every("http chat", 3_000, async (n) => {
  const text = n % 5 === 4 ? `remind-me h${n}: take the laundry out` : `h${n}: is the hall lamp on?`;
  const at = performance.now();
  const response = await fetch(`${homed.url}/api/chat`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ text }),
  });
  await response.body?.cancel();
  if (!response.ok) throw new Error(`POST /api/chat: ${response.status}`);
  latencies.http.push(performance.now() - at);
  counts.http++;
});

const sim = await OneBotSim.connect(`ws://127.0.0.1:${port}/onebot/v11/ws`, { flavour: "napcat" });
const qqWaiting = new Map<string, () => void>();
sim.answerWith((action) => {
  if (action.action === "send_private_msg") {
    const token = /\b(q\d+)\b/.exec(JSON.stringify(action.params))?.[1];
    if (token && !JSON.stringify(action.params).includes("Reminder fired")) qqWaiting.get(token)?.();
  }
  // Actions kept by the simulator are not needed here: drop them so the bench's own memory stays flat.
  sim.actions.length = 0;
  return { data: { message_id: ++callCounter } };
});
const qq = every("qq chat", 4_000, async (n) => {
  const token = `q${n}`;
  const replied = new Promise<void>((resolve) => qqWaiting.set(token, resolve));
  const at = performance.now();
  sim.privateMessage(
    OWNER,
    [{
      type: "text",
      data: { text: n % 5 === 2 ? `remind-me ${token}: water the plants` : `${token}: 客厅的灯开着吗？` },
    }],
  );
  const timeout = sleep(30_000).then(() => "timeout" as const);
  const outcome = await Promise.race([replied, timeout]);
  qqWaiting.delete(token);
  if (outcome === "timeout") throw new Error(`${token}: no reply within 30 s`);
  latencies.qq.push(performance.now() - at);
  counts.qq++;
});
const heartbeat = every("qq heartbeat", 30_000, () => Promise.resolve(sim.heartbeat()));

const status = every("GET /api/status", 2_000, async () => {
  const response = await fetch(`${homed.url}/api/status`);
  await response.body?.cancel();
  if (!response.ok) throw new Error(`GET /api/status: ${response.status}`);
  counts.status++;
});

const events = every("/api/events", 10_000, async (n) => {
  const abort = new AbortController();
  const response = await fetch(`${homed.url}/api/events`, { signal: abort.signal });
  if (!response.ok) {
    await response.body?.cancel();
    throw new Error(`GET /api/events: ${response.status}`);
  }
  const reader = response.body!.getReader();
  const until = sleep(3_000 + (n % 5) * 1_000).then(() => "done" as const);
  for (;;) {
    const next = await Promise.race([reader.read(), until]);
    if (next === "done" || next.done) break;
  }
  abort.abort();
  await reader.cancel().catch(() => {});
  counts.events++;
});

const haEvents = every("home assistant", 5_000, (n) => {
  const entity = HA_ENTITIES[n % HA_ENTITIES.length]!;
  ha.setState(entity, n % 2 ? "off" : "on", { friendly_name: entity, n });
  counts.ha++;
  return Promise.resolve();
});

const publisher = await TestMqttClient.connect(mosquitto.url, "soak-publisher");
const mqtt = every("mqtt", 2_000, async (n) => {
  const room = ["hall", "kitchen", "bedroom", "bath"][n % 4]!;
  await publisher.publish(
    n % 2 ? `home/${room}/motion` : `home/${room}/temperature`,
    n % 2 ? (n % 4 === 1 ? "ON" : "OFF") : String(20 + (n % 7) / 2),
    { qos: 0 },
  );
  counts.mqtt++;
});

const anchorLoad = every("anchor", 2_000, async (n) => {
  const response = await fetch(`http://127.0.0.1:${anchorPort}/`, {
    method: n % 2 ? "GET" : "POST",
    body: n % 2 ? null : `m${n}`,
  });
  await response.body?.cancel();
  counts.anchor++;
});

// ---------------------------------------------------------------- sampling

/** One sample: homed's figures at `minute` and the turn latencies of the interval before it. */
interface Sample {
  minute: number;
  rss_mb: number;
  /** `RssAnon` and `RssFile`: the resident set's anonymous memory and the file pages mapped (the executable's). */
  rss_anon_mb: number;
  rss_file_mb: number;
  /** The JS heap V8 uses and holds, and external memory, from `/api/status`'s `process`. */
  heap_used_mb: number;
  heap_total_mb: number;
  /** What V8 holds in each space of the heap (`old_space`, `code_space`, `large_object_space`, …). */
  heap_spaces_mb: Record<string, number>;
  external_mb: number;
  fds: number;
  wal_kb: number;
  wal_files: Record<string, number>;
  turns: number;
  p50_ms: number;
  p99_ms: number;
  anchor_rss_mb: number;
}
const samples: Sample[] = [];
let lastSample: Sample | undefined;

async function sample(): Promise<Sample | undefined> {
  const resident = await residentMb(pid);
  const fds = await openFds(pid);
  if (resident === undefined || fds === undefined) return undefined;
  const heap = await heapMb();
  const wal = await walSizes(dataDir);
  const turns = [...latencies.http, ...latencies.qq];
  latencies = { http: [], qq: [] };
  return {
    minute: round(elapsed() / 60_000, 2),
    rss_mb: resident.rss,
    rss_anon_mb: resident.anon,
    rss_file_mb: resident.file,
    heap_used_mb: heap.used,
    heap_total_mb: heap.total,
    heap_spaces_mb: heap.spaces,
    external_mb: heap.external,
    fds,
    wal_kb: Object.values(wal).reduce((a, b) => a + b, 0),
    wal_files: wal,
    turns: turns.length,
    p50_ms: round(percentile(turns, 50)),
    p99_ms: round(percentile(turns, 99)),
    anchor_rss_mb: (await residentMb(anchor.pid))?.rss ?? Number.NaN,
  };
}

/** Every turn's latency with the time it was recorded (for the windows' p99). */
const allTurns: Array<{ at: number; ms: number }> = [];
console.log(
  `soak: ${MINUTES} min, a sample every ${INTERVAL_S} s, homed pid ${pid} (${bundle ? "bundle" : "sources"})` +
    (cgroup ? `, cgroup ${cgroup.path} (v${cgroup.version}) limit ${MEMORY_MAX}` : ""),
);
// Whole intervals only: a run of 2.5 min sampled every 60 s ends at 2 min.
while ((samples.length + 1) * INTERVAL_S * 1000 <= DURATION_MS + 1 && !exited) {
  await sleep(Math.max(0, (samples.length + 1) * INTERVAL_S * 1000 - elapsed()));
  const at = elapsed();
  for (const ms of [...latencies.http, ...latencies.qq]) allTurns.push({ at, ms });
  const taken = exited ? undefined : await sample();
  if (!taken) break;
  samples.push(taken);
  lastSample = taken;
  console.log(
    `  ${
      taken.minute.toFixed(2).padStart(6)
    } min  rss ${taken.rss_mb} MB (anon ${taken.rss_anon_mb}, file ${taken.rss_file_mb})  ` +
      `heap ${taken.heap_used_mb}/${taken.heap_total_mb} MB (old ${taken.heap_spaces_mb.old_space ?? "?"}, code ${
        taken.heap_spaces_mb.code_space ?? "?"
      }, lo ${
        taken.heap_spaces_mb.large_object_space ?? 0
      }) ext ${taken.external_mb}  fds ${taken.fds}  wal ${taken.wal_kb} KB  ` +
      `turns ${taken.turns}  p50 ${taken.p50_ms} ms  p99 ${taken.p99_ms} ms  anchor rss ${taken.anchor_rss_mb} MB`,
  );
}
running = false;
const survived = !exited;
const peak = cgroup ? await cgroup.read() : undefined;
await Promise.all([http, qq, heartbeat, status, events, haEvents, mqtt, anchorLoad]);

// ---------------------------------------------------------------- teardown

/** The timer's, the memory service's and the backups' own status at the end (firings; the job's last run; the backup). */
const endedAt = Date.now();
const finalStatus = await (async () => {
  try {
    const response = await fetch(`${homed.url}/api/status`);
    const body = await response.json() as {
      schedules?: Record<string, unknown>;
      services?: Record<string, Record<string, unknown>>;
      backups?: Record<string, unknown>;
    };
    return { schedules: body.schedules ?? {}, memory: body.services?.memory ?? {}, backups: body.backups ?? {} };
  } catch {
    return { schedules: {}, memory: {}, backups: {} };
  }
})();
await sim.close().catch(() => {});
await publisher.close().catch(() => {});
const code = await homed.stop({ keep: true });
// homed's whole log beside the results: a verdict NOT MET (a stalled timer, a climb) is read from it afterwards.
const logPath = fileURLToPath(
  new URL(`../out/soak/homed-${NAME ?? (bundle ? "bundle" : "sources")}.log`, import.meta.url),
);
await Deno.mkdir(dirname(logPath), { recursive: true });
await Deno.writeTextFile(logPath, homed.stderr());
anchor.kill("SIGTERM");
await anchor.status;
const cgroupRemoved = cgroup ? await cgroup.remove() : undefined;
await ha.close();
await mosquitto.close();
await fakeLlm.close();
const haViolations = ha.takeViolations();
await Deno.remove(dir, { recursive: true });
if (bundle) await Deno.remove(join(bundle, ".."), { recursive: true });

// ---------------------------------------------------------------- analysis

/** Least-squares slope of `y` over `x`. */
function slope(points: Array<[number, number]>): number {
  if (points.length < 2) return Number.NaN;
  const mx = points.reduce((a, [x]) => a + x, 0) / points.length;
  const my = points.reduce((a, [, y]) => a + y, 0) / points.length;
  const num = points.reduce((a, [x, y]) => a + (x - mx) * (y - my), 0);
  const den = points.reduce((a, [x]) => a + (x - mx) ** 2, 0);
  return den ? num / den : Number.NaN;
}
const median = (values: number[]) => percentile(values, 50);

const runMs = samples.length ? samples.at(-1)!.minute * 60_000 : 0;
const afterWarmup = samples.filter((s) => s.minute * 60_000 > WARMUP_MS);
const firstWindow = (s: { minute: number }) =>
  s.minute * 60_000 > WARMUP_MS && s.minute * 60_000 <= WARMUP_MS + WINDOW_MS;
const lastWindow = (s: { minute: number }) => s.minute * 60_000 > runMs - WINDOW_MS;
const rssSlope = round(slope(afterWarmup.map((s) => [s.minute / 60, s.rss_mb])), 2);
const anonSlope = round(slope(afterWarmup.map((s) => [s.minute / 60, s.rss_anon_mb])), 2);
const heapSlope = round(slope(afterWarmup.map((s) => [s.minute / 60, s.heap_used_mb])), 2);
const anchorSlope = round(slope(afterWarmup.map((s) => [s.minute / 60, s.anchor_rss_mb])), 2);
/**
 * The floor's slope: the least RSS of each whole 5-minute window after the warm-up, against the window's middle. V8's
 * old space climbs and falls back at each full collection (≈ 10 MB, every 10–20 minutes here), so a least-squares line
 * through every sample reads the saw's phase as much as a trend; what a collection leaves — the floor — grows only
 * with what is really kept. Reported beside the slope, not instead of it.
 */
const floorSlope = (() => {
  const windows = new Map<number, Sample[]>();
  for (const s of afterWarmup) {
    const at = Math.floor((s.minute * 60_000 - WARMUP_MS - 1) / 300_000);
    windows.set(at, [...windows.get(at) ?? [], s]);
  }
  const whole = [...windows.values()].filter((w) => w.length * INTERVAL_S >= 290);
  return whole.length < 3 ? Number.NaN : round(
    slope(whole.map((w) => [(w[0]!.minute + w.at(-1)!.minute) / 120, Math.min(...w.map((s) => s.rss_mb))])),
    2,
  );
})();
const fdSlope = round(slope(afterWarmup.map((s) => [s.minute / 60, s.fds])), 1);
const fdGrowth = median(samples.filter(lastWindow).map((s) => s.fds)) -
  median(samples.filter(firstWindow).map((s) => s.fds));
const turnsIn = (window: (s: { minute: number }) => boolean) =>
  allTurns.filter((t) => window({ minute: t.at / 60_000 })).map((t) => t.ms);
const p99First = round(percentile(turnsIn(firstWindow), 99));
const p99Last = round(percentile(turnsIn(lastWindow), 99));
const p99Change = round((p99Last / p99First - 1) * 100);
const met = (ok: boolean) => ok ? "PASS" : "NOT MET";
// The timer kept firing: no schedule was overdue by more than a wake-up (a minute) when the run ended.
const nextRun = typeof finalStatus.schedules.next_run === "string" ? Date.parse(finalStatus.schedules.next_run) : NaN;
const overdueS = Number.isNaN(nextRun) ? 0 : Math.max(0, Math.round((endedAt - nextRun) / 1000));
const verdicts = {
  reminders: met(survived && overdueS <= 60),
  rss_slope: met(survived && rssSlope <= 1),
  descriptors: met(survived && fdGrowth <= 2),
  p99: met(survived && p99Last <= p99First * 1.2),
};

const env = await environment();
const results = {
  ...env,
  short_validation_run: MINUTES < 30,
  minutes: MINUTES,
  interval_s: INTERVAL_S,
  entry: bundle ? "bundle" : "sources",
  v8_flags: CHILD_V8 ? `${DAEMON_V8_FLAGS},${CHILD_V8}` : DAEMON_V8_FLAGS,
  env: { ...DAEMON_ENV, ...extraEnv },
  warmup_min: round(WARMUP_MS / 60_000, 2),
  window_min: round(WINDOW_MS / 60_000, 2),
  survived,
  exit: exited ? { code: exited.code, signal: exited.signal } : { stopped_code: code },
  memory_max: MEMORY_MAX
    ? {
      asked: MEMORY_MAX,
      ...(cgroup
        ? {
          cgroup: cgroup.path,
          version: cgroup.version,
          limit_mb: round(cgroup.limitBytes / 1024 ** 2),
          peak_mb: peak?.peakBytes === undefined ? null : round(peak.peakBytes / 1024 ** 2),
          oom_kills: peak?.oomKills ?? null,
          removed: cgroupRemoved,
        }
        : { error: cgroupError }),
    }
    : null,
  summary: {
    rss_first_mb: samples[0]?.rss_mb,
    rss_last_mb: lastSample?.rss_mb,
    rss_slope_mb_per_h: rssSlope,
    rss_floor_slope_mb_per_h: floorSlope,
    rss_anon_slope_mb_per_h: anonSlope,
    heap_used_slope_mb_per_h: heapSlope,
    anchor_rss_slope_mb_per_h: anchorSlope,
    fds_first_window: median(samples.filter(firstWindow).map((s) => s.fds)),
    fds_last_window: median(samples.filter(lastWindow).map((s) => s.fds)),
    fd_growth: fdGrowth,
    fd_slope_per_h: fdSlope,
    p99_first_window_ms: p99First,
    p99_last_window_ms: p99Last,
    p99_change_pct: p99Change,
    reminders_overdue_s: overdueS,
    wal_last_kb: lastSample?.wal_kb,
  },
  targets: {
    "RSS slope ≤ 1 MB/hour": verdicts.rss_slope,
    "descriptors flat (growth ≤ 2)": verdicts.descriptors,
    "p99 last window within 20 % of first": verdicts.p99,
    "reminders on time (none overdue > 60 s at the end)": verdicts.reminders,
  },
  load: {
    ...counts,
    llm: llmCounts,
    schedules: finalStatus.schedules,
    memory_service: finalStatus.memory,
    backups: finalStatus.backups,
    errors,
    ha_violations: haViolations,
  },
  samples,
};
await writeResults(new URL(NAME ? `./results-${NAME}.json` : "./results.json", import.meta.url), results);

console.log(
  `homed soak, ${MINUTES} min${MINUTES < 30 ? " (SHORT VALIDATION RUN)" : ""}, ${bundle ? "bundle" : "sources"}` +
    ` (${env.commit.slice(0, 10)}, deno ${env.deno}, ${env.cpu})`,
);
console.table(Object.fromEntries(samples.map((s) => {
  const { wal_files: _files, minute, ...figures } = s;
  return [minute.toFixed(2), figures];
})));
console.log(
  `load: ${counts.http} HTTP chats, ${counts.qq} QQ chats, ${llmCounts.reminderCreated} reminders created, ` +
    `${llmCounts.reminderFired} fired, ${counts.status} status polls, ${counts.events} /api/events clients, ` +
    `${counts.ha} HA events, ${counts.mqtt} MQTT messages, ${llmCounts.distiller} distiller requests, ${llmCounts.other} other LLM requests; errors ${
      JSON.stringify(errors)
    }`,
);
console.table({
  [`RSS slope after ${round(WARMUP_MS / 60_000, 2)} min warm-up`]: {
    figure: `${rssSlope} MB/h (anchor ${anchorSlope} MB/h)`,
    target: "≤ 1 MB/h",
    verdict: verdicts.rss_slope,
  },
  "RSS floor (least of each 5 min) slope": {
    figure: `${floorSlope} MB/h`,
    target: "(reported)",
    verdict: "—",
  },
  "descriptors (median, last vs first window)": {
    figure: `${results.summary.fds_first_window} → ${results.summary.fds_last_window} (${
      fdGrowth >= 0 ? "+" : ""
    }${fdGrowth})`,
    target: "flat (≤ +2)",
    verdict: verdicts.descriptors,
  },
  [`turn p99, last ${round(WINDOW_MS / 60_000, 2)} min vs first`]: {
    figure: `${p99First} → ${p99Last} ms (${p99Change >= 0 ? "+" : ""}${p99Change} %)`,
    target: "within 20 %",
    verdict: verdicts.p99,
  },
  "reminders: the soonest overdue at the end": {
    figure: `${overdueS} s (${finalStatus.schedules.fired ?? "?"} fired, ${
      finalStatus.schedules.active ?? "?"
    } waiting)`,
    target: "≤ 60 s",
    verdict: verdicts.reminders,
  },
});
if (results.memory_max) {
  console.log(
    `memory-limited cgroup: ${JSON.stringify(results.memory_max)}; child ${survived ? "survived" : "DID NOT survive"}`,
  );
}
if (!survived) console.log(`homed exited early: ${JSON.stringify(results.exit)}\n${homed.stderr().slice(-2_000)}`);
