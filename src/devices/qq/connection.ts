/**
 * One OneBot V11 WebSocket, from either side (the implementation dialled homed, or homed dialled it): actions matched
 * to their responses by echo (responses may come out of order), each under a deadline; events handed on; frames that
 * are not JSON or have the wrong shape are logged (at most 10 a kind per 10 s, then a count) and dropped while the
 * connection stays usable; the time of the last frame and the announced heartbeat interval are kept for liveness. A frame over
 * `onebot.max_frame_bytes` (UTF-8 bytes) closes the connection (1009, Message Too Big). Both homed's sockets (the
 * forward client and the reverse endpoint, `net/ws_peer.ts`) refuse such a frame at its header, before its payload
 * ({@link OneBotConnection.tooBig} words and logs it); the check here stays for any other socket.
 *
 * @module
 */

import type { TextSocket } from "../../net/text_socket.ts";
import type { Logger } from "@logtape/logtape";
import type { Clock } from "../../clock.ts";
import { LogLimiter } from "../../log/rate_limit.ts";
import { type ActionRequest, type ActionResponse, type OneBotEvent, readFrame } from "./frames.ts";

/** Which frames a connection carries (`X-Client-Role`; split mode pairs an API and an Event socket). */
export type Role = "universal" | "api" | "event";

/** An action that failed: the implementation's own words, or why no answer came. */
export class ActionError extends Error {
  readonly retcode: number | undefined;

  /**
   * @example
   * ```ts
   * throw new ActionError("QQ action send_group_msg failed (retcode 100): 发送失败", 100);
   * ```
   */
  constructor(message: string, retcode?: number) {
    super(message);
    this.name = "ActionError";
    this.retcode = retcode;
  }
}

/**
 * What a connection needs of its socket: homed's `WsPeer` (the reverse endpoint's, the forward client's), or Deno's
 * WebSocket.
 */
export type OneBotSocket = TextSocket;

/**
 * Why a connection is closed for a frame of `bytes` over `onebot.max_frame_bytes` (`limit`): the close reason, the
 * same from every path.
 *
 * @example
 * ```ts
 * frameTooBig(52_428_800, 1_048_576); // "Frame of 52428800 bytes is over onebot.max_frame_bytes (1048576)"
 * ```
 */
export function frameTooBig(bytes: number, limit: number): string {
  return `Frame of ${bytes} bytes is over onebot.max_frame_bytes (${limit})`;
}

/** Options of {@link OneBotConnection}. */
export interface ConnectionOptions {
  socket: OneBotSocket;
  selfId: string;
  role: Role;
  clock: Clock;
  logger: Logger;
  /** Longest wait for an action's response. */
  actionTimeoutMs: number;
  /** A frame longer than this (bytes, UTF-8) closes the connection with 1009. */
  maxFrameBytes: number;
  /** Limits the lines about dropped frames (shared by a device's connections); by default one of its own. */
  limiter?: LogLimiter;
  onEvent: (event: OneBotEvent, connection: OneBotConnection) => void;
  onClose: (connection: OneBotConnection) => void;
}

interface Pending {
  action: string;
  resolve(data: unknown): void;
  reject(error: Error): void;
  cancel(): void;
}

/** One live connection. */
export class OneBotConnection {
  readonly selfId: string;
  readonly role: Role;
  readonly connectedAt: number;
  #options: ConnectionOptions;
  #pending = new Map<string, Pending>();
  #echo = 0;
  #closed = false;
  #limiter: LogLimiter;
  #ownLimiter: boolean;
  lastFrameAt: number;
  lastHeartbeatAt: number | undefined;
  /** The interval the last heartbeat announced (ms), if any. */
  heartbeatIntervalMs: number | undefined;
  /** `status.online` of the last heartbeat: QQ itself may be offline while the socket is fine. */
  online: boolean | undefined;
  /** When the last event other than a heartbeat or lifecycle came (a message, a notice, a request). */
  lastEventAt: number | undefined;
  droppedFrames = 0;

