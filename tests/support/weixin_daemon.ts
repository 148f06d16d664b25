/**
 * A real homed talking to the fake WeChat iLink API ({@link FakeWeixin}), for the WeChat end-to-end tests: the
 * `weixin:` section pointing at the fake, the channel's `/api/status` entry, the `context_token` each delivered message
 * carried (read from the fake's raw `getupdates` answer, to check a reply went with its message's token), and a
 * teardown that never lets the fakes' complaints hide the test's own failure.
 *
 * @module
 */

import { messageIdsOf } from "./fake_weixin.ts";
import type { FakeWeixin, WeixinSent, WeixinUserMessage } from "./fake_weixin.ts";
import type { FakeLlm } from "./fake_llm.ts";
import type { HomedProcess } from "./homed_process.ts";
import { teardown } from "./teardown.ts";
import { waitFor } from "./wait.ts";

/** The owner's WeChat id in these tests. */
export const WX_OWNER = "wxid_owner@im.wechat";
/** A household member's WeChat id (in `weixin.allow_users`). */
export const WX_MEMBER = "wxid_member@im.wechat";
/** A second listed member, who never writes. */
export const WX_QUIET = "wxid_quiet@im.wechat";
/** Someone nobody listed. */
export const WX_STRANGER = "wxid_stranger@im.wechat";

/**
 * The `weixin:` section for `fake`: its token (or none, for a token a login stored), its API and CDN bases, the owner
 * and the members, a 2 s long poll, then `extra`.
 *
 * @example
 * ```ts
 * import { FakeWeixin } from "./fake_weixin.ts";
 *
 * await using fake = FakeWeixin.start();
 * weixinSection(fake, { split_at: 500 }).owner; // "wxid_owner@im.wechat"
 * ```
 */
export function weixinSection(
  fake: FakeWeixin,
  extra: Record<string, unknown> = {},
  options: { token?: boolean } = {},
): Record<string, unknown> {
  return {
    ...(options.token === false ? {} : { token: fake.botToken }),
    base_url: fake.baseUrl,
    cdn_url: fake.cdnBaseUrl,
    owner: WX_OWNER,
    allow_users: [WX_MEMBER, WX_QUIET],
    poll_timeout: "2s",
    ...extra,
  };
}

/**
 * The whole `GET /api/status` body of a running homed.
 *
 * @example
 * ```ts
 * import type { HomedProcess } from "./homed_process.ts";
 *
 * declare const homed: HomedProcess;
 * (await homedStatus(homed)).services.io.devices.weixin.connected; // true
 * ```
 */
// deno-lint-ignore no-explicit-any
export async function homedStatus(homed: HomedProcess): Promise<any> {
  const response = await fetch(`${homed.url}/api/status`);
  return await response.json();
}

/**
 * The WeChat channel's entry in `/api/status` (`services.io.devices.weixin`).
 *
 * @example
 * ```ts
 * import type { HomedProcess } from "./homed_process.ts";
 *
 * declare const homed: HomedProcess;
 * (await weixinStatus(homed)).session_expired; // false
 * ```
 */
// deno-lint-ignore no-explicit-any
export async function weixinStatus(homed: HomedProcess): Promise<any> {
  return (await homedStatus(homed)).services.io.devices.weixin;
}

/**
 * Queues `messages` at the fake at once (one `getupdates` answer), waits until homed took them, and returns each
 * message's id and the `context_token` it carried, in order.
 *
 * @example
 * ```ts
 * import type { FakeWeixin } from "./fake_weixin.ts";
 *
 * declare const fake: FakeWeixin;
 * const [hello] = await deliver(fake, { from: WX_OWNER, text: "你好" });
 * hello!.token; // the context_token a reply to it must carry
 * ```
 */
