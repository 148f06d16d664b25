/**
 * Issue 38, "acknowledged means durable", shown on a real homed: a power cut cannot be simulated, so the order of the
 * system calls is what is checked. homed runs under `strace -f`, and for each thing it confirms to a person — a
 * schedule created over `/api/chat` (the model's `schedule_create`), one cancelled over the schedule API, a memory
 * fact corrected and one forgotten over the console's memory API, a knowledge topic written over the console's
 * knowledge API, one created by the model's `knowledge_create` — the fsync/fdatasync that puts the change on disk must
 * come before the write of the HTTP reply that says it is done: the store's last WAL write before the reply is
 * followed by an fsync of the WAL; a knowledge file's rename, by an fsync of its folder. strace is a Debian tool
 * `.ci/run` installs: outside CI a machine without it ignores this test, under CI=true it fails.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { getLogger } from "@logtape/logtape";
import { systemClock } from "../src/clock.ts";
import { openMemory } from "../src/memory/memory.ts";
import { DEFAULT_CONTRACT, TEST_KEY } from "./support/contract.ts";
import { FakeLlm } from "./support/fake_llm.ts";
import { postJson, startHomed, workspace } from "./support/homed_process.ts";
import { outsideNeed, programRuns } from "./support/outside_tool.ts";
import { teardown } from "./support/teardown.ts";

const strace = await outsideNeed("strace", () => programRuns("strace", ["-V"]));

/** The system calls traced: syncs, file writes and renames, and every way a socket reply can be written. */
const TRACED = "fsync,fdatasync,write,pwrite64,writev,sendto,sendmsg,rename,renameat,renameat2";

/** One line of the trace: its index, the call, the path of its first argument (`-y`), and the line. */
interface Call {
  index: number;
  name: string;
  path: string;
  line: string;
}

/**
 * The calls of an `strace -f -y` output, in the order they completed (an `<unfinished ...>` call counts at its
 * `resumed` line).
 */
