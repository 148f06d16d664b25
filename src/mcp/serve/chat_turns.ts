/**
 * The chat turns MCP callers started, kept a while so that a turn longer than a client's request timeout is not lost:
 * the `chat` tool answers within a bound with what is known, and a later call waits for the rest by the turn's id.
 * Bounded both ways — at most `maxTurns` are kept, and a turn is forgotten `keepMs` after it ended — and every wait
 * has a deadline. A turn is its caller's alone: another caller asking for its id is told no such turn is kept.
 *
 * @module
 */

import { type Clock, systemClock } from "../../clock.ts";

/** Turns kept at most (the MCP callers of one household; a turn's reply is a few kilobytes). */
export const CHAT_TURNS_MAX = 100;
/** How long an ended turn's reply is kept for a later call, in milliseconds (15 minutes). */
export const CHAT_TURN_KEEP_MS = 15 * 60_000;

/** Options of {@link ChatTurns}. */
export interface ChatTurnsOptions {
  /** Turns kept at most ({@link CHAT_TURNS_MAX}). */
  maxTurns?: number;
  /** How long an ended turn is kept, in milliseconds ({@link CHAT_TURN_KEEP_MS}). */
  keepMs?: number;
  /** Where the deadlines' timers and the turns' ages come from; the system clock by default. */
  clock?: Pick<Clock, "after" | "monotonic">;
}

/** A turn's work: it reports the reply's text as it comes (`onText`) and resolves to the whole reply. */
export type ChatRun = (onText: (delta: string) => void, signal: AbortSignal) => Promise<string>;

/** Where a turn is: ended with a reply, failed, or still working with the text streamed so far. */
export type TurnState =
  | { id: string; state: "done"; reply: string; elapsedMs: number }
  | { id: string; state: "failed"; error: string; elapsedMs: number }
  | { id: string; state: "working"; textSoFar: string; elapsedMs: number };

/** An id that names no kept turn of the caller's: never given, another caller's, forgotten, or pushed out. */
export class UnknownTurnError extends Error {
  override readonly name = "UnknownTurnError";
  /** `id` is the turn id asked for; `keepMs` how long ended turns are kept (said in the message). */
  constructor(readonly id: string, keepMs: number) {
    super(
      `No turn ${JSON.stringify(id)} of yours is kept: homed keeps a turn's reply ${
        Math.round(keepMs / 60_000)
      } minutes after it ends. Use the turn_id of an earlier chat answer, or send the message again as text.`,
    );
  }
}

interface Turn {
  id: string;
  caller: string;
  startedAt: number;
  /** When it is forgotten; unset while it runs (a running turn ends by its own deadline, the daemon's). */
  expiresAt: number | undefined;
  textSoFar: string;
  outcome: { reply: string } | { error: string } | undefined;
  endedAt: number | undefined;
  ended: Promise<void>;
  stop: AbortController;
}

/**
 * Recent chat turns by id, for the `chat` tool.
 *
 * @example
 * ```ts
 * const turns = new ChatTurns();
 * const id = turns.start("alice", async (onText) => {
 *   onText("Checking… ");
 *   return "Checking… the back door is locked.";
 * });
 * const state = await turns.wait("alice", id, 50_000);
 * if (state.state === "working") console.log(`still working; ask again for ${id}`);
 * ```
 */
export class ChatTurns {
  readonly #turns = new Map<string, Turn>();
  readonly #maxTurns: number;
  readonly #keepMs: number;
  readonly #clock: Pick<Clock, "after" | "monotonic">;

  /** An empty set of turns. */
  constructor(options: ChatTurnsOptions = {}) {
    this.#maxTurns = options.maxTurns ?? CHAT_TURNS_MAX;
    this.#keepMs = options.keepMs ?? CHAT_TURN_KEEP_MS;
    this.#clock = options.clock ?? systemClock;
  }

  /** How long an ended turn is kept, in milliseconds. */
  get keepMs(): number {
    return this.#keepMs;
  }

  /** Turns kept now. */
  get size(): number {
    this.#forgetExpired();
    return this.#turns.size;
  }

  /** Starts `run` as `caller`'s turn; its id (unguessable: it is all a caller needs to ask for the reply). */
  start(caller: string, run: ChatRun): string {
    this.#forgetExpired();
    while (this.#turns.size >= this.#maxTurns) this.#pushOut();
    const turn: Turn = {
      id: crypto.randomUUID(),
      caller,
      startedAt: this.#clock.monotonic(),
      expiresAt: undefined,
      textSoFar: "",
      outcome: undefined,
      endedAt: undefined,
      ended: Promise.resolve(),
      stop: new AbortController(),
    };
    let running: Promise<string>;
    try {
      running = run((delta) => (turn.textSoFar += delta), turn.stop.signal);
    } catch (error) {
      running = Promise.reject(error);
    }
    const end = (outcome: Turn["outcome"]) => {
      turn.outcome = outcome;
      turn.endedAt = this.#clock.monotonic();
      turn.expiresAt = turn.endedAt + this.#keepMs;
    };
    turn.ended = running.then(
      (reply) => end({ reply }),
      (error) => end({ error: error instanceof Error ? error.message : String(error) }),
    );
    this.#turns.set(turn.id, turn);
    return turn.id;
  }

  /**
   * Waits at most `withinMs` (less when `signal` aborts) for `caller`'s turn `id` to end; where it is then. Throws
   * {@link UnknownTurnError} when no such turn of the caller's is kept.
   */
  async wait(caller: string, id: string, withinMs: number, signal?: AbortSignal): Promise<TurnState> {
    this.#forgetExpired();
    const turn = this.#turns.get(id);
    if (!turn || turn.caller !== caller) throw new UnknownTurnError(id, this.#keepMs);
    if (!turn.outcome && withinMs > 0 && !signal?.aborted) {
      const gaveUp = Promise.withResolvers<void>();
      const giveUp = () => gaveUp.resolve();
      const cancel = this.#clock.after(withinMs, giveUp);
      signal?.addEventListener("abort", giveUp, { once: true });
      try {
        await Promise.race([turn.ended, gaveUp.promise]);
      } finally {
        cancel();
        signal?.removeEventListener("abort", giveUp);
      }
    }
    return this.#state(turn);
  }

  /** Stops every running turn's run and forgets all turns (the server is going away: nobody is left to ask). */
  close(): void {
    for (const turn of this.#turns.values()) if (!turn.outcome) turn.stop.abort();
    this.#turns.clear();
  }

  #state(turn: Turn): TurnState {
    const elapsedMs = (turn.endedAt ?? this.#clock.monotonic()) - turn.startedAt;
    const outcome = turn.outcome;
    if (!outcome) return { id: turn.id, state: "working", textSoFar: turn.textSoFar, elapsedMs };
    return "reply" in outcome
      ? { id: turn.id, state: "done", reply: outcome.reply, elapsedMs }
      : { id: turn.id, state: "failed", error: outcome.error, elapsedMs };
  }

  #forgetExpired(): void {
    const now = this.#clock.monotonic();
    for (const [id, turn] of this.#turns) {
      if (turn.expiresAt !== undefined && turn.expiresAt <= now) this.#turns.delete(id);
    }
  }

  /** Makes room: the oldest ended turn goes; when none has ended, the oldest running one, its run told to stop. */
  #pushOut(): void {
    const ended = this.#turns.values().find((turn) => turn.outcome !== undefined);
    const oldest = ended ?? this.#turns.values().next().value;
    if (!oldest) return;
    if (!oldest.outcome) oldest.stop.abort();
    this.#turns.delete(oldest.id);
  }
}