  /**
   * @example
   * ```ts
   * import { systemClock } from "../../clock.ts";
   * import { log } from "../../log/logging.ts";
   *
   * const connection = new OneBotConnection({
   *   socket: new WebSocket("ws://127.0.0.1:3001"),
   *   selfId: "10001000",
   *   role: "universal",
   *   clock: systemClock,
   *   logger: log("qq"),
   *   actionTimeoutMs: 30_000,
   *   maxFrameBytes: 1_048_576,
   *   onEvent: (event) => console.log(event.post_type),
   *   onClose: () => console.log("closed"),
   * });
   * await connection.call("send_private_msg", { user_id: 1, message: [{ type: "text", data: { text: "hi" } }] });
   * ```
   */
  constructor(options: ConnectionOptions) {
    this.#options = options;
    this.selfId = options.selfId;
    this.role = options.role;
    this.connectedAt = options.clock.now();
    this.lastFrameAt = this.connectedAt;
    this.#ownLimiter = options.limiter === undefined;
    this.#limiter = options.limiter ?? new LogLimiter({ clock: options.clock });
    options.socket.addEventListener("message", (message) => this.#onFrame(message.data));
    options.socket.addEventListener("close", () => this.#onClosed());
    options.socket.addEventListener("error", () => {});
  }

  /** True while the socket is open. */
  get open(): boolean {
    return !this.#closed && this.#options.socket.readyState === WebSocket.OPEN;
  }

  /** Actions awaiting their response. */
  get inFlight(): number {
    return this.#pending.size;
  }

  /**
   * Sends an action and resolves with its `data`, or rejects with {@link ActionError}: a failed retcode (with the
   * implementation's `wording`, `message` or `msg`), no answer within the deadline, or the socket closing first.
   * `written` is called once the frame went out (so a caller knows it may have been carried out).
   */
  call(action: string, params: Record<string, unknown>, written?: () => void): Promise<unknown> {
    if (this.role === "event") return Promise.reject(new ActionError("An Event connection carries no actions"));
    if (!this.open) return Promise.reject(new ActionError(`The connection of QQ ${this.selfId} is closed`));
    const echo = `homed-${++this.#echo}`;
    return new Promise((resolve, reject) => {
      const seconds = Math.round(this.#options.actionTimeoutMs / 100) / 10;
      const cancel = this.#options.clock.after(this.#options.actionTimeoutMs, () => {
        this.#pending.delete(echo);
        reject(new ActionError(`QQ action ${action} got no answer within ${seconds}s (onebot.action_timeout)`));
      });
      this.#pending.set(echo, { action, resolve, reject, cancel });
      try {
        const request: ActionRequest = { action, params, echo };
        this.#options.socket.send(JSON.stringify(request));
        written?.();
      } catch (error) {
        cancel();
        this.#pending.delete(echo);
        reject(new ActionError(`QQ action ${action} could not be sent: ${(error as Error).message}`));
      }
    });
  }

  #onFrame(data: unknown): void {
    this.lastFrameAt = this.#options.clock.now();
    const { logger, maxFrameBytes } = this.#options;
    const bytes = oversize(data, maxFrameBytes);
    if (bytes !== undefined) return this.#refuse(bytes);
    if (typeof data !== "string") return this.#drop("a binary frame");
    const frame = readFrame(data);
    if (frame.kind === "dropped") return this.#drop(frame.why);
    if (frame.kind === "response") return this.#response(frame.response);
    const { event } = frame;
    if (event.post_type === "meta_event" && event.meta_event_type === "heartbeat") this.#heartbeat(event);
    else if (event.post_type !== "meta_event") this.lastEventAt = this.lastFrameAt;
    try {
      this.#options.onEvent(event, this);
    } catch (error) {
      logger.error("QQ {selfId}: handling an event failed: {error}", { selfId: this.selfId, error });
    }
  }

