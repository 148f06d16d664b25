/**
 * End to end, the core under stress: a hung LLM, a shutdown with a full queue, a failing background job, and what
 * `/api/status` and the log tell the operator. Real homed processes, the fake LLM server on loopback.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { DEFAULT_CONTRACT, TEST_KEY } from "./support/contract.ts";
import { FakeLlm } from "./support/fake_llm.ts";
import { freePort, postJson, REPO, startHomed, workspace } from "./support/homed_process.ts";
import { teardown } from "./support/teardown.ts";
import { waitFor } from "./support/wait.ts";

/** A scripted answer that never comes until `release()`. */
function hangingStep() {
  let release!: () => void;
  const held = new Promise<void>((resolve) => release = resolve);
  return {
    step: {
      raw: async () => {
        await held;
        return Response.json({ error: { message: "released" } }, { status: 500 });
      },
    },
    release: () => release(),
  };
}

Deno.test("a never-answering LLM ends the turn at llm.turn_timeout with a clear 504, and the next message works", async () => {
  const fake = FakeLlm.start(DEFAULT_CONTRACT);
  const hang = hangingStep();
  fake.enqueue(hang.step, {
    reply: "Back again.",
    usage: { prompt_tokens: 50, completion_tokens: 4, prompt_cache_hit_tokens: 32, prompt_cache_miss_tokens: 18 },
  });
  const homed = await startHomed(
    await workspace({ llm: { base_url: fake.baseUrl, api_key: TEST_KEY, turn_timeout: "2s", max_retries: 1 } }),
  );
  try {
    const started = performance.now();
    const [stuck, next] = await Promise.all([
      postJson(`${homed.url}/api/chat`, { text: "Are you there?" }),
      (async () => {
        await fake.received(1);
        return await postJson(`${homed.url}/api/chat`, { text: "Hello again" });
      })(),
    ]);
    assert.equal(stuck.status, 504);
    assert.deepEqual(stuck.body.error, {
      code: "timeout",
      message:
        "The LLM did not finish this turn within 2s (llm.turn_timeout), so homed stopped waiting; the message was not answered — please try again",
    });
    assert.ok(performance.now() - started >= 1_900, "not before the deadline");
    assert.equal(next.status, 200, JSON.stringify(next.body));
    assert.equal(next.body.reply, "Back again.");
    const status = await (await fetch(`${homed.url}/api/status`)).json();
    assert.equal(status.agent.turn_timeouts, 1);
    assert.equal(status.llm.usage.prompt_cache_hit_tokens, 32);
    assert.equal(status.llm.usage.prompt_cache_miss_tokens, 18);
    assert.ok(Number.isInteger(status.uptime_ms) && Number.isInteger(status.agent.last_turn_ms));
    // homed's own memory figures: the child's pid (not the test's), a heap that is used and within what V8 holds.
    assert.equal(status.process.pid, homed.pid);
    assert.ok(status.process.heap_used_bytes > 0 && status.process.heap_used_bytes <= status.process.heap_total_bytes);
    assert.ok(status.process.rss_bytes > status.process.heap_total_bytes, JSON.stringify(status.process));
    // By space: the old space holds most; every space's use within its size, their sizes summing to the heap's.
    const spaces = Object.values(status.process.heap_spaces) as Array<{ size_bytes: number; used_bytes: number }>;
    assert.ok(status.process.heap_spaces.old_space.used_bytes > 0, JSON.stringify(status.process.heap_spaces));
    assert.ok(spaces.every((space) => space.used_bytes <= space.size_bytes));
    assert.equal(spaces.reduce((sum, space) => sum + space.size_bytes, 0), status.process.heap_total_bytes);
    for (const time of [status.started_at, status.agent.last_heartbeat, status.services.agent.started_at]) {
      assert.match(time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    }
    assert.deepEqual(Object.keys(status.services), [
      "knowledge",
      "memory",
      "media",
      "io",
      "plugins",
      "http",
      "agent",
      "backup",
      "disk",
    ]);
    assert.deepEqual(status.services.io.devices.http.outbox, { queued: 0, sent: 0, failed: 0, timed_out: 0 });
    assert.equal(status.services.knowledge.jobs["knowledge.reindex"].every_ms, 1_800_000);
  } finally {
    hang.release();
    await teardown(async () => assert.equal(await homed.stop(), 0, homed.stderr()), () => fake.close());
  }
});

Deno.test("SIGTERM with ten slow chats queued: queued ones get 503 at once, exit within grace + 2 s", async () => {
  const fake = FakeLlm.start(DEFAULT_CONTRACT);
  const hang = hangingStep();
  fake.enqueue(hang.step);
  const homed = await startHomed(
    await workspace({ llm: { base_url: fake.baseUrl, api_key: TEST_KEY }, daemon: { shutdown_grace: "1s" } }),
  );
  const chats = Array.from({ length: 10 }, (_, n) => postJson(`${homed.url}/api/chat`, { text: `slow ${n}` }));
  try {
    await fake.received(1);
    await waitFor(async () => (await (await fetch(`${homed.url}/api/status`)).json()).agent.queued === 9, "9 queued");
    const started = performance.now();
    const code = await homed.stop();
    const took = performance.now() - started;
    assert.equal(code, 0, homed.stderr());
    assert.ok(took < 3_000, `exit took ${Math.round(took)} ms; allowed: grace 1 s + 2 s`);
    const answers = await Promise.all(chats);
    assert.deepEqual(answers.map((a) => a.status), Array(10).fill(503));
    const messages = answers.map((a) => (a.body.error as { message: string }).message);
    assert.equal(messages.filter((m) => m === "homed is shutting down; the message was not answered").length, 9);
    assert.equal(messages.filter((m) => /turn in flight was stopped/.test(m)).length, 1);
    assert.equal(fake.requests.length, 1, "nothing queued reached the LLM after SIGTERM");
  } finally {
    hang.release();
    await fake.close();
  }
});

Deno.test("a failing background job is logged, counted and retried while homed keeps serving; a deleted index heals", async () => {
  const fake = FakeLlm.start(DEFAULT_CONTRACT);
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-e2e-jobs-" });
  const knowledge = join(dir, "knowledge");
  await Deno.mkdir(join(knowledge, "cooking"), { recursive: true });
  await Deno.copyFile(join(REPO, "knowledge", "cooking", "content.md"), join(knowledge, "cooking", "content.md"));
  const ws = await workspace({
    llm: { base_url: fake.baseUrl, api_key: TEST_KEY },
    daemon: { heartbeat_interval: "1s", data_dir: join(dir, "data") },
    paths: { knowledge },
  });
  const homed = await startHomed(ws);
  const heartbeat = async () =>
    (await (await fetch(`${homed.url}/api/status`)).json()).services.knowledge.jobs["knowledge.heartbeat"];
  try {
    await Deno.remove(join(dir, "data", "vector", "knowledge"), { recursive: true });
    await Deno.rename(knowledge, `${knowledge}.away`);
    await waitFor(async () => (await heartbeat()).failures >= 1, "the knowledge heartbeat to fail");
    const failed = await heartbeat();
    assert.match(failed.last_error, /No such file or directory/);
    assert.ok(failed.consecutive_failures >= 1);
    fake.enqueue({ reply: "Still here." });
    const chat = await postJson(`${homed.url}/api/chat`, { text: "Are you alive?" });
    assert.equal(chat.status, 200);
    assert.equal(chat.body.reply, "Still here.");
    await Deno.rename(`${knowledge}.away`, knowledge);
    await waitFor(async () => (await heartbeat()).consecutive_failures === 0, "the heartbeat to recover", {
      limitMs: 15_000,
    });
    await waitFor(() => {
      try {
        return [...Deno.readDirSync(join(dir, "data", "vector", "knowledge"))].some((e) => e.name.startsWith("snap-"));
      } catch {
        return false;
      }
    }, "the deleted index folder to be written anew");
    assert.match(homed.stderr(), /Job knowledge\.heartbeat failed \(1 in a row\)/);
    assert.match(homed.stderr(), /disappeared while homed ran; writing the store anew/);
  } finally {
    await teardown(
      async () => assert.equal(await homed.stop(), 0, homed.stderr()),
      () => fake.close(),
      () => Deno.remove(dir, { recursive: true }),
    );
  }
});

Deno.test("the log names the address homed really listens on", async () => {
  const port = freePort();
  const homed = await startHomed(
    await workspace({
      daemon: { listen_addr: `0.0.0.0:${port}`, api_token: "a-long-enough-api-token" },
      onebot: { enabled: false },
    }),
  );
  try {
    assert.match(
      homed.stderr(),
      new RegExp(
        `Listening on 0\\.0\\.0\\.0:${port}, every interface — from this machine http://127\\.0\\.0\\.1:${port} \\(`,
      ),
    );
  } finally {
    assert.equal(await homed.stop(), 0, homed.stderr());
  }
});
