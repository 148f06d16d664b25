import assert from "node:assert/strict";
import { getLogger } from "@logtape/logtape";
import type { ChainEvent } from "../provider/provider_chain.ts";
import { DamagedFiles } from "../fs/set_aside.ts";
import type { LowDisk } from "../service/disk_watch.ts";
import {
  lowDiskText,
  noticeText,
  setAsideText,
  tellOwnerOfLowDisk,
  tellOwnerOfModel,
  tellOwnerOfSetAside,
} from "./model_notices.ts";

Deno.test("the owner hears of lost, back and a budget reached — in the persona's languages; provider changes only the log", () => {
  let emit: (event: ChainEvent) => void = () => {};
  const sent: Array<[string, string]> = [];
  const stop = tellOwnerOfModel({
    llm: {
      onChange: (listener) => {
        emit = listener;
        return () => (emit = () => {});
      },
    },
    send: (channel, text) => {
      sent.push([channel, text]);
      return Promise.resolve();
    },
    ownerChannel: "qq:private:10001",
    persona: () => "你是管家阿福。You are Alfred, the butler of this household.",
    logger: getLogger(["test"]),
  });
  emit({ type: "provider_down", provider: "deepseek@api.deepseek.com", error: "HTTP 503" });
  emit({ type: "lost" });
  emit({ type: "back", provider: "spare" });
  emit({
    type: "budget_reached",
    provider: "deepseek@api.deepseek.com",
    period: "daily",
    spent: 2.5,
    limit: 2,
    currency: "CNY",
  });
  stop();
  emit({ type: "lost" });
  assert.deepEqual(sent.map(([channel]) => channel), ["qq:private:10001", "qq:private:10001", "qq:private:10001"]);
  assert.match(sent[0]![1], /^语言模型现在都连不上了。.*\nNo language model is answering now\./s);
  assert.match(sent[1]![1], /语言模型恢复了（spare）。/);
  assert.match(sent[2]![1], /今天的模型预算已用完（2\.50 \/ 2\.00 CNY）/);
  assert.match(sent[2]![1], /The daily model budget is used up \(2\.50 \/ 2\.00 CNY\)/);
});

Deno.test("notice texts: one language for a persona in one, tokens as tokens, nothing for provider changes", () => {
  assert.equal(
    noticeText(
      { type: "budget_reached", provider: "p", period: "monthly", spent: 120, limit: 100, currency: "tokens" },
      [
        "en",
      ],
    ),
    "The monthly model budget is used up (120 / 100 tokens): p is not called again until the period turns; " +
      "fallbacks and local commands answer meanwhile.",
  );
  assert.equal(noticeText({ type: "provider_up", provider: "p" }, ["zh", "en"]), undefined);
});

const BILINGUAL = "你是管家阿福。You are Alfred, the butler of this household.";
const MB = 1024 ** 2;

Deno.test("a nearly full disk: the owner is told on their channel, in both languages, with what to do", () => {
  let emit: (low: LowDisk) => void = () => {};
  const sent: Array<[string, string]> = [];
  const stop = tellOwnerOfLowDisk({
    disk: {
      onLow: (listener) => {
        emit = listener;
        return () => (emit = () => {});
      },
    },
    send: (channel, text) => {
      sent.push([channel, text]);
      return Promise.resolve();
    },
    ownerChannel: "qq:private:10001",
    persona: () => BILINGUAL,
    logger: getLogger(["test"]),
  });
  emit({ dir: "/var/lib/homed", free_bytes: 200 * MB, total_bytes: 32 * 1024 * MB, low_below: 500 * MB });
  stop();
  emit({ dir: "/var/lib/homed", free_bytes: 100 * MB, total_bytes: 32 * 1024 * MB, low_below: 500 * MB });
  assert.equal(sent.length, 1);
  assert.equal(sent[0]![0], "qq:private:10001");
  assert.match(
    sent[0]![1],
    /^homed 存数据的磁盘（\/var\/lib\/homed）快满了：只剩 200 MB，共 32 GB（低于 500 MB 就提醒）。/,
  );
  assert.match(
    sent[0]![1],
    /\nThe disk homed keeps its data on \(\/var\/lib\/homed\) is nearly full: 200 MB free of 32 GB/,
  );
  assert.doesNotMatch(
    lowDiskText({ dir: "/d", free_bytes: 1, total_bytes: 2, low_below: 3 }, ["en"]),
    /[\u4e00-\u9fff]/,
  );
});

Deno.test("a file set aside: in Chinese, what homed started with is the store's Chinese", () => {
  const entry = {
    file: "/var/lib/homed/usage.db",
    moved_to: "/var/lib/homed/usage.db.damaged-2026-12-04T02:00:00.000Z",
    why: "file is not a database",
    kept: "a new, empty usage.db: spending is counted again from now (llm.budget too)",
    kept_zh: "一个新的空 usage.db：花费从现在起重新计算（llm.budget 也是）",
    at: "2026-12-04T02:00:00.000Z",
  };
  const [zh, en] = setAsideText(entry, ["zh", "en"]).split("\n") as [string, string];
  assert.match(zh, /现在用的是：一个新的空 usage\.db：花费从现在起重新计算/);
  assert.doesNotMatch(zh, /spending/);
  assert.match(en, /it started with a new, empty usage\.db: spending is counted again/);
  assert.doesNotMatch(en, /[\u4e00-\u9fff]/);
});

Deno.test("the set-aside notice reaches the owner once per file, the Chinese part in Chinese", async () => {
  const dir = await Deno.makeTempDir({ dir: "/tmp" });
  try {
    const damaged = new DamagedFiles(() => Date.parse("2026-12-04T02:00:00Z"));
    await Deno.writeTextFile(`${dir}/routes.json`, "{");
    damaged.setAside(`${dir}/routes.json`, "it cannot be read as routes", {
      kept: { en: "the config's routes", zh: "配置文件里的路由" },
    });
    const sent: string[] = [];
    const stop = tellOwnerOfSetAside({
      damaged,
      send: (_channel, text) => {
        sent.push(text);
        return Promise.resolve();
      },
      ownerChannel: "qq:private:10001",
      persona: () => BILINGUAL,
      logger: getLogger(["test"]),
    });
    stop();
    assert.equal(sent.length, 1);
    assert.match(sent[0]!, /现在用的是：配置文件里的路由。/);
    assert.match(sent[0]!, /it started with the config's routes\./);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
