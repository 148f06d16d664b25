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
 * The socket is homed's own {@link WsClient}, not Deno's `WebSocket`: HA's frames can be large (`get_states` of a big
 * install runs to megabytes) and the limit of `maxFrameBytes` is checked at each frame header, before any of the
 * payload is read or kept, where Deno's WebSocket hands over whole messages of up to 64 MiB. With
 * `coalesce_messages` asked for, HA may send several messages as one JSON array; both forms are read.
 *
 * Every frame received gets a sequence number (`seq`), handed with command results and events, so a caller can tell
 * whether an event came before or after a snapshot (see `ha_device.ts`).
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import { type Clock, deadline, sleepWith } from "../../clock.ts";
import { WsClient } from "../../net/ws_client.ts";
import { Backoff, dial } from "../../service/backoff.ts";

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

/** A command HA answered with an error, or one that got no answer; `code` is HA's (`not_found`…) or homed's own. */
export class HaCommandError extends Error {
  /**
   * HA's error code (`not_found`, `invalid_format`, `unknown_command`, `home_assistant_error`, `unauthorized`…), or
   * homed's own: `timeout`, `not_connected`, `connection_lost`.
   */
  readonly code: string;
  /** HA's own message (or homed's, for the local codes). */
  readonly haMessage: string;
  /** The command's type. */
  readonly command: string;

  /**
   * @example
   * ```ts
   * const error = new HaCommandError("call_service", "not_found", "Service light.dance not found.");
   * error.message; // "Home Assistant answered call_service with not_found: Service light.dance not found."
   * ```
   */
  constructor(command: string, code: string, haMessage: string) {
    const local = code === "timeout" || code === "not_connected" || code === "connection_lost";
    super(local ? haMessage : `Home Assistant answered ${command} with ${code}: ${haMessage}`);
    this.name = "HaCommandError";
    this.code = code;
    this.haMessage = haMessage;
    this.command = command;
  }
}

/** HA refused the token (`auth_invalid`). */
export class HaAuthError extends Error {
  /**
   * @example
   * ```ts
   * throw new HaAuthError("Home Assistant refused smart_home.home_assistant.token: Invalid access token or password");
   * ```
   */
  constructor(message: string) {
    super(message);
    this.name = "HaAuthError";
  }
}

/** A command's answer and the sequence number of the frame that carried it. */
export interface HaAnswer<T> {
  result: T;
  seq: number;
}

/** Receives the `event` of each event frame of a subscription, with the frame's sequence number. */
export type HaEventHandler = (event: unknown, seq: number) => void;

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
 * The WebSocket URL for HA's base URL: `http` becomes `ws`, `https` `wss`, and `/api/websocket` is appended to the
 * path (a reverse proxy's prefix kept); a `ws(s)://` URL is taken as it is. Throws a `TypeError` naming
 * `smart_home.home_assistant.url` for anything else.
 *
 * @example
 * ```ts
 * websocketUrl("http://homeassistant.local:8123"); // "ws://homeassistant.local:8123/api/websocket"
 * websocketUrl("https://example.org/ha/"); // "wss://example.org/ha/api/websocket"
 * ```
 */
export function websocketUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new TypeError(
      `smart_home.home_assistant.url: ${JSON.stringify(url)} is not a URL; use http://<host>:8123 or https://…`,
    );
  }
  const scheme = { "http:": "ws:", "https:": "wss:", "ws:": "ws:", "wss:": "wss:" }[parsed.protocol];
  if (!scheme) {
    throw new TypeError(
      `smart_home.home_assistant.url: ${JSON.stringify(url)} is not an http(s):// or ws(s):// URL`,
    );
  }
  const keep = parsed.protocol === "ws:" || parsed.protocol === "wss:";
  const path = keep ? parsed.pathname : `${parsed.pathname.replace(/\/+$/, "")}/api/websocket`;
  return `${scheme}//${parsed.host}${path}${keep ? parsed.search : ""}`;
}

