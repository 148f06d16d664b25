/**
 * The shapes of a session with an MCP server: how homed reaches it, the tools and results it lists and returns, what a
 * session needs to open, and the open session itself. Apart from `mcp_session.ts` so the pieces that open one (the
 * transports, the opening's state) share them without importing the whole.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import type { Client } from "@modelcontextprotocol/sdk/client";
import type { Clock } from "../clock.ts";

/** How homed reaches a server. */
export type McpTransportKind = "stdio" | "http" | "sse";

/** A tool as the server lists it (`tools/list`). */
export interface McpListedTool {
  name: string;
  title?: string;
  description?: string;
  /** The server's JSON Schema for the arguments. */
  inputSchema: Record<string, unknown>;
  /** The server's hints (`readOnlyHint`, `destructiveHint`, …): what homed's policy takes its effect class from. */
  annotations?: { readOnlyHint?: boolean; destructiveHint?: boolean; openWorldHint?: boolean };
}

/** One part of a tool result's `content` (`text`, `image`, `audio`, `resource`, `resource_link`, …). */
export type McpContent = { type: string } & Record<string, unknown>;

/** What `tools/call` returned. */
export interface McpCallResult {
  content: readonly McpContent[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

/** The environment a stdio server may see beyond its own `env`. */
export interface McpBaseEnv {
  PATH?: string | undefined;
  HOME?: string | undefined;
}

/** What a session needs besides the server's config. */
export interface McpSessionDeps {
  clock: Clock;
  logger: Logger;
  /** Where `PATH` and `HOME` of a stdio server come from (homed's own, read once by the caller). */
  baseEnv: McpBaseEnv;
  /** Largest message read from a server, in bytes; 16 MiB. */
  maxMessageBytes?: number;
  /** How long a stdio child gets to exit after its stdin closes, and again after SIGTERM; 1 s. */
  closeGraceMs?: number;
}

/** An open session. */
export interface McpSession {
  readonly kind: McpTransportKind;
  readonly client: Client;
  /** The tools listed when it opened. */
  readonly tools: readonly McpListedTool[];
  /** A `tools/list_changed` came while it opened: the list may be out of date already. */
  readonly changedWhileOpening: boolean;
  /** The stdio child's process id (`null` for HTTP, or once it is gone). */
  readonly pid: number | null;
  /** Resolves with the reason once the session is over. */
  readonly ended: Promise<string>;
  /** Ends the session with `reason` (a call found it gone); the caller then closes it. */
  end(reason: string): void;
  /** Every page of `tools/list`, under `limitMs`. */
  listTools(limitMs: number): Promise<McpListedTool[]>;
  /** Closes the transport (and the child) within a few seconds; never throws. */
  close(): Promise<void>;
}

/** Options of `openSession` (`mcp_session.ts`). */
export interface OpenSessionOptions {
  /** Time for the transport, `initialize` and the first `tools/list` together. */
  limitMs: number;
  /** Called on `notifications/tools/list_changed`. */
  onToolsChanged?(): void;
  /** Aborts the attempt (homed is stopping). */
  signal?: AbortSignal;
}