export async function deliver(
  fake: FakeWeixin,
  ...messages: WeixinUserMessage[]
): Promise<Array<{ id: string; token: string }>> {
  const ids = messages.map((message) => fake.userSends(message));
  await waitFor(
    () => fake.pending === 0 && ids.every((id) => messageIdsOf(fake.lastUpdatesText).includes(id)),
    `homed to take message(s) ${ids.join(", ")} in one getupdates`,
  );
  const text = fake.lastUpdatesText;
  const delivered = messageIdsOf(text);
  const msgs = JSON.parse(text).msgs as Array<{ context_token?: string }>;
  return ids.map((id) => ({ id, token: msgs[delivered.indexOf(id)]!.context_token ?? "" }));
}

/**
 * The accepted sends to `user`.
 *
 * @example
 * ```ts
 * import type { FakeWeixin } from "./fake_weixin.ts";
 *
 * declare const fake: FakeWeixin;
 * sentTo(fake, WX_OWNER).map((sent) => sent.text);
 * ```
 */
export function sentTo(fake: FakeWeixin, user: string): WeixinSent[] {
  return fake.sent.filter((sent) => sent.to === user);
}

/**
 * Waits until `count` sends to `user` were accepted; returns them all.
 *
 * @example
 * ```ts
 * import type { FakeWeixin } from "./fake_weixin.ts";
 *
 * declare const fake: FakeWeixin;
 * const [reply] = await waitForSentTo(fake, WX_OWNER, 1);
 * ```
 */
export async function waitForSentTo(
  fake: FakeWeixin,
  user: string,
  count: number,
  limitMs = 10_000,
): Promise<WeixinSent[]> {
  await waitFor(
    () => sentTo(fake, user).length >= count,
    `${count} send(s) to ${user} (got ${sentTo(fake, user).length}: ${
      JSON.stringify(sentTo(fake, user).map((s) => s.text?.slice(0, 80)))
    }; refused: ${JSON.stringify(fake.refusals)})`,
    { limitMs },
  );
  return sentTo(fake, user);
}

/**
 * The last message of the `index`-th request the fake LLM received (the turn's tagged input).
 *
 * @example
 * ```ts
 * import type { FakeLlm } from "./fake_llm.ts";
 *
 * declare const llm: FakeLlm;
 * lastMessage(llm, 0); // '… [via weixin:private:wxid_owner@im.wechat, from …, trust owner] 你好'
 * ```
 */
export function lastMessage(llm: FakeLlm, index: number): string {
  const messages = llm.requests[index]!.body.messages as Array<{ content: string }>;
  return messages.at(-1)!.content;
}

/**
 * The tool results of the `index`-th LLM request, in order.
 *
 * @example
 * ```ts
 * import type { FakeLlm } from "./fake_llm.ts";
 *
 * declare const llm: FakeLlm;
 * toolResults(llm, 1)[0]; // what the first tool call of the turn answered
 * ```
 */
export function toolResults(llm: FakeLlm, index: number): string[] {
  const messages = llm.requests[index]!.body.messages as Array<{ role: string; content: string }>;
  return messages.filter((message) => message.role === "tool").map((message) => message.content);
}

/**
 * Runs `body`, then every teardown step ({@link teardown}); a failure of `body` is what the test reports first, with
 * the teardown's own failures beside it (a plain `finally` would let the fakes' complaints hide it).
 *
 * @example
 * ```ts
 * import type { HomedProcess } from "./homed_process.ts";
 * import type { FakeWeixin } from "./fake_weixin.ts";
 *
 * declare const homed: HomedProcess;
 * declare const fake: FakeWeixin;
 * await guarded(async () => {
 *   // … the test …
 * }, () => homed.stop(), () => fake.close());
 * ```
 */
export async function guarded(body: () => Promise<void>, ...steps: Array<() => unknown>): Promise<void> {
  let failure: { error: unknown } | undefined;
  try {
    await body();
  } catch (error) {
    failure = { error };
  }
  try {
    await teardown(...steps);
  } catch (error) {
    if (!failure) throw error;
    const first = failure.error instanceof Error ? failure.error.message : String(failure.error);
    throw new AggregateError([failure.error, error], `${first}\n(and the teardown failed too)`);
  }
  if (failure) throw failure.error;
}