/**
 * The URL with any user name and password taken out, for status and logs.
 *
 * @example
 * ```ts
 * shownUrl("http://me:secret@ha.local:8123/"); // "http://ha.local:8123/"
 * ```
 */
export function shownUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.username = "";
    parsed.password = "";
    return parsed.toString();
  } catch {
    return url;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

interface Pending {
  command: string;
  resolve(answer: HaAnswer<unknown>): void;
  reject(error: Error): void;
  cancel(): void;
}

interface Subscription {
  message: Record<string, unknown> & { type: string };
  onEvent: HaEventHandler;
}

/** One socket, from its auth phase to its close. */
class Session {
  readonly socket: WsClient;
  /** Resolves with why the socket closed. */
  readonly closed: Promise<string>;
  /** Resolves with HA's version on `auth_ok`; rejects on `auth_invalid`, a close, or the deadline. */
  readonly authenticated: Promise<string>;
  openedAt = 0;
  #nextId = 1;
  #pending = new Map<number, Pending>();
  #handlers = new Map<number, HaEventHandler>();
  #phase: "required" | "result" | "ready" | "closed" = "required";
  #why: string | undefined;
  #opened = false;
  #token: string;
  #clock: Clock;
  #timeoutMs: number;
  #nextSeq: () => number;
  #logger: Logger;
  #settleAuth: { resolve(version: string): void; reject(error: Error): void } | undefined;
  #cancelAuthTimer = () => {};

  constructor(
    url: string,
    token: string,
    options: { clock: Clock; timeoutMs: number; maxFrameBytes: number; nextSeq: () => number; logger: Logger },
  ) {
    this.#token = token;
    this.#clock = options.clock;
    this.#timeoutMs = options.timeoutMs;
    this.#nextSeq = options.nextSeq;
    this.#logger = options.logger;
    this.authenticated = new Promise<string>((resolve, reject) => (this.#settleAuth = { resolve, reject }));
    // Nobody may be awaiting it yet when it fails (a close during the handshake).
    this.authenticated.catch(() => {});
    const limit = options.maxFrameBytes;
    this.socket = new WsClient(url, {
      maxMessageBytes: limit,
      onTooBig: (bytes) => `Frame of ${bytes} bytes is over the Home Assistant frame limit (${limit} bytes)`,
    });
    this.closed = new Promise<string>((resolve) => {
      this.socket.addEventListener("close", (event) => {
        const { code, reason } = event as CloseEvent;
        const why = this.#why ??
          (code === 1009 && reason
            ? reason // homed refused a frame over the limit
            : this.#opened
            ? `Home Assistant closed the connection (code ${code}${reason ? `: ${reason}` : ""})`
            : `Could not open ${url} (smart_home.home_assistant.url); is Home Assistant running there?`);
        this.#ended(why);
        resolve(why);
      });
    });
    this.socket.addEventListener("error", () => {});
    this.socket.addEventListener("open", () => {
      this.#opened = true;
      this.openedAt = this.#clock.monotonic();
    });
    this.socket.addEventListener("message", (event) => this.#onFrame(event.data));
    this.#cancelAuthTimer = this.#clock.after(this.#timeoutMs, () => {
      this.close(`Home Assistant did not finish the auth phase within ${this.#timeoutMs / 1_000} s`);
    });
  }

  get ready(): boolean {
    return this.#phase === "ready";
  }

  /** Sends a command; resolves with its result and the frame's sequence number, under the deadline. */
  request(type: string, fields: Record<string, unknown>, timeoutMs: number): Promise<HaAnswer<unknown>> {
    if (this.#phase !== "ready") {
      return Promise.reject(new HaCommandError(type, "not_connected", "Home Assistant is not connected"));
    }
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      const cancel = this.#clock.after(timeoutMs, () => {
        this.#pending.delete(id);
        reject(
          new HaCommandError(type, "timeout", `Home Assistant did not answer ${type} within ${timeoutMs / 1_000} s`),
        );
      });
      this.#pending.set(id, { command: type, resolve, reject, cancel });
      this.socket.send(JSON.stringify({ ...fields, id, type }));
    });
  }

  /** Sends a subscription; its events go to `onEvent` from the moment it is sent. */
  async subscribe(subscription: Subscription, timeoutMs: number): Promise<void> {
    const id = this.#nextId;
    this.#handlers.set(id, subscription.onEvent);
    const { type, ...fields } = subscription.message;
    try {
      await this.request(type, fields, timeoutMs);
    } catch (error) {
      this.#handlers.delete(id);
      throw error;
    }
  }

  close(why: string): void {
    this.#why ??= why;
    this.socket.close(1000, "");
  }

  #send(frame: Record<string, unknown>): void {
    this.socket.send(JSON.stringify(frame));
  }

  #onFrame(data: unknown): void {
    const seq = this.#nextSeq();
    if (typeof data !== "string") {
      this.#logger.warning("Home Assistant sent a binary frame; homed ignores it");
      return;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(data);
    } catch {
      this.#logger.warning("Home Assistant sent a frame that is not JSON: {start}", { start: data.slice(0, 80) });
      return;
    }
    // With coalesce_messages, several messages come as one array.
    for (const message of Array.isArray(parsed) ? parsed : [parsed]) {
      if (!isRecord(message) || typeof message.type !== "string") {
        this.#logger.warning("Home Assistant sent a message without a type: {start}", { start: data.slice(0, 80) });
        continue;
      }
      try {
        this.#onMessage(message, seq);
      } catch (error) {
        this.#logger.error("Handling a Home Assistant {type} message failed: {error}", { type: message.type, error });
      }
    }
  }

  #onMessage(message: Record<string, unknown>, seq: number): void {
    const type = message.type as string;
    if (this.#phase === "required") {
      if (type !== "auth_required") return this.close(`Home Assistant sent ${type} before auth_required`);
      this.#phase = "result";
      this.#send({ type: "auth", access_token: this.#token });
      return;
    }
    if (this.#phase === "result") {
      if (type === "auth_ok") {
        this.#phase = "ready";
        this.#cancelAuthTimer();
        this.#settleAuth?.resolve(typeof message.ha_version === "string" ? message.ha_version : "unknown");
        return;
      }
      const said = typeof message.message === "string" ? message.message : "no reason given";
      this.#cancelAuthTimer();
      if (type === "auth_invalid") {
        this.#settleAuth?.reject(
          new HaAuthError(
            `Home Assistant refused the access token in smart_home.home_assistant.token (${said}); make a ` +
              `long-lived access token in your Home Assistant profile (Security tab) and put it there`,
          ),
        );
        this.close("Home Assistant refused the access token (smart_home.home_assistant.token)");
      } else this.close(`Home Assistant answered the auth frame with ${type}`);
      return;
    }
    const id = typeof message.id === "number" ? message.id : undefined;
    if (id === undefined) return;
    if (type === "event") {
      this.#handlers.get(id)?.(message.event, seq);
      return;
    }
    if (type !== "result" && type !== "pong") return;
    const pending = this.#pending.get(id);
    if (!pending) return; // answered after its deadline: nobody waits for it any more
    this.#pending.delete(id);
    pending.cancel();
    if (type === "pong" || message.success === true) {
      pending.resolve({ result: type === "pong" ? null : message.result, seq });
      return;
    }
    const error = isRecord(message.error) ? message.error : {};
    pending.reject(
      new HaCommandError(
        pending.command,
        typeof error.code === "string" ? error.code : "unknown_error",
        typeof error.message === "string" ? error.message : "no message",
      ),
    );
  }

  #ended(why: string): void {
    const wasAuth = this.#phase !== "ready";
    this.#phase = "closed";
    this.#cancelAuthTimer();
    if (wasAuth) this.#settleAuth?.reject(new Error(why));
    for (const [id, pending] of this.#pending) {
      this.#pending.delete(id);
      pending.cancel();
      pending.reject(
        new HaCommandError(
          pending.command,
          "connection_lost",
          `The connection to Home Assistant closed before it answered ${pending.command} (${why})`,
        ),
      );
    }
    this.#handlers.clear();
  }
}