function calls(trace: string): Call[] {
  const found: Call[] = [];
  const pending = new Map<string, string>();
  trace.split("\n").forEach((line, index) => {
    const pid = line.split(" ", 1)[0]!;
    let text = line.slice(pid.length + 1).trimStart();
    if (text.endsWith("<unfinished ...>")) {
      pending.set(pid, text);
      return;
    }
    const resumed = /^<\.\.\. (\w+) resumed>/.exec(text);
    if (resumed) text = `${pending.get(pid) ?? `${resumed[1]}(`}${text.slice(resumed[0].length)}`;
    const call = /^(\w+)\((?:\d+<([^>]*)>)?/.exec(text);
    if (call) found.push({ index, name: call[1]!, path: call[2] ?? "", line: text });
  });
  return found;
}

/** The call that wrote the HTTP reply whose body holds `marker` (the last such write). */
function replyWrite(all: Call[], marker: string): Call {
  // strace shows a string's quotes escaped.
  const shown = marker.replaceAll('"', '\\"');
  const reply = all.findLast((call) =>
    ["write", "writev", "sendto", "sendmsg"].includes(call.name) && call.path.startsWith("socket:") &&
    call.line.includes("HTTP/1.1 200") && call.line.includes(shown)
  );
  assert.ok(reply, `no write of an HTTP reply holding ${JSON.stringify(marker)} in the trace`);
  return reply;
}

/**
 * Asserts that the last write to `file` (a WAL) before the reply holding `marker` is followed by an fsync or fdatasync
 * of `file` before that reply; returns the two lines, for the log.
 */
function walSyncedBefore(all: Call[], file: string, marker: string): string {
  const reply = replyWrite(all, marker);
  const before = all.filter((call) => call.index < reply.index && call.path === file);
  const lastWrite = before.findLast((call) => call.name === "pwrite64" || call.name === "write");
  assert.ok(lastWrite, `no write to ${file} before the reply holding ${JSON.stringify(marker)}`);
  const sync = before.find((call) => call.index > lastWrite.index && /^f(data)?sync$/.test(call.name));
  assert.ok(
    sync,
    `${file} was written (line ${lastWrite.index}) but not fsync'd before the reply holding ` +
      `${JSON.stringify(marker)} (line ${reply.index}): a power cut could lose what homed confirmed`,
  );
  return `${lastWrite.name} ${lastWrite.index} < ${sync.name} ${sync.index} < reply ${reply.index}`;
}

/** Asserts that `content.md` of `folder` was renamed into place, then the folder fsync'd, before the reply. */
function renameSyncedBefore(all: Call[], folder: string, marker: string): string {
  const reply = replyWrite(all, marker);
  const before = all.filter((call) => call.index < reply.index);
  const rename = before.findLast((call) =>
    call.name.startsWith("rename") && call.line.includes(`${folder}/content.md`)
  );
  assert.ok(rename, `no rename onto ${folder}/content.md before the reply holding ${JSON.stringify(marker)}`);
  const sync = before.find((call) =>
    call.index > rename.index && /^f(data)?sync$/.test(call.name) && call.path === folder
  );
  assert.ok(
    sync,
    `${folder}/content.md was renamed into place (line ${rename.index}) but ${folder} was not fsync'd before the ` +
      `reply holding ${JSON.stringify(marker)} (line ${reply.index}): a power cut could undo the rename`,
  );
  return `${rename.name} ${rename.index} < ${sync.name} ${sync.index} < reply ${reply.index}`;
}

Deno.test({
  name:
    "under strace, each store's fsync comes before the HTTP reply acknowledging a schedule, a memory change, a knowledge write",
  ignore: strace.ignore,
  async fn() {
    strace.assertAvailable();
    const fake = FakeLlm.start(DEFAULT_CONTRACT);
    const ws = await workspace({
      llm: { base_url: fake.baseUrl, api_key: TEST_KEY },
      daemon: { timezone: "Asia/Shanghai" },
      onebot: { enabled: false },
    });
    // A fact to correct and one to forget, in memory.db before homed starts.
    const memoryDir = join(ws.dir, "data", "memory");
    await Deno.mkdir(memoryDir, { recursive: true });
    const seeded = await openMemory({ dir: memoryDir, clock: systemClock, logger: getLogger(["test"]) });
    const fact = (name: string, object: string) =>
      seeded.graph().record({
        subject: { name, type: "thing" },
        predicate: "is in",
        object,
        time: Date.now(),
        provenance: ["e-seed"],
        single: true,
      });
    fact("spare key", "the hall drawer");
    fact("old kettle", "the shed");
    const [keyFact] = seeded.graph().facts("spare key");
    const [kettleFact] = seeded.graph().facts("old kettle");
    await seeded.close();
    assert.ok(keyFact && kettleFact, "the seeded facts");

    const homed = await startHomed(ws);
    // Attached to the running homed (all its threads): stopping strace then detaches, and homed stops as always.
    const traceFile = join(ws.dir, "strace.txt");
    const tracer = new Deno.Command("strace", {
      args: ["-f", "-y", "-s", "512", "-e", `trace=${TRACED}`, "-o", traceFile, "-p", String(homed.pid)],
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    }).spawn();
    const tracerErr = tracer.stderr.pipeThrough(new TextDecoderStream()).getReader();
    let attached = "";
    while (!/attached/.test(attached)) {
      const { value, done } = await tracerErr.read();
      if (done) throw new Error(`strace did not attach to homed (pid ${homed.pid}): ${attached}`);
      attached += value;
    }
    const tracerDone = (async () => {
      while (!(await tracerErr.read()).done);
      return await tracer.status;
    })();
    const knowledgeDir = join(ws.dir, "knowledge");
    const send = async (method: string, path: string, body: unknown = {}) => {
      const response = await fetch(`${homed.url}${path}`, {
        method,
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      return { status: response.status, text: await response.text() };
    };
    try {
      fake.enqueue(
        {
          toolCalls: [{
            name: "schedule_create",
            arguments: { text: "Water the ferns", at: "2099-01-01T09:00:00+08:00" },
          }],
        },
        { reply: "ack-schedule-created" },
      );
      const created = await postJson(`${homed.url}/api/chat`, { text: "Remind me to water the ferns" });
      assert.equal(created.body.reply, "ack-schedule-created", JSON.stringify(created.body));
      const listed = await (await fetch(`${homed.url}/api/schedules`)).json();
      const id = listed.schedules[0].id as string;
      const cancelled = await send("DELETE", `/api/schedules/${id}`);
      assert.equal(cancelled.status, 200, cancelled.text);

      const corrected = await postJson(`${homed.url}/api/memory/facts/${keyFact.id}/correct`, {
        object: "ack-correct the kitchen drawer",
      });
      assert.equal(corrected.status, 200, JSON.stringify(corrected.body));
      const forgotten = await send("DELETE", `/api/memory/facts/${kettleFact.id}`);
      assert.equal(forgotten.status, 200, forgotten.text);

      const written = await send("PUT", "/api/knowledge/topics/ferns", { markdown: "# Ferns\n\nWater weekly.\n" });
      assert.equal(written.status, 200, written.text);
      fake.enqueue(
        { toolCalls: [{ name: "knowledge_create", arguments: { topic: "orchids", content: "Mist twice a week." } }] },
        { reply: "ack-knowledge-created" },
      );
      const learned = await postJson(`${homed.url}/api/chat`, { text: "Remember: orchids want misting" });
      assert.equal(learned.body.reply, "ack-knowledge-created", JSON.stringify(learned.body));

      tracer.kill("SIGTERM");
      await tracerDone;
      const all = calls(await Deno.readTextFile(traceFile));
      const dataDir = join(ws.dir, "data");
      const orders = {
        "schedule created (/api/chat)": walSyncedBefore(all, join(dataDir, "schedules.db-wal"), "ack-schedule-created"),
        "schedule cancelled (DELETE /api/schedules)": walSyncedBefore(
          all,
          join(dataDir, "schedules.db-wal"),
          cancelled.text.slice(0, 40),
        ),
        "memory fact corrected": walSyncedBefore(
          all,
          join(memoryDir, "memory.db-wal"),
          "ack-correct the kitchen drawer",
        ),
        "memory fact forgotten": walSyncedBefore(all, join(memoryDir, "memory.db-wal"), '"forgotten":{"facts":1}'),
        "knowledge written (PUT)": renameSyncedBefore(all, join(knowledgeDir, "ferns"), '"topic":"ferns"'),
        "knowledge created (knowledge_create)": renameSyncedBefore(
          all,
          join(knowledgeDir, "orchids"),
          "ack-knowledge-created",
        ),
      };
      console.log(`trace lines (index): ${JSON.stringify(orders, null, 1)}`);
    } finally {
      await teardown(
        async () => {
          // Already gone when the test got as far as reading the trace.
          try {
            tracer.kill("SIGTERM");
          } catch { /* exited */ }
          await tracerDone;
        },
        () => homed.stop(),
        () => fake.close(),
      );
    }
  },
});
