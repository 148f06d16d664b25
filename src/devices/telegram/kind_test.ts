/**
 * The Telegram kind's descriptor (rights, secrets, doctor) and the send path's last resort (plain text after Telegram
 * refused the formatting).
 */

import assert from "node:assert/strict";
import { FakeTelegram } from "../../../tests/support/fake_telegram.ts";
import { systemClock } from "../../clock.ts";
import { Pacer } from "../../chat_policy/pacer.ts";
import type { Config } from "../../config/schema.ts";
import { type BotApi, TelegramError } from "./bot_api.ts";
import { checkTelegram, telegramKind } from "./kind.ts";
import { PieceSender } from "./outgoing.ts";

type Section = NonNullable<Config["telegram"]>;

function section(fake: { token: string; apiUrl: string }, owner = "42"): Section {
  return {
    token: fake.token,
    api_url: fake.apiUrl,
    owner,
    allow_users: [],
    allow_groups: [],
    split_at: 4096,
    min_send_interval: 1_000,
    poll_timeout: 30_000,
    queue_limit: 100,
  };
}

Deno.test("rights and secrets: the API's host:port, and the token", () => {
  const telegram = section({
    token: "123456789:AAFakeTelegramTokenForHomedTests00",
    apiUrl: "https://api.telegram.org",
  });
  assert.deepEqual(telegramKind.rights!(telegram, {} as Config), { net: ["api.telegram.org:443"] });
  assert.deepEqual(telegramKind.secrets!(telegram), [telegram.token]);
});

Deno.test("doctor: the bot answers; an empty owner warns", async () => {
  await using fake = FakeTelegram.start();
  const [ok] = await checkTelegram(section(fake));
  assert.equal(ok!.ok, true);
  assert.match(ok!.detail, /telegram\.token has the right form and the bot @homed_test_bot answers/);
  const [warned] = await checkTelegram(section(fake, ""));
  assert.equal(warned!.warn, true);
  assert.match(warned!.detail, /telegram\.owner is empty/);
});

Deno.test("doctor: a revoked token and an unreachable api_url each name the setting, the value and what to do", async () => {
  await using fake = FakeTelegram.start();
  fake.revokeToken();
  const [revoked] = await checkTelegram(section(fake));
  assert.equal(revoked!.ok, false);
  assert.match(revoked!.detail, /Telegram refuses it \(401 Unauthorized\).*@BotFather.*telegram\.token/);
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const closed = `http://127.0.0.1:${(listener.addr as Deno.NetAddr).port}`;
  listener.close();
  const [unreachable] = await checkTelegram(section({ token: fake.token, apiUrl: closed }));
  assert.equal(unreachable!.ok, false);
  assert.ok(unreachable!.detail.includes(`telegram.api_url (${closed})`), unreachable!.detail);
  assert.ok(!unreachable!.detail.includes(fake.token), "the token is not in the line");
  const [malformed] = await checkTelegram({ ...section(fake), token: "not-a-token" });
  assert.match(malformed!.detail, /telegram\.token is not a bot token/);
});

Deno.test("a piece whose formatting Telegram refuses goes again as plain text, counted", async () => {
  const calls: Record<string, unknown>[] = [];
  const api = {
    call: (_method: string, params: Record<string, unknown>) => {
      calls.push(params);
      return calls.length === 1
        ? Promise.reject(new TelegramError("sendMessage", 400, "Bad Request: can't parse entities: whatever"))
        : Promise.resolve({ message_id: 9 });
    },
  } as unknown as BotApi;
  const counts = { sent: 0, failed: 0, rate_limited: 0, format_fallbacks: 0 };
  const fallbacks: string[] = [];
  const sender = new PieceSender({
    api,
    clock: systemClock,
    pacer: new Pacer(systemClock, 0),
    counts,
    signal: () => undefined,
    onFallback: (description) => fallbacks.push(description),
  });
  assert.equal(await sender.send("42", { kind: "text", text: "**hi**" }), "9");
  assert.deepEqual(calls.map((params) => [params.text, params.parse_mode ?? null]), [["<b>hi</b>", "HTML"], [
    "**hi**",
    null,
  ]]);
  assert.deepEqual(counts, { sent: 1, failed: 0, rate_limited: 0, format_fallbacks: 1 });
  assert.equal(fallbacks.length, 1);
});
