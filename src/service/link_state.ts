/**
 * What a connection that redials says about itself: where it is, when it last came up, how often it came up again,
 * why it last failed, and, while it waits, when it tries next. Home Assistant, the MQTT broker and each MCP server
 * kept these five fields and their getters each in its own words; now they extend {@link LinkState}, so the devices'
 * `status()` read the same fields kept the same way, and a connection's file says only what is its own: its states,
 * its sessions, its log lines. The loop that redials stays with `backoff.ts` (`dial`, `Backoff`): this holds only
 * what the loop reports.
 *
 * @module
 */

/**
 * A link's bookkeeping, for a connection class to extend: read-only getters for everyone, and the transitions
 * (`moveTo`, `linkUp`, `linkDown`, `linkFailed`, `waitToRetry`) for the connection alone. `S`: the connection's own
 * states.
 *
 * @example
 * ```ts
 * import { systemClock } from "../clock.ts";
 *
 * class Link extends LinkState<"connecting" | "connected" | "waiting" | "stopped"> {
 *   constructor() {
 *     super("connecting");
 *   }
 *
 *   async run(signal: AbortSignal): Promise<void> {
 *     while (!signal.aborted) {
 *       this.moveTo("connecting");
 *       if (this.linkUp("connected", systemClock.now())) console.log("connected again");
 *       this.linkDown();
 *       this.linkFailed("the peer closed the connection");
 *       this.moveTo("waiting");
 *       if (!(await this.waitToRetry(systemClock.now() + 1_000, () => systemClock.sleep(1_000, signal)))) break;
 *     }
 *     this.moveTo("stopped");
 *   }
 * }
 *
 * const link = new Link();
 * link.state; // "connecting"
 * link.reconnects; // 0
 * ```
 */
export abstract class LinkState<S extends string> {
  #state: S;
  #connectedAt: number | null = null;
  #reconnects = 0;
  #everUp = false;
  #lastError: string | null = null;
  #nextRetryAt: number | null = null;

  /** `initial`: the state before the first attempt. */
  constructor(initial: S) {
    this.#state = initial;
  }

  /** Where the connection is now. */
  get state(): S {
    return this.#state;
  }

  /**
   * When the connection last came up (clock ms since the epoch), or null: none yet, or none now where the
   * connection clears it on a loss.
   */
  get connectedAt(): number | null {
    return this.#connectedAt;
  }

  /** Times the connection came up again after the first time. */
  get reconnects(): number {
    return this.#reconnects;
  }

  /** Why the connection last failed or ended (or what else it counts as a failure), or null. */
  get lastError(): string | null {
    return this.#lastError;
  }

  /** While waiting to try again: when the next attempt is due (clock ms since the epoch), else null. */
  get nextRetryAt(): number | null {
    return this.#nextRetryAt;
  }

  /** Whether the connection ever came up. */
  protected get everUp(): boolean {
    return this.#everUp;
  }

  /** Moves to `state`, nothing else. */
  protected moveTo(state: S): void {
    this.#state = state;
  }

  /** The connection came up at `now` (clock ms since the epoch), in `state`; true when it came up again. */
  protected linkUp(state: S, now: number): boolean {
    const again = this.#everUp;
    if (again) this.#reconnects++;
    this.#everUp = true;
    this.#state = state;
    this.#connectedAt = now;
    return again;
  }

  /** The connection is down: {@link LinkState.connectedAt} is null until it is up again. */
  protected linkDown(): void {
    this.#connectedAt = null;
  }

  /** Says why the connection failed, for {@link LinkState.lastError}. */
  protected linkFailed(error: string): void {
    this.#lastError = error;
  }

  /**
   * Waits for the next attempt, due at `at` (clock ms since the epoch), with {@link LinkState.nextRetryAt} set
   * meanwhile; `sleep` starts the wait. False when the wait rejected (the connection was stopped), else true.
   */
  protected async waitToRetry(at: number, sleep: () => Promise<void>): Promise<boolean> {
    this.#nextRetryAt = at;
    try {
      await sleep();
      return true;
    } catch {
      return false;
    } finally {
      this.#nextRetryAt = null;
    }
  }
}