/** A connection to HA that reconnects by itself and keeps its subscriptions. */
export class HaConnection {
  readonly #options: HaConnectionOptions;
  readonly #wsUrl: string;
  readonly #random: () => number;
  readonly #timeoutMs: number;
  readonly #pingMs: number;
  readonly #maxFrameBytes: number;
  readonly #subscriptions: Subscription[] = [];
  #session: Session | undefined;
  #state: HaConnectionState = "idle";
  #haVersion: string | null = null;
  #reconnects = 0;
  #everConnected = false;
  #lastError: string | null = null;
  #nextRetryAt: number | null = null;
  #connectedAt: number | null = null;
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
    this.#options = options;
    this.#wsUrl = websocketUrl(options.url);
    this.#random = options.random ?? Math.random;
    this.#timeoutMs = options.commandTimeoutMs ?? HA_COMMAND_TIMEOUT_MS;
    this.#pingMs = options.pingIntervalMs ?? HA_PING_INTERVAL_MS;
    this.#maxFrameBytes = options.maxFrameBytes ?? HA_MAX_FRAME_BYTES;
  }

  /** What the connection is doing now. */
  get state(): HaConnectionState {
    return this.#state;
  }

  /** HA's version from the last `auth_ok`, or null before one. */
  get haVersion(): string | null {
    return this.#haVersion;
  }

  /** Connections made after the first one. */
  get reconnects(): number {
    return this.#reconnects;
  }

  /** Why the last connection ended or failed, or null. */
  get lastError(): string | null {
    return this.#lastError;
  }

  /** While waiting to reconnect: when the next attempt is due (ms since the epoch), else null. */
  get nextRetryAt(): number | null {
    return this.#nextRetryAt;
  }

  /** When the current connection came up (ms since the epoch), or null while there is none. */
  get connectedAt(): number | null {
    return this.#connectedAt;
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
      const why = this.#lastError ? ` (${this.#lastError})` : "";
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
      this.#state = "stopped";
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
      this.#state = "connecting";
      const session = new Session(this.#wsUrl, this.#options.token, {
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
        if (this.#everConnected) this.#reconnects++;
        logger.info(
          this.#everConnected
            ? "Home Assistant {version} is connected again at {url}"
            : "Home Assistant {version} is connected at {url}",
          { version: this.#haVersion, url: this.url },
        );
        this.#everConnected = true;
        outage = false;
        this.#state = "connected";
        this.#connectedAt = clock.now();
        tried();
        this.#schedulePing(session);
        const why = await session.closed;
        this.#cancelPing();
        this.#connectedAt = null;
        if (signal.aborted) break;
        this.#lastError = why;
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
        this.#lastError = message;
        if (error instanceof HaAuthError) {
          this.#state = "auth_failed";
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
    this.#connectedAt = null;
    this.#state = "stopped";
  }

  /** After `auth_ok`: coalesced frames asked for, the subscriptions sent again, then the caller's loading. */
  async #ready(session: Session): Promise<void> {
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

  #schedulePing(session: Session): void {
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
  async #backoff(wait: number, signal: AbortSignal): Promise<boolean> {
    if (this.#state !== "auth_failed") this.#state = "waiting";
    this.#nextRetryAt = this.#options.clock.now() + wait;
    try {
      // On the clock's timers, not its sleep: a test's fake clock decides when the wait is over.
      await sleepWith(this.#options.clock, wait, signal);
      return true;
    } catch {
      return false;
    } finally {
      this.#nextRetryAt = null;
    }
  }
}
