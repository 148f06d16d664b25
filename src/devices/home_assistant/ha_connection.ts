/**
 * The Home Assistant WebSocket client (`<url>/api/websocket`): the auth phase with a long-lived token, then commands
 * with ids increasing per connection, each awaited under a deadline and matched to its `result` (or `pong`) frame;
 * HA's errors become a {@link HaCommandError} carrying HA's own code and message. Subscriptions (`subscribe_events`)
 * are remembered and sent again on every new connection, so a dropped socket or a restarting HA costs nothing but
 * the time to reconnect: 1 s doubling to 60 s with jitter, starting over once a connection stayed up 30 s. A token HA
 * refuses (`auth_invalid`) is not fixed by retrying, so it is tried again only after 5 minutes, doubling to an hour —
 * no retry storm against HA's login ban. An application-level `ping` every 30 s finds a connection that died
 * silently (HA frozen, a NAT that forgot it).
 *
 * Each attempt is one {@link HaSession} (`ha_session.ts`: the auth phase, ids, frames); this file is the loop around
 * it. The socket is homed's own `WsClient`, not Deno's `WebSocket`: HA's frames can be large (`get_states` of a big
 * install runs to megabytes) and the limit of `maxFrameBytes` is checked at each frame header, before any of the
 * payload is read or kept, where Deno's WebSocket hands over whole messages of up to 64 MiB. With
 * `coalesce_messages` asked for, HA may send several messages as one JSON array; both forms are read.
 *
 * Every frame received gets a sequence number (`seq`), handed with command results and events, so a caller can tell
 * whether an event came before or after a snapshot (see `ha_cache.ts`).
 *
 * The errors (`ha_errors.ts`) and the URL helpers (`ha_url.ts`) live apart and are exported from here too, so callers
 * import the client from one place.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import { type Clock, deadline, sleepWith } from "../../clock.ts";
import { Backoff, dial } from "../../service/backoff.ts";
import { LinkState } from "../../service/link_state.ts";
import { HaAuthError, HaCommandError } from "./ha_errors.ts";
import { type HaAnswer, type HaEventHandler, HaSession, type HaSubscription } from "./ha_session.ts";
import { shownUrl, websocketUrl } from "./ha_url.ts";

export { HaAuthError, HaCommandError } from "./ha_errors.ts";
export type { HaAnswer, HaEventHandler } from "./ha_session.ts";
export { shownUrl, websocketUrl } from "./ha_url.ts";

/** The reconnect backoff: the first wait, the longest, and how long a connection must stay up for it to start over. */
export const HA_BACKOFF = { initialMs: 1_000, maxMs: 60_000, stableMs: 30_000 } as const;
/** The wait after HA refused the token, and the longest: a wrong token does not fix itself, and HA bans by IP. */
export const HA_AUTH_BACKOFF = { initialMs: 300_000, maxMs: 3_600_000 } as const;
/** How long a command (and each step of the auth phase) may wait for its answer. */
export const HA_COMMAND_TIMEOUT_MS = 10_000;
/** How often an idle connection is pinged (`ping` → `pong`, under the command deadline). */
export const HA_PING_INTERVAL_MS = 30_000;
/** The largest frame taken from HA, in bytes (a frame over it closes the connection, 1009). */
export const HA_MAX_FRAME_BYTES = 32 * 1024 * 1024;
/** Longest {@link HaConnection.start} waits for the first attempt; the attempts go on after that. */
export const HA_START_WAIT_MS = 5_000;
/** Longest {@link HaConnection.stop} waits for the socket to close. */
const STOP_MS = 8_000;

/** What the connection is doing. */
export type HaConnectionState = "idle" | "connecting" | "connected" | "waiting" | "auth_failed" | "stopped";

/** Options of {@link HaConnection}. */
export interface HaConnectionOptions {
  /** HA's base URL (`http://homeassistant.local:8123`), or the WebSocket URL itself (`ws://…/api/websocket`). */
  url: string;
  /** A long-lived access token; sent in the auth frame only, never logged. */
  token: string;
  clock: Clock;
  logger: Logger;
  /** Jitter of the backoff (`Math.random` by default). */
  random?: () => number;
  /** Deadline of each command (and of each auth step), {@link HA_COMMAND_TIMEOUT_MS} by default. */
  commandTimeoutMs?: number;
  /** Ping interval, {@link HA_PING_INTERVAL_MS} by default; 0: no pings. */
  pingIntervalMs?: number;
  /** Largest frame taken, {@link HA_MAX_FRAME_BYTES} by default. */
  maxFrameBytes?: number;
  /**
   * Called on each new connection after the re-subscriptions (to load states, services, registries). A rejection
   * closes the connection, which is tried again with backoff.
   */
  onConnected?: () => Promise<void>;
}

