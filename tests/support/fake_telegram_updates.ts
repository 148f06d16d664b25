/**
 * The update queue of {@link ./fake_telegram.ts}: `getUpdates` long polling with Telegram's offset semantics (an
 * update is confirmed, and never handed out again, once getUpdates is called with a higher offset; unconfirmed
 * updates are handed out again), `limit`, `timeout`, `allowed_updates`, the 409 Conflict of two polls at once, and a
 * count of deliveries per update_id.
 *
 * @module
 */

import { ApiError, CONFLICT, jsonField } from "./fake_telegram_rules.ts";
import type { FakeCallback } from "./fake_telegram_types.ts";
import { errorResponse, intParam, okResponse } from "./fake_telegram_wire.ts";

interface Update {
  update_id: number;
  type: "message" | "callback_query";
  payload: Record<string, unknown>;
  callback?: FakeCallback;
}

interface Poll {
  limit: number;
  finish: (response: Response) => void;
}

/**
 * The bot's pending updates and the one held poll.
 *
 * @example
 * ```ts
 * import { UpdateQueue } from "./fake_telegram_updates.ts";
 *
 * const queue = new UpdateQueue(1000, []);
 * queue.add("message", { message_id: 1, text: "hi" }, false);
 * const response = await queue.getUpdates({ offset: 0 }, new Request("http://x/"));
 * ```
 */
export class UpdateQueue {
  #queue: Update[] = [];
  #nextId: number;
  #deliveries = new Map<number, number>();
  /** The bot's `allowed_updates`; null: Telegram's default (every type but chat_member and reactions). */
  #allowed: Set<string> | null = null;
  #poll: Poll | undefined;
  #violations: string[];

  /** Update ids start at `firstUpdateId`; protocol breaches are pushed onto `violations`. */
  constructor(firstUpdateId: number, violations: string[]) {
    this.#nextId = firstUpdateId;
    this.#violations = violations;
  }

  /** Updates queued and not confirmed. */
  get length(): number {
    return this.#queue.length;
  }

  /** How many responses carried this update. */
  deliveries(updateId: number): number {
    return this.#deliveries.get(updateId) ?? 0;
  }

  /**
   * Makes an update; queues it unless `hidden` (privacy mode) or outside `allowed_updates` — which Telegram applies
   * when an update is made, not to updates already queued — and hands it to a held poll at once.
   */
  add(type: Update["type"], payload: Record<string, unknown>, hidden: boolean, callback?: FakeCallback) {
    const update_id = this.#nextId++;
    const queued = !hidden && (this.#allowed === null || this.#allowed.has(type));
    if (queued) {
      this.#queue.push({ update_id, type, payload, ...(callback ? { callback } : {}) });
      const poll = this.#poll;
      if (poll) {
        this.#poll = undefined;
        poll.finish(this.#deliver(poll.limit));
      }
    }
    return { update_id, queued };
  }

  /** Forgets every pending update (`deleteWebhook` with `drop_pending_updates`). */
  drop(): void {
    this.#queue = [];
  }

  /** Answers a getUpdates request: at once when updates are pending or timeout is 0, else when one comes or time is up. */
  getUpdates(params: Record<string, unknown>, request: Request): Response | Promise<Response> {
    if (this.#poll) {
      this.#violations.push("getUpdates: a second getUpdates came while one was held; the older was answered 409");
      this.endPoll(errorResponse(409, CONFLICT));
    }
    const offset = intParam(params, "offset") ?? 0;
    // Out-of-range limit and timeout are clamped, not refused, as the Bot API server does.
    const limit = Math.min(100, Math.max(1, intParam(params, "limit") ?? 100));
    const timeout = Math.min(50, Math.max(0, intParam(params, "timeout") ?? 0));
    const allowed = jsonField(params, "allowed_updates", "allowed_updates");
    if (allowed !== undefined && !Array.isArray(allowed)) {
      throw new ApiError(400, "Bad Request: allowed_updates must be an Array");
    }
    if (allowed) this.#allowed = allowed.length ? new Set(allowed.map(String)) : null;
    if (offset > 0) {
      const unseen = this.#queue.filter((u) => u.update_id < offset && !this.#deliveries.has(u.update_id));
      if (unseen.length) {
        this.#violations.push(
          `getUpdates: offset ${offset} confirmed update(s) ${unseen.map((u) => u.update_id).join(", ")} ` +
            "that were never delivered (they are lost)",
        );
      }
      this.#queue = this.#queue.filter((u) => u.update_id >= offset);
    } else if (offset < 0) {
      // A negative offset keeps only the last -offset updates; the rest are forgotten.
      this.#queue = this.#queue.slice(offset);
    }
    if (this.#queue.length || timeout === 0) return this.#deliver(limit);
    // request.signal is the only word that a client gave up on a held poll (Deno warns once, on first use, that it
    // also aborts after a successful answer: finish() lets go of it before answering).
    const signal = request.signal;
    return new Promise<Response>((resolve) => {
      const finish = (response: Response) => {
        clearTimeout(timer);
        signal.removeEventListener("abort", abandoned);
        resolve(response);
      };
      const poll: Poll = { limit, finish };
      // A client that gives up (stops, restarts) is no longer polling: its successor is no conflict.
      const abandoned = () => {
        if (this.#poll === poll) this.#poll = undefined;
        finish(new Response(null, { status: 499 }));
      };
      const timer = setTimeout(() => {
        if (this.#poll === poll) this.#poll = undefined;
        finish(this.#deliver(limit));
      }, timeout * 1000);
      signal.addEventListener("abort", abandoned);
      this.#poll = poll;
    });
  }

  /** Answers the held poll, if any, with `response`. */
  endPoll(response: Response): void {
    const poll = this.#poll;
    this.#poll = undefined;
    poll?.finish(response);
  }

  #deliver(limit: number): Response {
    const batch = this.#queue.slice(0, limit);
    for (const update of batch) {
      this.#deliveries.set(update.update_id, this.deliveries(update.update_id) + 1);
      if (update.callback) update.callback.deliveredAt ??= performance.now();
    }
    return okResponse(batch.map((u) => ({ update_id: u.update_id, [u.type]: u.payload })));
  }
}
