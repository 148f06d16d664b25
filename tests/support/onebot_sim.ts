/**
 * A OneBot V11 implementation simulator: dials homed's reverse WebSocket like go-cqhttp, NapCat or Lagrange.OneBot
 * would (their header quirks included), sends the lifecycle frame, heartbeats and message events in either format,
 * and answers actions — at once, held back, out of order, failed, or never.
 *
 * @module
 */

import { waitFor } from "./wait.ts";

/** Which implementation's handshake to imitate. */
export type Flavour = "gocq" | "napcat" | "lagrange";

/** Options of {@link OneBotSim.connect}. */
export interface SimOptions {
  selfId?: string;
  flavour?: Flavour;
  /** The access token the implementation is configured with (empty: none). */
  token?: string;
  /** `X-Client-Role` to send (defaults: Universal). */
  role?: string;
  /** Omit X-Self-ID (to test the refusal). */
  noSelfId?: boolean;
}

/** An action frame the simulator received. */
export interface ReceivedAction {
  action: string;
  params: Record<string, unknown>;
  echo: string;
}

/** How to answer an action: data for ok, a failed frame, or nothing. */
export type Answer = { data: unknown } | { failed: { retcode: number; wording?: string } } | "silent";

/**
 * The handshake headers an implementation sends.
 *
 * @example
 * ```ts
 * handshakeHeaders("gocq", "10001000", "secret-token-123456");
 * // {
 * //   "X-Self-ID": "10001000",
 * //   "X-Client-Role": "Universal",
 * //   "User-Agent": "CQHttp/4.15.0",
 * //   Authorization: "Token secret-token-123456",
 * // }
 * ```
 */
export function handshakeHeaders(flavour: Flavour, selfId: string | undefined, token: string, role?: string) {
  const headers: Record<string, string> = {};
  if (selfId !== undefined) headers["X-Self-ID"] = selfId;
  if (flavour === "gocq") {
    headers["X-Client-Role"] = role ?? "Universal";
    headers["User-Agent"] = "CQHttp/4.15.0";
    if (token) headers.Authorization = `Token ${token}`;
  } else if (flavour === "lagrange") {
    headers["X-Client-Role"] = role ?? "Universal";
    headers["User-Agent"] = "Lagrange.OneBot";
    headers.Authorization = `Bearer ${token}`;
  } else {
    headers["X-Client-Role"] = role ?? "Universal";
    headers["User-Agent"] = "OneBot/11";
    headers.Authorization = `Bearer ${token}`; // NapCat sends "Bearer " even without a token
  }
  return headers;
}

/** A simulated implementation connected to homed. */
export class OneBotSim {
  readonly selfId: string;
  readonly actions: ReceivedAction[] = [];
  #socket: WebSocket;
  #answer: (action: ReceivedAction) => Answer = () => ({ data: { message_id: this.#nextMessageId++ } });
  #nextMessageId = -2_000_000_000; // message ids are int32 hashes, often negative
  #closed: Promise<void>;

  private constructor(socket: WebSocket, selfId: string) {
    this.#socket = socket;
    this.selfId = selfId;
    this.#closed = new Promise((resolve) => socket.addEventListener("close", () => resolve()));
    socket.addEventListener("message", (message) => {
      const frame = JSON.parse(String(message.data)) as ReceivedAction;
      this.actions.push(frame);
      const answer = this.#answer(frame);
      if (answer !== "silent") this.reply(frame.echo, answer);
    });
  }

  /**
   * Dials `url` (`ws://127.0.0.1:PORT/onebot/v11/ws`) and sends the lifecycle frame.
   *
   * @example
   * ```ts
   * import type { HomedProcess } from "./homed_process.ts";
   *
   * declare const homed: HomedProcess;
   * const sim = await OneBotSim.connect(`ws://127.0.0.1:${homed.workspace.port}/onebot/v11/ws`, { flavour: "napcat" });
   * ```
   */
  static async connect(url: string, options: SimOptions = {}): Promise<OneBotSim> {
    const selfId = options.selfId ?? "10001000";
    const headers = handshakeHeaders(
      options.flavour ?? "napcat",
      options.noSelfId ? undefined : selfId,
      options.token ?? "",
      options.role,
    );
    const socket =
      new (WebSocket as unknown as new (url: string, options: { headers: Record<string, string> }) => WebSocket)(
        url,
        { headers },
      );
    await new Promise<void>((resolve, reject) => {
      socket.addEventListener("open", () => resolve(), { once: true });
      socket.addEventListener("error", () => reject(new Error(`the simulator could not connect to ${url}`)), {
        once: true,
      });
    });
    const sim = new OneBotSim(socket, selfId);
    if ((options.role ?? "Universal").toLowerCase() !== "api") {
      sim.send({
        meta_event_type: "lifecycle",
        post_type: "meta_event",
        self_id: Number(selfId),
        sub_type: "connect",
        time: 0,
      });
    }
    return sim;
  }

