/**
 * Telegram's "typing…" while the butler thinks: sent when a message comes in and every 5 s while a turn for that chat
 * runs, at most 2 minutes. Best effort and never waited for — the poll loop goes on at once — except by {@link
 * TelegramTyping.stop}, which waits for the requests in flight after they were aborted.
 *
 * @module
 */

import type { Clock } from "../../clock.ts";

/** How often "typing…" is sent again (Telegram shows it about 5 s). */
const TYPING_EVERY_MS = 5_000;
/** A turn whose end never came stops counting after this. */
const TYPING_AT_MOST_MS = 120_000;

/** Options of {@link TelegramTyping}. */
export interface TelegramTypingOptions {
  clock: Clock;
  /** Sends `sendChatAction` typing to `chatId` (aborted when the device stops); its failure is ignored. */
  send(chatId: string, timeoutMs: number): Promise<unknown>;
}

/** The typing indicator of the chats whose turns run. */
export class TelegramTyping {
  #options: TelegramTypingOptions;
  /** Turns running, by input id. */
  #turns = new Map<string, { chatId: string; since: number }>();
  /** Each chat's next "typing…", cancelled when its last turn ends. */
  #next = new Map<string, () => void>();
  #inFlight = new Set<Promise<unknown>>();
  #stopped = false;

  /**
   * @example
   * ```ts
   * import { systemClock } from "../../clock.ts";
   *
   * const typing = new TelegramTyping({ clock: systemClock, send: () => Promise.resolve() });
   * typing.begin("in-1", "42"); // "typing…" in chat 42 until the turn of input in-1 ends
   * typing.end("in-1");
   * await typing.stop();
   * ```
   */
  constructor(options: TelegramTypingOptions) {
    this.#options = options;
  }

  /** A turn for `chatId` began (its input `inputId`): "typing…" now, and again while it runs. */
  begin(inputId: string, chatId: string): void {
    const now = this.#options.clock.monotonic();
    // A turn whose end never came (its input answered within another's) stops counting after the limit.
    for (const [id, turn] of this.#turns) if (now - turn.since > TYPING_AT_MOST_MS) this.#turns.delete(id);
    this.#turns.set(inputId, { chatId, since: now });
    if (!this.#next.has(chatId)) this.#tick(chatId, now);
  }

  /** The turn of `inputId` ended: its chat's "typing…" stops when no other turn for it runs. */
  end(inputId: string): void {
    const turn = this.#turns.get(inputId);
    this.#turns.delete(inputId);
    if (turn && !this.#running(turn.chatId)) {
      this.#next.get(turn.chatId)?.();
      this.#next.delete(turn.chatId);
    }
  }

  #running(chatId: string): boolean {
    return [...this.#turns.values()].some((turn) => turn.chatId === chatId);
  }

  #tick(chatId: string, started: number): void {
    const { clock } = this.#options;
    this.#next.delete(chatId);
    if (this.#stopped || !this.#running(chatId) || clock.monotonic() - started > TYPING_AT_MOST_MS) return;
    this.#next.set(chatId, clock.after(TYPING_EVERY_MS, () => this.#tick(chatId, started)));
    const sent = this.#options.send(chatId, TYPING_EVERY_MS).catch(() => {}).finally(() => this.#inFlight.delete(sent));
    this.#inFlight.add(sent);
  }

  /** Cancels what is planned and waits for the requests in flight (the device aborted them). */
  async stop(): Promise<void> {
    this.#stopped = true;
    for (const cancel of this.#next.values()) cancel();
    this.#next.clear();
    this.#turns.clear();
    await Promise.all([...this.#inFlight]);
  }
}
