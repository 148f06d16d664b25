import assert from "node:assert/strict";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { FakeClock } from "../../tests/support/fake_clock.ts";
import type { Provider } from "./provider.ts";
import { emptyUsageTotals } from "./provider.ts";
import { metered } from "./metered_provider.ts";
import { costOf, FLUSH_EVERY_MS, USAGE_SCHEMA_VERSION, UsageLedger } from "./usage_ledger.ts";

const PRICES = { input: 2, input_cache_hit: 0.5, output: 8, currency: "CNY" };
const usage = {
  promptTokens: 1000,
  completionTokens: 200,
  totalTokens: 1200,
  cacheHitTokens: 600,
  cacheMissTokens: 400,
};

Deno.test("usage ledger: days in the configured time zone, newest first, kept across a reopen, costed", async () => {
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-usage-" });
  try {
    // 2026-11-30 23:30 in UTC is already 2026-12-01 in Shanghai.
    const clock = new FakeClock(Date.UTC(2026, 10, 30, 23, 30));
    const path = join(dir, "usage.db");
    let ledger = UsageLedger.open({ path, clock, timezone: "Asia/Shanghai", prices: PRICES });
    ledger.record(usage);
    ledger.record(undefined);
    ledger.recordError();
    ledger.close();
    clock.advance(24 * 3600_000);
    ledger = UsageLedger.open({ path, clock, timezone: "Asia/Shanghai", prices: PRICES });
    ledger.record(usage);
    const days = ledger.days();
    ledger.close();
    assert.deepEqual(days.map((day) => day.day), ["2026-12-02", "2026-12-01"]);
    const first = days[1]!;
    assert.equal(first.requests, 3);
    assert.equal(first.errors, 1);
    assert.equal(first.prompt_tokens, 1000);
    assert.equal(first.cache_hit_share, 0.6);
    assert.equal(first.cost, (400 * 2 + 600 * 0.5 + 200 * 8) / 1e6);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("cost: without a cache split every prompt token is a miss; no prices, no cost", () => {
  assert.equal(
    costOf({ promptTokens: 1_000_000, completionTokens: 0, cacheHitTokens: 0, cacheMissTokens: 0 }, PRICES),
    2,
  );
  const ledger = UsageLedger.open({ path: ":memory:", clock: new FakeClock(), timezone: "" });
  ledger.record(usage);
  assert.equal(ledger.days()[0]!.cost, null);
  ledger.close();
});

Deno.test("metered provider: answers and failures counted; a ledger that cannot write never fails the request", async () => {
  const clock = new FakeClock();
  let fail = false;
  const inner: Provider = {
    model: "m",
    chat: () =>
      fail
        ? Promise.reject(new Error("down"))
        : Promise.resolve({ content: "hi", toolCalls: [], finishReason: "stop", usage }),
    usage: emptyUsageTotals,
  };
  const ledger = UsageLedger.open({ path: ":memory:", clock, timezone: "UTC" });
  const problems: unknown[] = [];
  const counted = metered(inner, ledger, (error) => problems.push(error));
  assert.equal((await counted.chat({ messages: [] })).content, "hi");
  fail = true;
  await assert.rejects(counted.chat({ messages: [] }), /down/);
  assert.deepEqual([ledger.days()[0]!.requests, ledger.days()[0]!.errors], [2, 1]);
  ledger.close();
  fail = false;
  clock.advance(FLUSH_EVERY_MS); // the next count is due to be written: into a closed database
  assert.equal((await counted.chat({ messages: [] })).content, "hi", "a closed ledger does not fail the request");
  assert.equal(problems.length, 1);
  assert.equal(counted.model, "m");
});

Deno.test("usage ledger: counts wait in memory, written together every 10 s and at close", async () => {
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-usage-" });
  try {
    const clock = new FakeClock();
    const path = join(dir, "usage.db");
    const ledger = UsageLedger.open({ path, clock, timezone: "UTC" });
    const reader = () => {
      const other = UsageLedger.open({ path, clock, timezone: "UTC" });
      const requests = other.days()[0]?.requests ?? 0;
      other.close();
      return requests;
    };
    ledger.record(usage);
    ledger.record(usage);
    assert.equal(reader(), 0, "not written yet");
    clock.advance(FLUSH_EVERY_MS);
    ledger.record(usage);
    assert.equal(reader(), 3, "the third count wrote all three");
    ledger.recordError();
    ledger.close();
    assert.equal(reader(), 4, "close writes the rest");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("usage ledger: counted per provider, each at its own prices; a first-schema usage.db becomes the primary's", async () => {
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-usage-" });
  try {
    const path = join(dir, "usage.db");
    // usage.db as the first ledger wrote it: one row per day.
    const old = new DatabaseSync(path);
    old.exec(`CREATE TABLE usage_days (
      day TEXT PRIMARY KEY, requests INTEGER NOT NULL DEFAULT 0, errors INTEGER NOT NULL DEFAULT 0,
      prompt_tokens INTEGER NOT NULL DEFAULT 0, completion_tokens INTEGER NOT NULL DEFAULT 0,
      cache_hit_tokens INTEGER NOT NULL DEFAULT 0, cache_miss_tokens INTEGER NOT NULL DEFAULT 0)`);
    old.exec("INSERT INTO usage_days VALUES ('2026-11-30', 4, 1, 1000, 200, 600, 400)");
    old.close();
    const clock = new FakeClock(Date.UTC(2026, 10, 30, 9));
    const local = { input: 0, input_cache_hit: 0, output: 1, currency: "CNY" };
    const open = () =>
      UsageLedger.open({
        path,
        clock,
        timezone: "UTC",
        prices: PRICES,
        provider: "deepseek@api",
        providerPrices: { "llama@lan": local },
      });
    let ledger = open();
    ledger.record(usage, "llama@lan");
    ledger.record(usage, "free@lan");
    ledger.recordError("llama@lan");
    assert.deepEqual(ledger.spent("deepseek@api", "day"), {
      promptTokens: 1000,
      completionTokens: 200,
      cacheHitTokens: 600,
      cacheMissTokens: 400,
    }, "the old rows are the primary's");
    assert.equal(ledger.spent("llama@lan", "month").completionTokens, 200, "counts not yet written count too");
    ledger.close();
    ledger = open();
    const [day] = ledger.days();
    ledger.close();
    assert.equal(day!.requests, 4 + 3);
    assert.equal(day!.errors, 2);
    assert.deepEqual(day!.providers.map((p) => [p.name, p.requests, p.cost]), [
      ["deepseek@api", 4, (400 * 2 + 600 * 0.5 + 200 * 8) / 1e6],
      ["llama@lan", 2, 200 / 1e6],
      ["free@lan", 1, 0],
    ]);
    assert.equal(day!.cost, (400 * 2 + 600 * 0.5 + 200 * 8 + 200) / 1e6);
    const db = new DatabaseSync(path);
    const version = (db.prepare("PRAGMA user_version").get() as { user_version: number }).user_version;
    assert.equal(version, USAGE_SCHEMA_VERSION);
    assert.equal(db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'usage_days'").get(), undefined);
    db.exec("PRAGMA user_version = 9");
    db.close();
    assert.throws(
      open,
      /usage\.db was written by a newer homed \(usage schema 9; this one knows 1\); it was left untouched/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
