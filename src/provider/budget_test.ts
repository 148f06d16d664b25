import assert from "node:assert/strict";
import { join } from "node:path";
import { getLogger } from "@logtape/logtape";
import { FakeClock } from "../../tests/support/fake_clock.ts";
import { FakeLlm, type FakeStep } from "../../tests/support/fake_llm.ts";
import { rejection } from "../../tests/support/rejection.ts";
import { Budget, type BudgetLimits, describeReached, hasLimits } from "./budget.ts";
import { metered } from "./metered_provider.ts";
import { OpenAIProvider } from "./openai_provider.ts";
import type { ChatRequest } from "./provider.ts";
import { type ChainEvent, ProviderChain } from "./provider_chain.ts";
import { ProviderError } from "./provider_error.ts";
import { UsageLedger } from "./usage_ledger.ts";

const KEY = "sk-budget-test-0123456789";
const REQUEST: ChatRequest = {
  messages: [{ role: "system", content: "# persona" }, { role: "user", content: "hi" }],
};
const PRICES = { input: 2, input_cache_hit: 0.5, output: 8, currency: "CNY" };
const ZONE = "Asia/Shanghai";
/** One answer's usage: 400·2 + 600·0.5 + 200·8 = 2,700 per million, 0.0027 CNY; 1,200 tokens. */
const USAGE = {
  prompt_tokens: 1000,
  completion_tokens: 200,
  prompt_cache_hit_tokens: 600,
  prompt_cache_miss_tokens: 400,
};
const HOUR = 3_600_000;

function answer(reply: string): FakeStep {
  return { reply, usage: USAGE };
}

/** A primary and a fallback on fake servers, counted in one ledger, the primary under `limits`. */
class Household {
  readonly primary = FakeLlm.start({ apiKey: KEY });
  readonly fallback = FakeLlm.start({ apiKey: KEY });
  readonly events: ChainEvent[] = [];
  ledger!: UsageLedger;
  chain!: ProviderChain;

  constructor(readonly clock: FakeClock, readonly path: string, readonly limits: BudgetLimits, readonly alone = false) {
    this.open();
  }

  open(): void {
    const { clock } = this;
    this.ledger = UsageLedger.open({ path: this.path, clock, timezone: ZONE, prices: PRICES, provider: "p@fake" });
    const provider = (fake: FakeLlm) =>
      new OpenAIProvider({
        model: "m",
        baseUrl: fake.baseUrl,
        apiKey: KEY,
        temperature: 0,
        maxTokens: 50,
        thinking: false,
        timeoutMs: 5_000,
        maxRetries: 0,
        clock,
        random: () => 0.5,
        logger: getLogger(["test"]),
        missingKeyHint: "",
      });
    const noted = (error: unknown) => assert.fail(`the ledger failed: ${error}`);
    this.chain = new ProviderChain({
      members: [
        {
          name: "p@fake",
          role: "primary",
          provider: metered(provider(this.primary), this.ledger, noted, "p@fake"),
          timeoutMs: 5_000,
        },
        ...(this.alone ? [] : [{
          name: "f@fake",
          role: "fallback" as const,
          provider: metered(provider(this.fallback), this.ledger, noted, "f@fake"),
          timeoutMs: 5_000,
        }]),
      ],
      clock,
      logger: getLogger(["test"]),
      probeIntervalMs: 30_000,
      budget: new Budget({ limits: this.limits, ledger: this.ledger, provider: "p@fake", prices: PRICES }),
    });
    this.chain.onChange((event) => this.events.push(event));
  }

  reopen(): void {
    this.chain.close();
    this.ledger.close();
    this.open();
  }

  /**
   * Sends one chat, scripted on `who` only: the other one, asked instead, would answer 400 (its script is empty) and
   * report the request when closed.
   */
  async answeredBy(who: "primary" | "fallback"): Promise<void> {
    this[who].enqueue(answer(who));
    assert.equal((await this.chat()).content, who);
  }

  chat() {
    return this.chain.chat(REQUEST);
  }

  async close(): Promise<void> {
    this.chain.close();
    this.ledger.close();
    await this.primary.close();
    await this.fallback.close();
  }
}

