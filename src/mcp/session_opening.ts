/**
 * The state of one attempt to open a session, shared by the transports that connect and by `openSession` that races
 * them against the deadline: what is open so far (closed when the attempt fails, so a late or aborted attempt leaves
 * nothing behind), the stdio child (for why it ended), the single promise that says when and why the session ended,
 * the `tools/list_changed` notices that came before it was established, and the client's handlers that turn the
 * transport's events into that end.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import type { Client } from "@modelcontextprotocol/sdk/client";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport";
// The SDK's `./*` export maps `x.js` to `x.js.d.ts`, which does not exist: without `@ts-types` (the same path with no
// extension, which maps to `x.d.ts`) its modules would type-check as `any`.
// @ts-types="@modelcontextprotocol/sdk/types"
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import type { Clock } from "../clock.ts";
import { LogLimiter } from "../log/rate_limit.ts";
import type { McpTransportKind } from "./mcp_session_types.ts";
import { isSessionGone } from "./session_errors.ts";
import type { StdioTransport } from "./stdio_transport.ts";

/** What is open while the attempt runs, and how to close it. */
export interface Opened {
  client: Client;
  transport: Transport;
  close(): Promise<void>;
}

/** A connected transport: its kind, its client, and the stdio child's process id (`null` for HTTP). */
export interface Connected {
  kind: McpTransportKind;
  client: Client;
  transport: Transport;
  pid: () => number | null;
}

/**
 * One attempt's state.
 *
 * @example
 * ```ts
 * import { getLogger } from "@logtape/logtape";
 * import { systemClock } from "../clock.ts";
 *
 * const opening = new SessionOpening('MCP server "fs"', { clock: systemClock, logger: getLogger(["homed", "mcp"]) });
 * opening.end("the child exited");
 * await opening.ended; // "the child exited"
 * ```
 */
export class SessionOpening {
  /** How messages name the server. */
  readonly label: string;
  /** Resolves with the reason once the session is over. */
  readonly ended: Promise<string>;
  /** The server's stderr lines and errors, 10 per 10 s between them. */
  readonly stderrLimiter: LogLimiter;
  /** Aborted when the attempt is given up (the deadline, homed stopping) or failed. */
  readonly abort = new AbortController();
  #logger: Logger;
  #errorSummary: (count: number, seconds: number) => void;
  #endSession: (reason: string) => void = () => {};
  #established = false;
  #changedEarly = false;
  #onChanged = () => {
    this.#changedEarly = true;
  };
  #opened: Opened | undefined;
  /** The stdio transport, for why its child ended (Protocol forgets its transport before calling onclose). */
  #stdio: StdioTransport | undefined;

  constructor(label: string, deps: { clock: Clock; logger: Logger }) {
    this.label = label;
    this.#logger = deps.logger;
    this.#errorSummary = (count, seconds) =>
      deps.logger.debug("{label}: {count} more errors in the last {seconds} s", { label, count, seconds });
    this.ended = new Promise<string>((resolve) => (this.#endSession = resolve));
    this.stderrLimiter = new LogLimiter({ clock: deps.clock, lines: 10, windowMs: 10_000 });
  }

  /** Ends the session with `reason` (only the first reason counts). */
  end(reason: string): void {
    this.#endSession(reason);
  }

  /** Why the session ended as far as its transport knows: the stdio child's end, else the connection's close. */
  get endReason(): string {
    return this.#stdio?.endReason ?? "the connection closed";
  }

  /** A `tools/list_changed` came before the session was established. */
  get changedEarly(): boolean {
    return this.#changedEarly;
  }

  /** Records the stdio transport, whose child's end is the session's. */
  useStdio(transport: StdioTransport): void {
    this.#stdio = transport;
  }

  /** What is open now: closed by {@link SessionOpening.closeOpened} if the attempt fails. */
  hold(opened: Opened): void {
    this.#opened = opened;
  }

  /** The transport open now, if any. */
  get openTransport(): Transport | undefined {
    return this.#opened?.transport;
  }

  /**
   * The attempt succeeded: list changes now go to `onToolsChanged`, what is open is the session's (its close is
   * returned) and no longer the attempt's, and a transport gone meanwhile ends the session at once.
   */
  establish(client: Client, onToolsChanged: () => void): () => Promise<void> {
    this.#onChanged = onToolsChanged;
    const close = this.#opened!.close;
    this.#opened = undefined;
    this.#established = true;
    if (!client.transport) this.end(this.endReason);
    return close;
  }

  /** Closes what the failed attempt left open (nothing after {@link SessionOpening.establish}). */
  async closeOpened(): Promise<void> {
    if (this.#opened) {
      this.stderrLimiter.flush();
      await this.#opened.close();
    }
  }

  /** Sets `client`'s handlers: list changes, its close and its errors, each turned into what they mean here. */
  wire(client: Client, kind: McpTransportKind): void {
    const { label } = this;
    const logger = this.#logger;
    // Set before `initialize`: a server may change its list the moment it is initialized (server-everything does),
    // and may be gone before the first list is read — then the session is over before it began.
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => this.#onChanged());
    client.onclose = () => {
      // The SDK closes a client whose connect failed, the streamable one before the SSE fallback among them: that
      // is no session's end. One that ends before it is established is caught when it would be (below).
      if (this.#established || kind === "stdio") this.end(this.endReason);
    };
    client.onerror = (error) => {
      // While opening, a 4xx is the answer of a legacy server (the fallback handles it), not a lost session.
      if (!this.#established) logger.debug("{label}: {error}", { label, error: error.message });
      else if (isSessionGone(error)) this.end("the server ended the HTTP session");
      else if (/Maximum reconnection attempts/.test(error.message)) {
        this.end(`its event stream broke and could not be reopened (${error.message})`);
      } else if (kind === "sse" && /^SSE error/.test(error.message)) {
        this.end(`its event stream broke (${error.message})`);
      } else if (/over homed's limit/.test(error.message)) {
        logger.warning("{error}", { error: error.message });
      } else if (this.stderrLimiter.allow("error", this.#errorSummary)) {
        // A server printing logs on stdout makes one of these a line: limited like its stderr.
        logger.debug("{label}: {error}", { label, error: error.message });
      }
    };
  }
}
