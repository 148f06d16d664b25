/**
 * One session with one MCP server: the transport chosen from its config (a child over stdio, or streamable HTTP
 * falling back to legacy SSE when the server answers the first POST with a 4xx, as the SDK's README advises), the
 * SDK `Client` on it, `initialize` and every page of `tools/list` under one deadline, and a single promise that says
 * when and why the session ended (the child exited, the HTTP session is gone, its event stream could not be reopened).
 * A session is never reused: {@link McpServerConnection} opens a new one to reconnect.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
// The SDK's `./*` export maps `x.js` to `x.js.d.ts`, which does not exist: without `@ts-types` (the same path with no
// extension, which maps to `x.d.ts`) its modules would type-check as `any`.
import { Client } from "@modelcontextprotocol/sdk/client";
// @ts-types="@modelcontextprotocol/sdk/client/sse"
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
// @ts-types="@modelcontextprotocol/sdk/client/streamableHttp"
import { StreamableHTTPClientTransport, StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport";
// @ts-types="@modelcontextprotocol/sdk/types"
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import type {
  JsonSchemaType,
  JsonSchemaValidator,
  jsonSchemaValidator,
} from "@modelcontextprotocol/sdk/validation/types";
import { type Clock, deadline } from "../clock.ts";
import type { McpServerConfig } from "../config/mcp_servers.ts";
import { LogLimiter } from "../log/rate_limit.ts";
import { oneLine } from "../text/untrusted.ts";
import { compileSchema } from "../tools/json_schema.ts";
import { VERSION } from "../version.ts";
import { DEFAULT_MAX_MESSAGE_BYTES, StdioTransport } from "./stdio_transport.ts";

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

/** Options of {@link openSession}. */
export interface OpenSessionOptions {
  /** Time for the transport, `initialize` and the first `tools/list` together. */
  limitMs: number;
  /** Called on `notifications/tools/list_changed`. */
  onToolsChanged?(): void;
  /** Aborts the attempt (homed is stopping). */
  signal?: AbortSignal;
}

/** Pages of `tools/list` read at most; a server with more is cut there (said in the log). */
const MAX_PAGES = 50;
/** Tools kept from one server at most. */
const MAX_TOOLS = 500;

/**
 * The setting `field` of a server, for messages: where the owner goes to change it.
 *
 * @example
 * ```ts
 * settingOf({ name: "fs", source: "mcp.servers" }, "command"); // "mcp.servers.fs.command"
 * settingOf({ name: "fs", source: "/etc/homed/mcp.json" }, "command"); // "mcpServers.fs.command in /etc/homed/mcp.json"
 * ```
 */
export function settingOf(server: Pick<McpServerConfig, "name" | "source">, field: string): string {
  return server.source === "mcp.servers"
    ? `mcp.servers.${server.name}.${field}`
    : `mcpServers.${server.name}.${field} in ${server.source}`;
}

/**
 * How messages name a server.
 *
 * @example
 * ```ts
 * labelOf({ name: "filesystem" }); // 'MCP server "filesystem"'
 * ```
 */
export function labelOf(server: Pick<McpServerConfig, "name">): string {
  return `MCP server "${server.name}"`;
}

/**
 * The environment of a stdio server: `PATH` and `HOME` from `base` (when set), then the server's own `env`, and nothing
 * else — no API keys or tokens of homed's leak to a program someone else wrote.
 *
 * @example
 * ```ts
 * stdioEnv({ PATH: "/usr/bin", HOME: "/home/homed" }, { API_KEY: "k" });
 * // { PATH: "/usr/bin", HOME: "/home/homed", API_KEY: "k" }
 * ```
 */
export function stdioEnv(base: McpBaseEnv, own: Readonly<Record<string, string>>): Record<string, string> {
  const env: Record<string, string> = {};
  if (base.PATH !== undefined) env.PATH = base.PATH;
  if (base.HOME !== undefined) env.HOME = base.HOME;
  return { ...env, ...own };
}

/**
 * The SDK checks a tool's `structuredContent` against its `outputSchema`; with homed's validator instead of the
 * SDK's default (ajv: megabytes of memory for a check homed already has). A schema homed cannot compile is not
 * enforced — the result still comes back.
 */