async function withDir(body: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-budget-" });
  try {
    await body(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("daily budget below one call: the next call skips the primary, reported once; a new local day frees it; kept across a reopen", async () => {
  await withDir(async (dir) => {
    // 23:00 on 30 November in Shanghai.
    const clock = new FakeClock(Date.UTC(2026, 10, 30, 15));
    const house = new Household(clock, join(dir, "usage.db"), { daily: 0.001 });
    try {
      await house.answeredBy("primary");
      assert.deepEqual(house.events, [
        { type: "budget_reached", provider: "p@fake", period: "daily", spent: 0.0027, limit: 0.001, currency: "CNY" },
      ]);
      await house.answeredBy("fallback");
      await house.answeredBy("fallback");
      assert.equal(house.primary.requests.length, 1);
      assert.equal(house.events.length, 1, "budget_reached once");
      const status = house.chain.status();
      assert.equal(status.providers[0]!.state, "over_budget");
      assert.equal(status.providers[1]!.state, "up");
      assert.deepEqual(status.budget, { daily: { limit: 0.001, spent: 0.0027, left: 0, currency: "CNY" } });
      assert.ok(house.chain.available(), "the fallback answers");

      // A restart keeps the day's spend (usage.db), and does not report the cap again.
      house.reopen();
      assert.equal(house.chain.status().providers[0]!.state, "over_budget");
      await house.answeredBy("fallback");
      assert.equal(house.events.length, 1);
      assert.equal(house.ledger.days()[0]!.providers.find((p) => p.name === "f@fake")!.requests, 3);

      // Past midnight in Shanghai (16:00 UTC): a new day, the primary again.
      clock.advance(HOUR);
      assert.equal(house.chain.status().providers[0]!.state, "up");
      await house.answeredBy("primary");
      assert.deepEqual(house.events.map((event) => event.type), ["budget_reached", "budget_reached"]);
      assert.deepEqual(house.ledger.days().map((day) => day.day), ["2026-12-01", "2026-11-30"]);
    } finally {
      await house.close();
    }
  });
});

Deno.test("monthly budget: reached on the second call, it holds the next day and ends with the month", async () => {
  await withDir(async (dir) => {
    const clock = new FakeClock(Date.UTC(2026, 10, 29, 2)); // 10:00 on 29 November in Shanghai
    const house = new Household(clock, join(dir, "usage.db"), { monthly: 0.004 });
    try {
      await house.answeredBy("primary");
      assert.equal(house.events.length, 0, "0.0027 of 0.004");
      await house.answeredBy("primary");
      assert.deepEqual(house.events, [
        { type: "budget_reached", provider: "p@fake", period: "monthly", spent: 0.0054, limit: 0.004, currency: "CNY" },
      ]);
      clock.advance(24 * HOUR);
      await house.answeredBy("fallback"); // 30 November: the same month
      house.reopen();
      await house.answeredBy("fallback"); // after a restart too
      clock.advance(24 * HOUR); // 1 December
      await house.answeredBy("primary");
      assert.deepEqual(house.chain.status().budget, {
        monthly: { limit: 0.004, spent: 0.0027, left: 0.0013, currency: "CNY" },
      });
    } finally {
      await house.close();
    }
  });
});

Deno.test("token budget of a primary alone: unavailable while over it, lost and back at the turn of the day", async () => {
  await withDir(async (dir) => {
    const clock = new FakeClock(Date.UTC(2026, 10, 30, 15));
    const house = new Household(clock, join(dir, "usage.db"), { daily_tokens: 1_000 }, true);
    try {
      house.primary.enqueue(answer("primary"));
      assert.equal((await house.chat()).content, "primary");
      const over = await rejection(house.chat(), ProviderError);
      assert.equal(over.code, "unavailable");
      assert.equal(
        over.message,
        "No model is answering: p@fake: over its daily token budget (1200 of 1000 tokens used)",
      );
      assert.deepEqual(house.events, [
        { type: "budget_reached", provider: "p@fake", period: "daily", spent: 1200, limit: 1000, currency: "tokens" },
        { type: "lost" },
      ]);
      assert.equal(house.chain.available(), false);
      assert.equal(house.chain.reason(), over.message);
      // The chain looks every probe interval whether the day turned.
      clock.advance(HOUR);
      assert.deepEqual(house.events.at(-1), { type: "back", provider: "p@fake" });
      house.primary.enqueue(answer("primary"));
      assert.equal((await house.chat()).content, "primary");
    } finally {
      await house.close();
    }
  });
});

Deno.test("budget: caps named in words; none set is no budget", () => {
  assert.equal(hasLimits({}), false);
  assert.equal(hasLimits({ monthly_tokens: 1 }), true);
  assert.equal(
    describeReached({ kind: "daily", period: "daily", spent: 5.02, limit: 5, currency: "CNY" }),
    "over its daily budget (5.02 of 5 CNY spent)",
  );
});
