/**
 * WeChat's typing indicator while the butler thinks: `getconfig` gives a `typing_ticket` per user (kept), `sendtyping`
 * status 1 when a turn starts, 2 when it ends. Never with a context token: an integration that passed one saw it
 * consumed, and replies need every send it allows. Best effort: a failure is only logged (at debug), and every call
 * is tracked so a stop waits for them (no request outlives the device).
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import { RecentMap } from "../../chat_policy/recent.ts";
import type { IlinkClient } from "./ilink_client.ts";

/**
 * The typing indicator of one channel.
 *
 * @example
 * ```ts
 * import { systemClock } from "../../clock.ts";
 * import { log } from "../../log/logging.ts";
 * import { IlinkClient } from "./ilink_client.ts";
 *
 * const client = new IlinkClient({ baseUrl: "https://ilinkai.weixin.qq.com", token: () => "token", clock: systemClock });
 * const typing = new WeixinTyping(client, log("weixin"));
 * typing.turnStarted("event-1", "o9cq80abc@im.wechat");
 * typing.turnDone("event-1");
 * await typing.settled();
 * ```
 */
export class WeixinTyping {
  readonly #client: IlinkClient;
  readonly #log: Logger;
  readonly #tickets = new RecentMap<string, string>(500);
  /** The user of each input whose turn may be running. */
  readonly #users = new RecentMap<string, string>(1_000);
  readonly #calls = new Set<Promise<void>>();
  /** Per user, the calls in order: a cancel never overtakes its start. */
  readonly #chains = new Map<string, Promise<void>>();

  constructor(client: IlinkClient, logger: Logger) {
    this.#client = client;
    this.#log = logger;
  }

  /** An input of `user` was handed in as `eventId`: show typing. */
  turnStarted(eventId: string, user: string, signal?: AbortSignal): void {
    this.#users.set(eventId, user);
    this.#queue(user, 1, signal);
  }

  /** The turn of `eventId` ended: stop typing. */
  turnDone(eventId: string, signal?: AbortSignal): void {
    const user = this.#users.get(eventId);
    if (user !== undefined) this.#queue(user, 2, signal);
  }

  /** Resolves once no call is in flight. */
  async settled(): Promise<void> {
    while (this.#calls.size) await Promise.all([...this.#calls]);
  }

  #queue(user: string, status: 1 | 2, signal: AbortSignal | undefined): void {
    if (signal?.aborted) return;
    const previous = this.#chains.get(user) ?? Promise.resolve();
    const call = previous.then(() => this.#send(user, status, signal));
    this.#chains.set(user, call);
    this.#calls.add(call);
    void call.finally(() => {
      this.#calls.delete(call);
      if (this.#chains.get(user) === call) this.#chains.delete(user);
    });
  }

  async #send(user: string, status: 1 | 2, signal: AbortSignal | undefined): Promise<void> {
    if (signal?.aborted) return;
    try {
      let ticket = this.#tickets.get(user);
      if (!ticket) {
        ticket = await this.#client.getTypingTicket(user, signal);
        this.#tickets.set(user, ticket);
      }
      await this.#client.sendTyping(user, ticket, status, signal);
    } catch (error) {
      // A ticket may have gone stale: the next turn asks for a new one.
      this.#tickets.set(user, "");
      this.#log.debug("WeChat typing ({status}) for {user} failed: {error}", {
        status,
        user,
        error: (error as Error)?.message ?? String(error),
      });
    }
  }
}
