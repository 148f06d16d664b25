/**
 * One WebSocket to Home Assistant, from its auth phase to its close: the token sent on `auth_required`, HA's version
 * taken from `auth_ok`, then commands with ids increasing per socket, each matched to its `result` (or `pong`) frame
 * under a deadline, and event frames handed to their subscription's handler. Every frame gets a sequence number as it
 * arrives. When the socket closes, every command still waiting fails with `connection_lost`. A session never
 * reconnects: `HaConnection` makes a new one for each attempt, which is why this lives apart from it.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import type { Clock } from "../../clock.ts";
import { WsClient } from "../../net/ws_client.ts";
import { HaAuthError, HaCommandError } from "./ha_errors.ts";

/** A command's answer and the sequence number of the frame that carried it. */
export interface HaAnswer<T> {
  result: T;
  seq: number;
}

/** Receives the `event` of each event frame of a subscription, with the frame's sequence number. */
export type HaEventHandler = (event: unknown, seq: number) => void;

/** A subscription command and where its events go; `HaConnection` sends it again on every session. */
export interface HaSubscription {
  message: Record<string, unknown> & { type: string };
  onEvent: HaEventHandler;
}

/** What a session needs besides its URL and token. */
export interface HaSessionOptions {
  clock: Clock;
  /** The deadline of the auth phase. */
  timeoutMs: number;
  /** Largest frame taken; a frame over it closes the socket (1009) before it is read. */
  maxFrameBytes: number;
  /** The next frame's sequence number, counted across the sessions of one connection. */
  nextSeq: () => number;
  logger: Logger;
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

/** One socket, from its auth phase to its close. */
export class HaSession {
  /** The socket itself. */
  readonly socket: WsClient;
  /** Resolves with why the socket closed. */
  readonly closed: Promise<string>;
  /** Resolves with HA's version on `auth_ok`; rejects on `auth_invalid`, a close, or the deadline. */
  readonly authenticated: Promise<string>;
  /** When the socket opened (the clock's monotonic time), 0 before: how long a connection stayed up. */
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

  /** Opens the socket to `url` (the WebSocket URL); `token` goes in the auth frame only, never logged. */
  constructor(url: string, token: string, options: HaSessionOptions) {
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

  /** Whether HA said `auth_ok` and the socket is still open: commands may be sent. */
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
  async subscribe(subscription: HaSubscription, timeoutMs: number): Promise<void> {
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

  /** Closes the socket; `why` is what {@link HaSession.closed} resolves with, unless another reason came first. */
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