  /** Decides how later actions are answered. */
  answerWith(answer: (action: ReceivedAction) => Answer): void {
    this.#answer = answer;
  }

  /** Sends a response frame for `echo`. */
  reply(echo: string, answer: Exclude<Answer, "silent">): void {
    this.send(
      "data" in answer
        ? { status: "ok", retcode: 0, data: answer.data, echo }
        : { status: "failed", retcode: answer.failed.retcode, data: null, echo, wording: answer.failed.wording },
    );
  }

  /** Sends any frame (an object is serialised; a string goes as is). */
  send(frame: unknown): void {
    this.#socket.send(typeof frame === "string" ? frame : JSON.stringify(frame));
  }

  /** A heartbeat meta event. */
  heartbeat(intervalMs = 30_000): void {
    this.send({
      time: 0,
      self_id: Number(this.selfId),
      post_type: "meta_event",
      meta_event_type: "heartbeat",
      status: { online: true, good: true },
      interval: intervalMs,
    });
  }

  /** A private message event (`message` as given: CQ string or segments). */
  privateMessage(userId: string, message: unknown, extra: Record<string, unknown> = {}): void {
    this.send({
      time: 0,
      self_id: Number(this.selfId),
      post_type: "message",
      message_type: "private",
      sub_type: "friend",
      message_id: this.#nextMessageId++,
      user_id: Number(userId),
      message,
      raw_message: typeof message === "string" ? message : "",
      font: 0,
      sender: { user_id: Number(userId), nickname: `nick${userId}`, sex: "unknown", age: 0 },
      ...extra,
    });
  }

  /** A group message event. */
  groupMessage(groupId: string, userId: string, message: unknown, extra: Record<string, unknown> = {}): void {
    this.send({
      time: 0,
      self_id: Number(this.selfId),
      post_type: "message",
      message_type: "group",
      sub_type: "normal",
      message_id: this.#nextMessageId++,
      group_id: Number(groupId),
      user_id: Number(userId),
      anonymous: null,
      message,
      raw_message: typeof message === "string" ? message : "",
      font: 0,
      sender: { user_id: Number(userId), nickname: `nick${userId}`, card: "", role: "member" },
      ...extra,
    });
  }

  /** Resolves once `count` actions named `action` arrived. */
  async waitForActions(action: string, count = 1, limitMs = 10_000): Promise<ReceivedAction[]> {
    await waitFor(
      () => this.actions.filter((a) => a.action === action).length >= count,
      `${count} ${action} action(s)`,
      {
        limitMs,
      },
    );
    return this.actions.filter((a) => a.action === action);
  }

  /** Closes the socket and waits until it is closed. */
  async close(): Promise<void> {
    this.#socket.close(1000, "simulator done");
    await this.#closed;
  }

  /** Resolves when homed closed the socket. */
  get closed(): Promise<void> {
    return this.#closed;
  }
}

/**
 * Sends the upgrade request of a handshake as plain HTTP, to read the status homed refuses it with.
 *
 * @example
 * ```ts
 * import type { HomedProcess } from "./homed_process.ts";
 *
 * declare const homed: HomedProcess; // its config sets onebot.access_token
 * const url = `${homed.url.replace("http", "ws")}/onebot/v11/ws`;
 * await handshakeStatus(url, handshakeHeaders("gocq", "10001000", "wrong-token-000000000"));
 * // { status: 403, message: "The OneBot access token is not onebot.access_token" }
 * ```
 */
export async function handshakeStatus(
  url: string,
  headers: Record<string, string>,
): Promise<{ status: number; message: string }> {
  const response = await fetch(url.replace(/^ws/, "http"), { headers });
  const body = await response.json().catch(() => ({}));
  return { status: response.status, message: body?.error?.message ?? "" };
}
