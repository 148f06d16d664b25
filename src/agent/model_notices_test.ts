import assert from "node:assert/strict";
import { getLogger } from "@logtape/logtape";
import type { ChainEvent } from "../provider/provider_chain.ts";
import { noticeText, tellOwnerOfModel } from "./model_notices.ts";

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