/**
 * A connection to HA that reconnects by itself and keeps its subscriptions. Its state, reconnects, last error,
 * `connectedAt` (null while there is no connection) and `nextRetryAt` are {@link LinkState}'s.
 */
export class HaConnection extends LinkState<HaConnectionState> {
  readonly #options: HaConnectionOptions;
  readonly #wsUrl: string;
  readonly #random: () => number;
  readonly #timeoutMs: number;
  readonly #pingMs: number;
  readonly #maxFrameBytes: number;
  readonly #subscriptions: HaSubscription[] = [];
  #session: HaSession | undefined;
  #haVersion: string | null = null;
  #seq = 0;
  #abort = new AbortController();
  #run: Promise<void> | undefined;
  #cancelPing = () => {};

  /**
   * @example
   * ```ts
   * import { getLogger } from "@logtape/logtape";
   * import { systemClock } from "../../clock.ts";
   *
   * const ha = new HaConnection({
   *   url: "http://homeassistant.local:8123",
   *   token: Deno.env.get("HA_TOKEN") ?? "",
   *   clock: systemClock,
   *   logger: getLogger(["homed", "ha"]),
   * });
   * ha.subscribe({ type: "subscribe_events", event_type: "state_changed" }, (event) => console.log(event));
   * await ha.start();
   * const states = await ha.command<unknown[]>("get_states");
   * await ha.stop();
   * ```
   */
  constructor(options: HaConnectionOptions) {
    super("idle");
    this.#options = options;
    this.#wsUrl = websocketUrl(options.url);
    this.#random = options.random ?? Math.random;
    this.#timeoutMs = options.commandTimeoutMs ?? HA_COMMAND_TIMEOUT_MS;
    this.#pingMs = options.pingIntervalMs ?? HA_PING_INTERVAL_MS;
    this.#maxFrameBytes = options.maxFrameBytes ?? HA_MAX_FRAME_BYTES;
  }

  /** HA's version from the last `auth_ok`, or null before one. */
  get haVersion(): string | null {
    return this.#haVersion;
  }

