/**
 * Issue 35's spending cap, through a whole daemon in this process (its clock is the fake one, so a day can pass): a
 * daily budget below one turn's cost — the next messages are the fallback's, not one more request reaches the primary
 * that day, the owner is told once on their QQ with the figure; the next day the primary answers again.
 */

import assert from "node:assert/strict";
import { FakeClock } from "./support/fake_clock.ts";
import { FakeLlm } from "./support/fake_llm.ts";
import { postJson } from "./support/homed_process.ts";
import type { OneBotSim } from "./support/onebot_sim.ts";
import { connectOwner, KEY, sentToOwner, startOwnerDaemon } from "./support/owner_daemon.ts";
import { teardown } from "./support/teardown.ts";
import { waitFor } from "./support/wait.ts";

// 2026-12-04 10:00 in Shanghai.
const START = Date.UTC(2026, 11, 4, 2, 0);

Deno.test("a daily budget below one turn's cost: the fallback answers, the primary rests until tomorrow, the owner hears once", async () => {
  const clock = new FakeClock({ start: START });
  const primary = FakeLlm.start();
  const fallback = FakeLlm.start();
  const dir = await Deno.makeTempDir();
  // The memory's distiller (it asks the model too) runs once a week: not within the day this test moves through.
  const daemon = await startOwnerDaemon({
    dir,
    llm: primary,
    llmKeys: {
      // 2 CNY per million prompt tokens: the first turn's million tokens cost 2, over the day's 1.
      prices: { input: 2, input_cache_hit: 0.2, output: 8, currency: "CNY" },
      budget: { daily: 1 },
      probe_interval: "30s",
      fallbacks: [{ name: "spare", model: "spare-model", base_url: fallback.baseUrl, api_key: KEY }],
    },
  }, { clock });
  let sim: OneBotSim | undefined;
  try {
    sim = await connectOwner(daemon);
    const toOwner = () => sentToOwner(sim!);
    const chat = async (said: string) => (await postJson(`${daemon.url}/api/chat`, { text: said })).body;

    primary.enqueue({ reply: "From the primary.", usage: { prompt_tokens: 1_000_000, completion_tokens: 10 } });
    assert.equal((await chat("hello")).reply, "From the primary.");
    await waitFor(() => toOwner().some((text) => text.includes("2.00 / 1.00 CNY")), "the owner was told the figure");

    for (const said of ["and now?", "one more", "a third"]) {
      fallback.enqueue({ reply: `Fallback: ${said}` });
      assert.equal((await chat(said)).reply, `Fallback: ${said}`);
    }
    assert.equal(primary.requests.length, 1, "not one more request reached the primary that day");
    const status = await (await fetch(`${daemon.url}/api/status`)).json();
    assert.equal(status.llm.providers[0].state, "over_budget");
    assert.equal(status.llm.budget.daily.spent, 2.00008, "a million prompt tokens at 2, ten completion tokens at 8");
    assert.equal(status.llm.budget.daily.left, 0);

    // Past midnight in Shanghai: the budget's watch (every probe interval) sees the new day.
    clock.advance(14 * 3_600_000 + 60_000);
    await waitFor(
      async () => (await (await fetch(`${daemon.url}/api/status`)).json()).llm.providers[0].state === "up",
      "the primary is up again the next day",
    );
    primary.enqueue({ reply: "Good morning from the primary." });
    assert.equal((await chat("good morning")).reply, "Good morning from the primary.");
    assert.equal(primary.requests.length, 2);
    assert.equal(
      toOwner().filter((text) => text.includes("budget") || text.includes("预算")).length,
      1,
      `told once: ${toOwner().join("\n")}`,
    );
  } finally {
    await teardown(
      () => sim?.close(),
      () => daemon.stop(),
      () => primary.close(),
      () => fallback.close(),
      () => Deno.remove(dir, { recursive: true }),
    );
  }
});