const homedValidator: jsonSchemaValidator = {
  getValidator<T>(schema: JsonSchemaType): JsonSchemaValidator<T> {
    let check: ((value: unknown) => { path: string; message: string }[]) | undefined;
    try {
      check = compileSchema(schema);
    } catch {
      check = undefined;
    }
    return (input: unknown) => {
      const violations = check?.(input) ?? [];
      if (!violations.length) return { valid: true, data: input as T, errorMessage: undefined };
      const message = violations.map(({ path, message }) => `${path || "the value"} ${message}`).join("; ");
      return { valid: false, data: undefined, errorMessage: message };
    };
  },
};

/**
 * A `fetch` whose response bodies may not carry a message larger than `maxBytes`: it counts the bytes since the last
 * blank line (the end of a server-sent event; a JSON body has none, so it counts the whole body) and errors the body
 * past the limit — an HTTP server cannot make homed hold a gigabyte.
 */
function limitedFetch(maxBytes: number, label: string): (url: string | URL, init?: RequestInit) => Promise<Response> {
  return async (url, init) => {
    const response = await fetch(url, init);
    if (!response.body) return response;
    if (!response.ok) {
      // An error page, read here (bounded) so its body is never left open: the SSE client drops it unread.
      const text = await readCapped(response.body, 65_536);
      const nullBody = [101, 103, 204, 205, 304].includes(response.status);
      return new Response(nullBody ? null : text, {
        status: response.status,
        statusText: response.statusText,
        headers: response.headers,
      });
    }
    let since = 0;
    let previous = 0;
    const limiter = new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        for (let i = 0; i < chunk.length; i++) {
          const byte = chunk[i]!;
          since++;
          if (byte === 0x0a && previous === 0x0a) since = 0;
          if (byte !== 0x0d) previous = byte;
        }
        if (since > maxBytes) {
          controller.error(
            new Error(`${label} sent an HTTP message of more than ${maxBytes} bytes, over homed's limit`),
          );
          return;
        }
        controller.enqueue(chunk);
      },
    });
    return new Response(response.body.pipeThrough(limiter), {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}

/** The start of a body as text, at most `max` bytes; the rest is cancelled. */
async function readCapped(body: ReadableStream<Uint8Array>, max: number): Promise<string> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let text = "";
  let size = 0;
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      size += value.length;
      text += decoder.decode(value, { stream: true });
      if (size >= max) break;
    }
  } catch {
    // A broken error page is still an error page.
  } finally {
    await reader.cancel().catch(() => {});
  }
  return text;
}

/** A 4xx from the first POST: the server does not speak streamable HTTP there (a legacy SSE server). */
function isNotStreamable(error: unknown): boolean {
  return error instanceof StreamableHTTPError && typeof error.code === "number" && error.code >= 400 &&
    error.code < 500;
}

/**
 * The server forgot our HTTP session: a 404 (as the spec says), a 400 naming the session (as server-everything
 * does), or a 400 when the event stream of an established session is reopened.
 *
 * @example
 * ```ts
 * // @ts-types="@modelcontextprotocol/sdk/client/streamableHttp"
 * import { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
 *
 * isSessionGone(new StreamableHTTPError(404, "Session not found")); // true
 * isSessionGone(new StreamableHTTPError(500, "Internal error")); // false
 * ```
 */
export function isSessionGone(error: unknown): boolean {
  if (!(error instanceof StreamableHTTPError)) return false;
  if (error.code === 404) return true;
  return error.code === 400 && /session|Failed to open SSE stream/i.test(error.message);
}

/** An error's message on one line and at most 300 characters (an HTTP error carries the server's whole page). */
function messageOf(error: unknown): string {
  let message = oneLine(error instanceof Error ? error.message : String(error));
  // fetch says only "fetch failed"; the cause says why (refused, reset, no route).
  const cause = error instanceof Error && error.cause instanceof Error ? oneLine(error.cause.message) : "";
  if (cause && !message.includes(cause)) message = `${message}: ${cause}`;
  return message.length > 300 ? `${message.slice(0, 300)}…` : message;
}