  /** The WebSocket URL, without credentials. */
  get url(): string {
    return shownUrl(this.#wsUrl);
  }

  /**
   * Adds a subscription (`subscribe_events {event_type}`, say), sent on every connection from now on — at once when
   * connected. Its events go to `onEvent` with their frame's sequence number.
   */
  subscribe(message: Record<string, unknown> & { type: string }, onEvent: HaEventHandler): void {
    const subscription = { message, onEvent };
    this.#subscriptions.push(subscription);
    const session = this.#session;
    if (session?.ready) {
      session.subscribe(subscription, this.#timeoutMs).catch((error) => this.#subscribeFailed(message, error));
    }
  }

  /**
   * Sends a command and resolves with its result and the sequence number of the frame that carried it; rejects with
   * a {@link HaCommandError} (HA's error, no answer within the deadline, the connection closing, or none up).
   */
  request<T = unknown>(
    type: string,
    fields: Record<string, unknown> = {},
    options: { timeoutMs?: number } = {},
  ): Promise<HaAnswer<T>> {
    const session = this.#session;
    if (!session?.ready) {
      const why = this.lastError ? ` (${this.lastError})` : "";
      return Promise.reject(new HaCommandError(type, "not_connected", `Home Assistant is not connected${why}`));
    }
    return session.request(type, fields, options.timeoutMs ?? this.#timeoutMs) as Promise<HaAnswer<T>>;
  }

  /** {@link HaConnection.request}, the result alone. */
  async command<T = unknown>(
    type: string,
    fields: Record<string, unknown> = {},
    options: { timeoutMs?: number } = {},
  ): Promise<T> {
    return (await this.request<T>(type, fields, options)).result;
  }

  /** Starts connecting; resolves once the first attempt ended (at most {@link HA_START_WAIT_MS}), never rejects. */
  async start(): Promise<void> {
    if (this.#run) return;
    this.#abort = new AbortController();
    const signal = this.#abort.signal;
    const dialling = dial({
      clock: this.#options.clock,
      waitMs: HA_START_WAIT_MS,
      loop: (tried) => this.#loop(signal, tried),
      onError: (error) => {
        this.#options.logger.error("The Home Assistant connection stopped working: {error}", { error });
      },
    });
    this.#run = dialling.run;
    await dialling.started;
  }

  /** Closes the connection and stops reconnecting; waits for the socket to close (a few seconds at most). */
  async stop(): Promise<void> {
    this.#abort.abort(new Error("The Home Assistant connection stopped"));
    this.#cancelPing();
    this.#session?.close("homed stopped the connection");
    const run = this.#run;
    if (!run) return;
    const limit = deadline(this.#options.clock, STOP_MS);
    try {
      if ((await limit.race(run)).late) {
        this.#options.logger.warning("The Home Assistant connection did not close within {seconds} s", {
          seconds: STOP_MS / 1_000,
        });
      }
    } finally {
      limit.cancel();
      this.#run = undefined;
      this.moveTo("stopped");
    }
  }

  async #loop(signal: AbortSignal, tried: () => void): Promise<void> {
    const { clock, logger } = this.#options;
    const backoff = new Backoff(
      { minMs: HA_BACKOFF.initialMs, maxMs: HA_BACKOFF.maxMs, jitter: 0.25, capAfterJitter: true },
      this.#random,
    );
    const authBackoff = new Backoff({ minMs: HA_AUTH_BACKOFF.initialMs, maxMs: HA_AUTH_BACKOFF.maxMs }, this.#random);
    let outage = false;
    while (!signal.aborted) {
      this.moveTo("connecting");
      const session = new HaSession(this.#wsUrl, this.#options.token, {
        clock,
        timeoutMs: this.#timeoutMs,
        maxFrameBytes: this.#maxFrameBytes,
        nextSeq: () => ++this.#seq,
        logger,
      });
      this.#session = session;
      let wait: number;
      try {
        this.#haVersion = await session.authenticated;
        if (signal.aborted) break;
        authBackoff.reset();
        await this.#ready(session);
        if (signal.aborted) break;
        const again = this.linkUp("connected", clock.now());
        logger.info(
          again
            ? "Home Assistant {version} is connected again at {url}"
            : "Home Assistant {version} is connected at {url}",
          { version: this.#haVersion, url: this.url },
        );
        outage = false;
        tried();
        this.#schedulePing(session);
        const why = await session.closed;
        this.#cancelPing();
        this.linkDown();
        if (signal.aborted) break;
        this.linkFailed(why);
        outage = true;
        if (clock.monotonic() - session.openedAt >= HA_BACKOFF.stableMs) backoff.reset();
        wait = backoff.next();
        logger.warning("The Home Assistant connection closed: {why}; reconnecting in {seconds} s", {
          why,
          seconds: Math.round(wait / 100) / 10,
        });
      } catch (error) {
        session.close("the connection failed");
        await session.closed;
        if (signal.aborted) break;
        const message = (error as Error).message;
        this.linkFailed(message);
        if (error instanceof HaAuthError) {
          this.moveTo("auth_failed");
          wait = authBackoff.next();
          logger.error("{message}; homed tries again in {minutes} min", {
            message,
            minutes: Math.round(wait / 60_000),
          });
        } else {
          wait = backoff.next();
          // One line per outage: a Home Assistant that is away for an hour must not fill the log.
          if (!outage) {
            logger.warning("Home Assistant is not connected: {message}; trying again with backoff", { message });
          }
          outage = true;
        }
      } finally {
        if (this.#session === session && !session.ready) this.#session = undefined;
      }
      tried();
      if (!(await this.#backoff(wait, signal))) break;
    }
    this.#cancelPing();
    this.#session = undefined;
    this.linkDown();
    this.moveTo("stopped");
  }

  /** After `auth_ok`: coalesced frames asked for, the subscriptions sent again, then the caller's loading. */
  async #ready(session: HaSession): Promise<void> {
    try {
      await session.request("supported_features", { features: { coalesce_messages: 1 } }, this.#timeoutMs);
    } catch (error) {
      // An HA that predates the command still works, one frame per message.
      this.#options.logger.debug("Home Assistant did not take supported_features: {error}", { error });
    }
    await Promise.all(
      this.#subscriptions.map((subscription) =>
        session.subscribe(subscription, this.#timeoutMs).catch((error) =>
          this.#subscribeFailed(subscription.message, error)
        )
      ),
    );
    await this.#options.onConnected?.();
  }

  #subscribeFailed(message: Record<string, unknown>, error: unknown): void {
    if (error instanceof HaCommandError && error.code === "connection_lost") return;
    this.#options.logger.warning("Home Assistant refused the subscription {message}: {error}", {
      message: JSON.stringify(message),
      error: (error as Error).message,
    });
  }

  #schedulePing(session: HaSession): void {
    if (this.#pingMs <= 0) return;
    this.#cancelPing();
    this.#cancelPing = this.#options.clock.after(this.#pingMs, () => {
      session.request("ping", {}, this.#timeoutMs).then(
        () => {
          if (session.ready) this.#schedulePing(session);
        },
        (error: HaCommandError) => {
          if (error.code === "timeout") {
            session.close(`No pong from Home Assistant within ${this.#timeoutMs / 1_000} s`);
          }
        },
      );
    });
  }

  /** Waits `wait` ms before the next attempt; false when the connection was stopped meanwhile. */
  #backoff(wait: number, signal: AbortSignal): Promise<boolean> {
    if (this.state !== "auth_failed") this.moveTo("waiting");
    const clock = this.#options.clock;
    // On the clock's timers, not its sleep: a test's fake clock decides when the wait is over.
    return this.waitToRetry(clock.now() + wait, () => sleepWith(clock, wait, signal));
  }
}
