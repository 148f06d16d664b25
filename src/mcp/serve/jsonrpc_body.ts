/**
 * What a client sent, read as JSON-RPC before the SDK sees it, so that each kind of bad input gets JSON-RPC's own
 * code: text that is not JSON is -32700 (Parse error), JSON that is not a JSON-RPC message (`{"foo":1}`, `[]`, `42`) is
 * -32600 (Invalid Request). The SDK's transports answer both with -32700 (HTTP), or skip the line unanswered (stdio).
 *
 * @module
 */

// The SDK's "./*" export maps `x.js` to types at `x.js.d.ts`, which do not exist: without @ts-types naming
// `x.d.ts`, Deno types every import from it as `any`.
// @ts-types="@modelcontextprotocol/sdk/types"
import {
  ErrorCode,
  type JSONRPCMessage,
  JSONRPCMessageSchema,
  type RequestId,
} from "@modelcontextprotocol/sdk/types.js";

/** Why a body or line was refused: the JSON-RPC error code, a message naming the bad value, and the id it had if any. */
export interface JsonRpcRefusal {
  code: number;
  message: string;
  /** The message's own `id` when it had a usable one (so the client can match the refusal to its request), else null. */
  id: RequestId | null;
}

/** A body read: its JSON value and its messages, or why it is refused. */
export type JsonRpcBody =
  | { ok: true; json: unknown; messages: JSONRPCMessage[] }
  | { ok: false; refusal: JsonRpcRefusal };

/** The first characters of `value` as JSON, for an error message (a refused body may be large). */
function shown(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 80)}…` : text;
}

/** The `id` of something meant as a request, when it is one JSON-RPC allows (a string or an integer). */
function idOf(value: unknown): RequestId | null {
  if (value === null || typeof value !== "object" || !("id" in value)) return null;
  const id = value.id;
  return typeof id === "string" || (typeof id === "number" && Number.isInteger(id)) ? id : null;
}

/** One JSON value as a JSON-RPC message, or the refusal naming it (`where` says which, within a batch). */
function messageOf(value: unknown, where: string): JSONRPCMessage | JsonRpcRefusal {
  const parsed = JSONRPCMessageSchema.safeParse(value);
  if (parsed.success) return parsed.data;
  return {
    code: ErrorCode.InvalidRequest,
    message: `Invalid Request: ${where} is not a JSON-RPC 2.0 message (an object with "jsonrpc": "2.0" and a ` +
      `"method", or a "result" or "error" for an "id"): ${shown(value)}`,
    id: idOf(value),
  };
}

/**
 * Reads `text` as JSON-RPC: one message, or (with `batches`) a non-empty array of them. `what` names the input in
 * messages ("the body", "the line").
 *
 * @example
 * ```ts
 * const read = readJsonRpc('{"foo":1}', { what: "the body", batches: true });
 * if (!read.ok) console.log(read.refusal.code); // -32600
 * ```
 */
export function readJsonRpc(text: string, options: { what: string; batches: boolean }): JsonRpcBody {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    const start = text.length > 80 ? `${text.slice(0, 80)}…` : text;
    return {
      ok: false,
      refusal: {
        code: ErrorCode.ParseError,
        message: `Parse error: ${options.what} is not JSON (${reason}): ${start}`,
        id: null,
      },
    };
  }
  if (!Array.isArray(json) || !options.batches) {
    const message = messageOf(json, options.what);
    return "code" in message ? { ok: false, refusal: message } : { ok: true, json, messages: [message] };
  }
  if (json.length === 0) {
    return {
      ok: false,
      refusal: {
        code: ErrorCode.InvalidRequest,
        message: `Invalid Request: ${options.what} is an empty batch ([])`,
        id: null,
      },
    };
  }
  const messages: JSONRPCMessage[] = [];
  for (const [index, value] of json.entries()) {
    const message = messageOf(value, `message ${index + 1} of the batch`);
    if ("code" in message) return { ok: false, refusal: { ...message, id: null } };
    messages.push(message);
  }
  return { ok: true, json, messages };
}

/**
 * The JSON-RPC error response for `refusal`.
 *
 * @example
 * ```ts
 * const answer = refusalResponse({ code: -32600, message: "Invalid Request: 42", id: null });
 * // { jsonrpc: "2.0", id: null, error: { code: -32600, message: "Invalid Request: 42" } }
 * ```
 */
export function refusalResponse(
  refusal: JsonRpcRefusal,
): { jsonrpc: "2.0"; id: RequestId | null; error: { code: number; message: string } } {
  return { jsonrpc: "2.0", id: refusal.id, error: { code: refusal.code, message: refusal.message } };
}