/** A streamable-HTTP error with its status: `HTTP 403: Error POSTing to endpoint: …`. */
function httpError(error: unknown): string {
  if (!(error instanceof StreamableHTTPError)) return messageOf(error);
  return `HTTP ${error.code ?? "error"}: ${messageOf(error).replace(/^Streamable HTTP error: /, "")}`;
}

function newClient(): Client {
  return new Client({ name: "homed", version: VERSION }, { capabilities: {}, jsonSchemaValidator: homedValidator });
}

/** The listed tools, every page, bounded. */
async function listAll(client: Client, logger: Logger, label: string, signal?: AbortSignal): Promise<McpListedTool[]> {
  const tools: McpListedTool[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const result = await client.listTools(cursor === undefined ? {} : { cursor }, signal ? { signal } : {});
    for (const tool of result.tools) {
      // Such a tool answers only through the (experimental) tasks API, which homed does not use.
      if (tool.execution?.taskSupport === "required") {
        logger.debug("{label}: tool {tool} needs task-based execution; not offered", { label, tool: tool.name });
        continue;
      }
      const listed: McpListedTool = { name: tool.name, inputSchema: tool.inputSchema as Record<string, unknown> };
      if (tool.title !== undefined) listed.title = tool.title;
      if (tool.description !== undefined) listed.description = tool.description;
      const hints = tool.annotations;
      if (hints && typeof hints === "object") {
        listed.annotations = Object.fromEntries(
          (["readOnlyHint", "destructiveHint", "openWorldHint"] as const)
            .filter((key) => typeof hints[key] === "boolean")
            .map((key) => [key, hints[key]]),
        );
      }
      tools.push(listed);
    }
    cursor = result.nextCursor;
    if (cursor === undefined) break;
    if (page === MAX_PAGES - 1) {
      logger.warning("{label} lists more than {pages} pages of tools; the rest are ignored", {
        label,
        pages: MAX_PAGES,
      });
    }
  }
  if (tools.length > MAX_TOOLS) {
    logger.warning("{label} lists {count} tools; homed keeps the first {max}", {
      label,
      count: tools.length,
      max: MAX_TOOLS,
    });
    tools.length = MAX_TOOLS;
  }
  return tools;
}

/**
 * Opens a session with `server`: throws, with a message naming the server and what failed, when it cannot be started,
 * does not finish `initialize` and the first `tools/list` within `options.limitMs`, or the attempt is aborted.
 *
 * @example
 * ```ts
 * import { getLogger } from "@logtape/logtape";
 * import { systemClock } from "../clock.ts";
 * import type { McpServerConfig } from "../config/mcp_servers.ts";
 *
 * declare const server: McpServerConfig;
 * const session = await openSession(server, {
 *   clock: systemClock,
 *   logger: getLogger(["homed", "mcp"]),
 *   baseEnv: { PATH: "/usr/bin:/bin", HOME: "/home/homed" },
 * }, { limitMs: 30_000 });
 * session.tools.map((tool) => tool.name); // ["echo", "get-sum", …]
 * await session.close();
 * ```
 */
