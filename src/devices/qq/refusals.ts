/**
 * The OneBot connections homed refused, for the owner who set up NapCat with a wrong token or path and sees nothing
 * happen: each refusal is counted by its reason and logged — at most one line per reason a minute, then one line with
 * how many more there were — and the last one of each reason is kept (when, from where, on which path, the bot's QQ
 * number) for `/api/status` (`services.io.devices.qq.refused`) and the console's dashboard. Never the token itself, nor
 * a query string that may hold one.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import type { Clock } from "../../clock.ts";
import { LogLimiter } from "../../log/rate_limit.ts";

/** Why a connection was refused. */
export type RefusalReason =
  | "missing_token"
  | "wrong_token"
  | "wrong_path"
  | "bad_self_id"
  | "bad_role"
  | "web_origin"
  | "not_websocket";

/** What is known of a refused handshake. */
export interface RefusalDetail {
  /** The peer's address, when the listener knows it. */
  peer?: string | undefined;
  /** The path it asked for (no query). */
  path?: string | undefined;
  /** Its `X-Self-ID`, when it sent one. */
  selfId?: string | undefined;
  /** What homed answered it, in words (the handshake's error message). */
  message: string;
}

/** The last refusal of one reason, as `/api/status` shows it. */
export interface RefusalView {
  reason: RefusalReason;
  /** ISO time. */
  at: string;
  from: string | null;
  path: string | null;
  self_id: string | null;
  message: string;
}

/** What {@link OneBotRefusals.status} gives. */
export interface RefusalsStatus {
  /** Refusals since start, all reasons. */
  total: number;
  /** Refusals since start, by reason (only the reasons that happened). */
  by_reason: Partial<Record<RefusalReason, number>>;
  /** The last refusal of each reason, newest first. */
  last: RefusalView[];
}

/** Options of {@link OneBotRefusals}. */
export interface RefusalsOptions {
  clock: Clock;
  logger: Logger;
  /** The window of the log's limit: one line per reason in it (default one minute). */
  windowMs?: number;
}

/** Text a peer chose, shown short, quoted and on one line. */
export function shownPeerText(text: string, max = 80): string {
  return JSON.stringify(text.length > max ? `${text.slice(0, max - 1)}…` : text);
}

/** Counts, logs and keeps the refused OneBot connections. */
export class OneBotRefusals {
  #options: RefusalsOptions;
  #limiter: LogLimiter;
  #counts = new Map<RefusalReason, number>();
  #last = new Map<RefusalReason, RefusalView>();

  /**
   * @example
   * ```ts
   * import { systemClock } from "../../clock.ts";
   * import { log } from "../../log/logging.ts";
   *
   * const refusals = new OneBotRefusals({ clock: systemClock, logger: log("qq") });
   * refusals.refuse("wrong_token", { peer: "192.168.1.20", path: "/onebot/v11/ws", message: "The OneBot access token is not onebot.access_token" });
   * refusals.status().by_reason; // { wrong_token: 1 }
   * refusals.flush();
   * ```
   */
  constructor(options: RefusalsOptions) {
    this.#options = options;
    this.#limiter = new LogLimiter({ clock: options.clock, lines: 1, windowMs: options.windowMs ?? 60_000 });
  }

  /** Records a refusal: counted, kept as its reason's last, logged unless its reason was logged within the window. */
  refuse(reason: RefusalReason, detail: RefusalDetail): void {
    const { clock, logger } = this.#options;
    this.#counts.set(reason, (this.#counts.get(reason) ?? 0) + 1);
    const view: RefusalView = {
      reason,
      at: new Date(clock.now()).toISOString(),
      from: detail.peer ?? null,
      path: detail.path ?? null,
      self_id: detail.selfId ?? null,
      message: detail.message,
    };
    this.#last.delete(reason);
    this.#last.set(reason, view);
    const summary = (count: number, seconds: number) =>
      logger.warning("Refused {count} more OneBot connections ({reason}) in the last {seconds} s", {
        count,
        reason,
        seconds,
      });
    if (!this.#limiter.allow(reason, summary)) return;
    logger.warning("Refused a OneBot connection ({reason}) from {peer} on {path}{bot}: {message}", {
      reason,
      peer: detail.peer ?? "an unknown address",
      path: detail.path === undefined ? "?" : shownPeerText(detail.path),
      bot: detail.selfId ? ` as QQ ${detail.selfId}` : "",
      message: detail.message,
    });
  }

  /** The counts and the last refusal of each reason. */
  status(): RefusalsStatus {
    let total = 0;
    const byReason: Partial<Record<RefusalReason, number>> = {};
    for (const [reason, count] of this.#counts) {
      byReason[reason] = count;
      total += count;
    }
    return { total, by_reason: byReason, last: [...this.#last.values()].reverse() };
  }

  /** Writes the pending summary lines now and cancels their timers (at stop). */
  flush(): void {
    this.#limiter.flush();
  }
}