  #drop(what: string): void {
    this.droppedFrames++;
    const { logger } = this.#options;
    const selfId = this.selfId;
    const summary = (count: number, seconds: number) =>
      logger.warning("QQ {selfId}: {count} more dropped frames like this in the last {seconds} s", {
        selfId,
        count,
        seconds,
      });
    if (this.#limiter.allow(`dropped ${selfId}`, summary)) {
      logger.warning("QQ {selfId}: dropped {what}", { selfId, what });
    }
  }

  /** A frame over `onebot.max_frame_bytes`: the connection is closed as Message Too Big. */
  #refuse(bytes: number): void {
    this.close(1009, this.tooBig(bytes));
  }

  /**
   * A frame of `bytes` is over `onebot.max_frame_bytes`: counted and logged (at a bounded rate); returns the reason
   * the connection is closed with. For a socket that refuses such a frame at its header.
   *
   * @example
   * ```ts
   * declare const connection: OneBotConnection;
   * connection.tooBig(52_428_800); // "Frame of 52428800 bytes is over onebot.max_frame_bytes (1048576)"
   * ```
   */
  tooBig(bytes: number): string {
    this.droppedFrames++;
    const { logger, maxFrameBytes } = this.#options;
    const selfId = this.selfId;
    const summary = (count: number, seconds: number) =>
      logger.warning(
        "QQ {selfId}: {count} more connections closed for frames over onebot.max_frame_bytes in the last {seconds} s",
        { selfId, count, seconds },
      );
    if (this.#limiter.allow(`refused ${selfId}`, summary)) {
      logger.warning(
        "QQ {selfId}: a frame of {bytes} bytes is over onebot.max_frame_bytes ({limit}); closing the connection (1009)",
        { selfId, bytes, limit: maxFrameBytes },
      );
    }
    return frameTooBig(bytes, maxFrameBytes);
  }

  #heartbeat(frame: OneBotEvent): void {
    this.lastHeartbeatAt = this.#options.clock.now();
    if (typeof frame.interval === "number" && frame.interval > 0) this.heartbeatIntervalMs = frame.interval;
    const status = frame.status as { online?: unknown } | undefined;
    if (typeof status?.online === "boolean") this.online = status.online;
  }

  #response(frame: ActionResponse): void {
    const echo = String(frame.echo);
    const pending = this.#pending.get(echo);
    if (!pending) return; // Unknown, late, or a second frame for a settled echo (NapCat streams): ignored.
    this.#pending.delete(echo);
    pending.cancel();
    const ok = frame.status === "ok" || (frame.status === undefined && frame.retcode === 0);
    if (ok) return pending.resolve(frame.data ?? null);
    const retcode = typeof frame.retcode === "number" ? frame.retcode : undefined;
    const detail = [frame.wording, frame.message, frame.msg].find((x) => typeof x === "string" && x !== "");
    if (retcode === 404 || retcode === 1404) {
      return pending.reject(
        new ActionError(
          `The QQ implementation does not support the action ${pending.action} (retcode ${retcode})`,
          retcode,
        ),
      );
    }
    const status = frame.status === "async" ? "was only queued (status async)" : "failed";
    pending.reject(
      new ActionError(
        `QQ action ${pending.action} ${status} (retcode ${retcode ?? "missing"})${detail ? `: ${detail}` : ""}`,
        retcode,
      ),
    );
  }

  /**
   * Closes the socket if nothing arrived for 3× the announced heartbeat interval (60 s before the first heartbeat);
   * returns true when it did.
   */
  closeIfStale(now: number): boolean {
    const limit = this.heartbeatIntervalMs ? 3 * this.heartbeatIntervalMs : 60_000;
    if (!this.open || now - this.lastFrameAt <= limit) return false;
    this.#options.logger.warning("QQ {selfId} ({role}): no frame for {seconds}s; closing the stale connection", {
      selfId: this.selfId,
      role: this.role,
      seconds: Math.round((now - this.lastFrameAt) / 1000),
    });
    this.close(4000, "no heartbeat");
    return true;
  }

  /** Closes the socket (its pending actions fail). */
  close(code = 1000, reason = "closed by homed"): void {
    try {
      this.#options.socket.close(code, reason);
    } catch { /* already closing */ }
    this.#onClosed();
  }

  #onClosed(): void {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#ownLimiter) this.#limiter.flush();
    for (const [echo, pending] of this.#pending) {
      pending.cancel();
      pending.reject(
        new ActionError(`The connection of QQ ${this.selfId} closed before ${pending.action} was answered`),
      );
      this.#pending.delete(echo);
    }
    this.#options.onClose(this);
  }

  /** For `/api/status`. */
  status(): Record<string, unknown> {
    const iso = (ms: number | undefined) => ms === undefined ? null : new Date(ms).toISOString();
    return {
      self_id: this.selfId,
      role: this.role,
      open: this.open,
      connected_at: iso(this.connectedAt),
      last_frame_at: iso(this.lastFrameAt),
      last_heartbeat_at: iso(this.lastHeartbeatAt),
      last_event_at: iso(this.lastEventAt),
      heartbeat_interval_ms: this.heartbeatIntervalMs ?? null,
      qq_online: this.online ?? null,
      actions_in_flight: this.#pending.size,
      dropped_frames: this.droppedFrames,
    };
  }
}

/**
 * The size in bytes (UTF-8 for text) of a frame over `limit`, or `undefined` when it is within it. Text that cannot
 * be over (at most 3 bytes per UTF-16 unit) is not counted: `oversize("汉字", 5)` is 6, `oversize("汉字", 6)` undefined.
 */
function oversize(data: unknown, limit: number): number | undefined {
  let bytes = 0;
  if (typeof data === "string") bytes = data.length * 3 <= limit ? 0 : utf8Length(data);
  else if (data instanceof ArrayBuffer || ArrayBuffer.isView(data)) bytes = data.byteLength;
  else if (data instanceof Blob) bytes = data.size;
  return bytes > limit ? bytes : undefined;
}

function utf8Length(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0x80) bytes += 1;
    else if (unit < 0x800) bytes += 2;
    else if (unit >= 0xd800 && unit < 0xdc00 && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next < 0xe000) {
        bytes += 4;
        i++;
      } else bytes += 3;
    } else bytes += 3;
  }
  return bytes;
}