export async function openSession(
  server: McpServerConfig,
  deps: McpSessionDeps,
  options: OpenSessionOptions,
): Promise<McpSession> {
  const label = labelOf(server);
  const limit = deadline(deps.clock, options.limitMs);
  // Whatever is open when the attempt fails is closed here, so a late or aborted attempt leaves nothing behind.
  let opened: { client: Client; transport: Transport; close(): Promise<void> } | undefined;
  let endSession: (reason: string) => void = () => {};
  const ended = new Promise<string>((resolve) => (endSession = resolve));
  let established = false;
  let changedEarly = false;
  let onChanged = () => {
    changedEarly = true;
  };
  const stderrLimiter = new LogLimiter({ clock: deps.clock, lines: 10, windowMs: 10_000 });
  const errorSummary = (count: number, seconds: number) =>
    deps.logger.debug("{label}: {count} more errors in the last {seconds} s", { label, count, seconds });

  const wire = (client: Client, kind: McpTransportKind) => {
    // Set before `initialize`: a server may change its list the moment it is initialized (server-everything does),
    // and may be gone before the first list is read — then the session is over before it began.
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => onChanged());
    client.onclose = () => {
      // The SDK closes a client whose connect failed, the streamable one before the SSE fallback among them: that
      // is no session's end. One that ends before it is established is caught when it would be (below).
      if (established || kind === "stdio") endSession(stdio?.endReason ?? "the connection closed");
    };
    client.onerror = (error) => {
      // While opening, a 4xx is the answer of a legacy server (the fallback handles it), not a lost session.
      if (!established) deps.logger.debug("{label}: {error}", { label, error: error.message });
      else if (isSessionGone(error)) endSession("the server ended the HTTP session");
      else if (/Maximum reconnection attempts/.test(error.message)) {
        endSession(`its event stream broke and could not be reopened (${error.message})`);
      } else if (kind === "sse" && /^SSE error/.test(error.message)) {
        endSession(`its event stream broke (${error.message})`);
      } else if (/over homed's limit/.test(error.message)) {
        deps.logger.warning("{error}", { error: error.message });
      } else if (stderrLimiter.allow("error", errorSummary)) {
        // A server printing logs on stdout makes one of these a line: limited like its stderr.
        deps.logger.debug("{label}: {error}", { label, error: error.message });
      }
    };
  };
  // The stdio transport, for why its child ended (Protocol forgets its transport before calling onclose).
  let stdio: StdioTransport | undefined;

  const connectStdio = async () => {
    const command = server.command!;
    const transport = new StdioTransport({
      command,
      args: server.args,
      env: stdioEnv(deps.baseEnv, server.env),
      ...(server.cwd ? { cwd: server.cwd } : {}),
      clock: deps.clock,
      label,
      maxMessageBytes: deps.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES,
      graceMs: deps.closeGraceMs ?? 1_000,
      onStderr: (line: string) => {
        const summary = (count: number, seconds: number) =>
          deps.logger.info("{label}: {count} more stderr lines in the last {seconds} s", { label, count, seconds });
        if (stderrLimiter.allow("stderr", summary)) deps.logger.info("{label} stderr: {line}", { label, line });
      },
    });
    stdio = transport;
    const client = newClient();
    wire(client, "stdio");
    opened = { client, transport, close: () => client.close().catch(() => {}) };
    try {
      await client.connect(transport);
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) {
        throw new Error(
          `${label}: the command ${JSON.stringify(command)} (${settingOf(server, "command")}) was not found on PATH; ` +
            `install it or give its full path`,
        );
      }
      if (error instanceof Deno.errors.NotCapable || error instanceof Deno.errors.PermissionDenied) {
        throw new Error(
          `${label}: homed may not run ${JSON.stringify(command)} (${settingOf(server, "command")}: ${
            messageOf(error)
          }); ` +
            `start homed with the flags \`homed flags\` prints`,
        );
      }
      // Its exit says more than the SDK's "Connection closed" or a broken pipe.
      const ended = await transport.failureWithin(1_000);
      if (ended) throw new Error(`${label} failed to start: ${ended}`);
      const last = transport.stderrTail.at(-1);
      throw new Error(
        `${label} failed to start: ${messageOf(error).replace(/^MCP error -?\d+: /, "")}${
          last ? ` (its last words on stderr: ${last})` : ""
        }`,
      );
    }
    return { kind: "stdio" as const, client, transport, pid: () => transport.pid };
  };

  const connectHttp = async () => {
    const url = new URL(server.url!);
    const maxBytes = deps.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
    const requestInit: RequestInit = { headers: { ...server.headers } };
    const streamable = new StreamableHTTPClientTransport(url, { requestInit, fetch: limitedFetch(maxBytes, label) });
    let client = newClient();
    wire(client, "http");
    opened = {
      client,
      transport: streamable,
      close: async () => {
        // Tell the server the session is over (it may free what it holds), briefly: it may be gone already.
        const bye = deadline(deps.clock, 1_000);
        try {
          await bye.race(streamable.terminateSession().catch(() => {}));
        } finally {
          bye.cancel();
        }
        await client.close().catch(() => {});
      },
    };
    try {
      await client.connect(streamable);
      return { kind: "http" as const, client, transport: streamable as Transport, pid: () => null };
    } catch (error) {
      // This client's end is not the session's: the fallback may yet open one.
      client.onclose = () => {};
      await client.close().catch(() => {});
      if (abort.signal.aborted) throw new Error(`${label}: the attempt was given up`);
      if (!isNotStreamable(error)) throw new Error(`${label} (${server.url}): ${httpError(error)}`);
      deps.logger.debug("{label}: streamable HTTP refused ({error}); trying legacy SSE", {
        label,
        error: messageOf(error),
      });
      const sse = new SSEClientTransport(url, { requestInit, fetch: limitedFetch(maxBytes, label) });
      client = newClient();
      wire(client, "sse");
      opened = { client, transport: sse, close: () => client.close().catch(() => {}) };
      try {
        await client.connect(sse);
      } catch (second) {
        throw new Error(
          `${label} (${server.url}): streamable HTTP: ${httpError(error)}; legacy SSE: ${messageOf(second)}`,
        );
      }
      return { kind: "sse" as const, client, transport: sse as Transport, pid: () => null };
    }
  };

  const abort = new AbortController();
  const onStop = () => abort.abort(options.signal?.reason);
  options.signal?.addEventListener("abort", onStop, { once: true });
  let succeeded = false;
  try {
    if (options.signal?.aborted) throw new Error(`${label}: homed is stopping`);
    const attempt = (async () => {
      const connected = server.command !== undefined ? await connectStdio() : await connectHttp();
      const tools = await listAll(connected.client, deps.logger, label, abort.signal);
      return { connected, tools };
    })();
    // The attempt goes on after a `late`; its rejection then has nobody to tell.
    attempt.catch(() => {});
    const stopped = new Promise<{ late: true }>((resolve) =>
      abort.signal.addEventListener("abort", () => resolve({ late: true }))
    );
    const raced = await Promise.race([limit.race(attempt), stopped]);
    if (raced.late) {
      abort.abort();
      const seconds = Math.round(options.limitMs / 100) / 10;
      const tail = opened?.transport instanceof StdioTransport ? opened.transport.stderrTail.at(-1) : undefined;
      throw new Error(
        options.signal?.aborted
          ? `${label}: homed is stopping`
          : `${label} did not answer initialize and tools/list within ${seconds} s${
            tail ? ` (its last words on stderr: ${tail})` : ""
          }`,
      );
    }
    const { connected, tools } = raced.value;
    const { client, kind } = connected;
    onChanged = () => options.onToolsChanged?.();
    const close = opened!.close;
    opened = undefined;
    succeeded = true;
    established = true;
    if (!client.transport) endSession(stdio?.endReason ?? "the connection closed");
    return {
      kind,
      client,
      tools,
      changedWhileOpening: changedEarly,
      get pid() {
        return connected.pid();
      },
      ended,
      end: (reason) => endSession(reason),
      listTools: async (limitMs) => {
        const list = deadline(deps.clock, limitMs);
        const stop = new AbortController();
        try {
          const listed = await list.race(listAll(client, deps.logger, label, stop.signal));
          if (listed.late) {
            stop.abort();
            throw new Error(`${label} did not answer tools/list within ${Math.round(limitMs / 1000)} s`);
          }
          return listed.value;
        } finally {
          list.cancel();
        }
      },
      close: async () => {
        stderrLimiter.flush();
        await close();
      },
    };
  } catch (error) {
    // Every reason names the server: one from the SDK ("MCP error -32601: Method not found") gets the name here.
    const message = messageOf(error);
    throw message.startsWith(label) ? error : new Error(`${label}: ${message.replace(/^MCP error -?\d+: /, "")}`);
  } finally {
    limit.cancel();
    options.signal?.removeEventListener("abort", onStop);
    // Only a failed attempt aborts: the SDK keeps its listener on the signal after a request, and would send a
    // needless `notifications/cancelled` for a list that was answered.
    if (!succeeded) abort.abort();
    if (opened) {
      stderrLimiter.flush();
      await opened.close();
    }
  }
}
