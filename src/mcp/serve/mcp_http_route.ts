/**
 * The daemon's optional `/mcp` endpoint: MCP's streamable HTTP transport, stateless, on a fetch-style handler. Each
 * POST gets a server and a transport of its own (the SDK's `WebStandardStreamableHTTPServerTransport`, which works on
 * `Request` and `Response`), and both are closed once it is answered: no session ties one caller's requests together —
 * every request carries its own token, and so its own identity. What outlives a request is only the chat turns kept
 * for a later `chat` call by `turn_id` ({@link ChatTurns}), each its caller's alone.
 *
 * A body is answered as one JSON document, unless a request in it carries a progress token: then the answer is an SSE
 * stream, so the `chat` tool's progress notifications reach the client before its result does.
 *
 * Who the caller is, is decided before this handler, by homed's auth middleware; the handler only passes that
 * identity to `accessFor`, so `chat` runs as that person and the lookups see what that person may see.
 *
 * @module
 */

// The SDK's "./*" export maps `x.js` to types at `x.js.d.ts`, which do not exist: without @ts-types naming
// `x.d.ts`, Deno types every import from it as `any`.
// @ts-types="@modelcontextprotocol/sdk/server/webStandardStreamableHttp"
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
// @ts-types="@modelcontextprotocol/sdk/server/requestBody"
import { readRequestBody, requestBodyTooLargeMessage } from "@modelcontextprotocol/sdk/server/requestBody.js";
// @ts-types="@modelcontextprotocol/sdk/shared/mediaType"
import { isJsonContentType } from "@modelcontextprotocol/sdk/shared/mediaType.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import { isJSONRPCRequest, type JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import type { Identity } from "../../identity/identity.ts";
import { log } from "../../log/logging.ts";
import { ChatTurns } from "./chat_turns.ts";
import { type ButlerAccess, createHomedMcpServer } from "./homed_tools.ts";
import { readJsonRpc, refusalResponse } from "./jsonrpc_body.ts";

/** Options of {@link mcpHttpHandler}. */
export interface McpHttpOptions {
  /** homed's version, shown to clients. */
  version: string;
  /**
   * The largest request body read, in bytes (`daemon.max_body_bytes` in the daemon); a larger one is answered 413.
   * The SDK's own limit, 4 MiB, by default.
   */
  maxBodyBytes?: number;
  /** The longest a `chat` call waits for its turn before answering with what is known (`MCP_ANSWER_WITHIN_MS`). */
  answerWithinMs?: number;
  /** Time between a `chat` call's progress notifications, when it asked for them (`MCP_PROGRESS_EVERY_MS`). */
  progressEveryMs?: number;
}

/** The SDK's own limit on a request body, when `maxBodyBytes` sets none (4 MiB). */
const SDK_MAX_BODY_BYTES = 4 * 1024 * 1024;

/** A JSON-RPC error as an HTTP answer (what the SDK's transport gives for the requests it refuses itself). */
function rpcError(status: number, message: string, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message }, id: null }), {
    status,
    headers: { "content-type": "application/json", ...headers },
  });
}

/**
 * Whether the SDK's transport would read this request's body: it refuses a wrong Accept (406) or Content-Type (415)
 * first, so such a request goes to it unread and keeps those answers.
 */
function bodyWanted(request: Request): boolean {
  const accept = request.headers.get("accept") ?? "";
  return accept.includes("application/json") && accept.includes("text/event-stream") &&
    isJsonContentType(request.headers.get("content-type"));
}

/** Whether a request among `messages` asks for progress notifications (`_meta.progressToken`). */
function wantsProgress(messages: readonly JSONRPCMessage[]): boolean {
  return messages.some((message) => isJSONRPCRequest(message) && message.params?._meta?.progressToken !== undefined);
}

/** `response` with `done` called once its body has been sent whole, or the client stopped reading it. */
function whenSent(response: Response, done: () => Promise<void>): Response {
  const source = response.body;
  if (!source) {
    void done();
    return response;
  }
  const reader = source.getReader();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { value, done: ended } = await reader.read();
      if (!ended) return controller.enqueue(value);
      controller.close();
      await done();
    },
    async cancel(reason) {
      await reader.cancel(reason);
      await done();
    },
  });
  return new Response(body, { status: response.status, headers: response.headers });
}

/**
 * A handler for `/mcp`: one request (already authenticated) and the caller's identity in, the MCP answer out. Only
 * POST is served: without sessions there is no stream for a GET to open and nothing for a DELETE to end, so both are
 * 405, as the MCP spec allows a stateless server to answer.
 *
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import { VERSION } from "../../version.ts";
 * import type { Identity } from "../../identity/identity.ts";
 * import type { ButlerAccess } from "./homed_tools.ts";
 *
 * declare const accessFor: (identity: Identity) => ButlerAccess;
 * const handle = mcpHttpHandler(accessFor, { version: VERSION, maxBodyBytes: 262_144 });
 * const app = new Hono<{ Variables: { identity: Identity } }>();
 * // …behind the bearer-token middleware that sets `identity`:
 * app.all("/mcp", (c) => handle(c.req.raw, c.get("identity")));
 * ```
 */
export function mcpHttpHandler(
  accessFor: (identity: Identity) => ButlerAccess,
  options: McpHttpOptions,
): (request: Request, identity: Identity) => Promise<Response> {
  const logger = log("mcp", "http");
  // One set for all requests, as a turn's reply is asked for by a later request (with a server of its own).
  const turns = new ChatTurns();
  return async (request, identity) => {
    if (request.method !== "POST") {
      return rpcError(405, "Method not allowed: this MCP endpoint is stateless; send each message with POST", {
        allow: "POST",
      });
    }
    // The body is read here, not by the SDK: its transport calls JSON that is not JSON-RPC a parse error (-32700) and
    // answers an empty batch with 202, where JSON-RPC has -32600 (Invalid Request) for both.
    let parsedBody: unknown = undefined;
    let stream = false;
    if (bodyWanted(request)) {
      const maxBytes = options.maxBodyBytes ?? SDK_MAX_BODY_BYTES;
      const body = await readRequestBody(request, maxBytes);
      if (body.tooLarge) return rpcError(413, requestBodyTooLargeMessage(maxBytes));
      const read = readJsonRpc(body.text, { what: "the body", batches: true });
      if (!read.ok) return Response.json(refusalResponse(read.refusal), { status: 400 });
      parsedBody = read.json;
      stream = wantsProgress(read.messages);
    }
    const server = createHomedMcpServer(accessFor(identity), {
      version: options.version,
      turns,
      caller: identity.name,
      ...(options.answerWithinMs === undefined ? {} : { answerWithinMs: options.answerWithinMs }),
      ...(options.progressEveryMs === undefined ? {} : { progressEveryMs: options.progressEveryMs }),
    });
    server.server.onerror = (error) =>
      logger.warning("MCP request from {name} failed: {error}", { name: identity.name, error: error.message });
    // No sessionIdGenerator: stateless, so no state to keep between requests nor to leak between callers. Without
    // progress to send, one JSON answer once every request of the body is done.
    const transport = new WebStandardStreamableHTTPServerTransport({ enableJsonResponse: !stream });
    let response: Response;
    try {
      await server.connect(transport);
      response = await transport.handleRequest(request, parsedBody === undefined ? undefined : { parsedBody });
    } catch (error) {
      await server.close();
      throw error;
    }
    // A JSON answer is whole already; a stream is still being written, and the server is closed once it is sent.
    if (!stream || !response.headers.get("content-type")?.startsWith("text/event-stream")) {
      await server.close();
      return response;
    }
    return whenSent(response, () => server.close());
  };
}
