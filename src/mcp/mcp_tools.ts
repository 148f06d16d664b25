/**
 * An MCP server's tools as homed {@link Tool}s: named `mcp__<server>__<tool>`, allowed to whom the server's `trust`
 * says, their arguments checked by homed's validator against the server's own JSON Schema (loosened, or `{type:
 * "object"}`, when it uses keywords homed cannot check — the server then validates, and its error comes back), and
 * their results turned into text for the model: text parts as they are, `structuredContent` as JSON (unless the text
 * already says it), images through
 * `describeImage` when homed has vision (else a one-line note), embedded resources as their text or URI — the whole
 * cut to `maxResultChars` with a visible marker, so a server that sends 10 MB costs a few hundred kilobytes at most.
 *
 * @module
 */

import type { McpServerConfig } from "../config/mcp_servers.ts";
import type { Trust } from "../identity/trust.ts";
import { decodeBase64 } from "../text/base64.ts";
import { untrustedLine } from "../text/untrusted.ts";
import { compileSchema, knownSchemaKeyword } from "../tools/json_schema.ts";
import type { JsonSchema, Tool, ToolContext, ToolEffect } from "../tools/tool.ts";
import type { McpCallResult, McpContent, McpListedTool } from "./mcp_session.ts";
import { mcpToolName } from "./tool_names.ts";

/** Describes an image for a model that cannot see it (homed's vision route); resolves with the description. */
export type DescribeImage = (bytes: Uint8Array, mime: string) => Promise<string>;

/** Largest tool result kept, in characters (256 Ki): more is cut with a marker. */
export const DEFAULT_MAX_RESULT_CHARS = 256 * 1024;
/** Longest tool description shown to the model. */
const MAX_DESCRIPTION = 1_024;
/** Larger images are not decoded for `describeImage` (their size is still said). */
const MAX_DESCRIBED_IMAGE_BYTES = 20 * 1024 * 1024;

/** Options of {@link renderMcpResult}. */
export interface RenderOptions {
  /** Most characters kept; {@link DEFAULT_MAX_RESULT_CHARS}. */
  maxChars?: number;
  describeImage?: DescribeImage;
}

/** Bytes a base64 text decodes to, without decoding it. */
function base64Bytes(data: string): number {
  const trimmed = data.replace(/\s+/g, "");
  const padding = trimmed.endsWith("==") ? 2 : trimmed.endsWith("=") ? 1 : 0;
  return Math.max(0, Math.floor(trimmed.length * 3 / 4) - padding);
}

function stringField(part: McpContent, key: string): string | undefined {
  const value = part[key];
  return typeof value === "string" ? value : undefined;
}

/** One content part as text (`undefined`: nothing to show). */
async function renderPart(part: McpContent, describeImage: DescribeImage | undefined): Promise<string | undefined> {
  switch (part.type) {
    case "text":
      return stringField(part, "text") ?? "";
    case "image": {
      const data = stringField(part, "data") ?? "";
      const mime = stringField(part, "mimeType") ?? "image";
      const size = base64Bytes(data);
      if (describeImage && size <= MAX_DESCRIBED_IMAGE_BYTES) {
        const bytes = decodeBase64(data);
        if (bytes) {
          try {
            return `[image: ${mime}, ${bytes.length} bytes; it shows: ${await describeImage(bytes, mime)}]`;
          } catch (error) {
            return `[image: ${mime}, ${bytes.length} bytes, not described: ${(error as Error)?.message ?? error}]`;
          }
        }
      }
      return `[image: ${mime}, ${size} bytes, not shown]`;
    }
    case "audio": {
      const mime = stringField(part, "mimeType") ?? "audio";
      return `[audio: ${mime}, ${base64Bytes(stringField(part, "data") ?? "")} bytes, not played]`;
    }
    case "resource": {
      const resource = part.resource as Record<string, unknown> | undefined;
      if (!resource || typeof resource !== "object") return "[resource]";
      const uri = typeof resource.uri === "string" ? resource.uri : "(no uri)";
      if (typeof resource.text === "string") return resource.text;
      const mime = typeof resource.mimeType === "string" ? `, ${resource.mimeType}` : "";
      const blob = typeof resource.blob === "string" ? `, ${base64Bytes(resource.blob)} bytes` : "";
      return `[resource: ${uri}${mime}${blob}, not shown]`;
    }
    case "resource_link": {
      const uri = stringField(part, "uri") ?? "(no uri)";
      const name = stringField(part, "name");
      return `[resource link: ${name ? `${name} ` : ""}${uri}]`;
    }
    default:
      return `[${String(part.type).slice(0, 40)} content, not shown]`;
  }
}

/** The leaf values of a JSON value (strings and numbers, at most `max`), for {@link carries}. */
function leaves(value: unknown, out: string[], max: number, depth = 0): boolean {
  if (out.length > max || depth > 16) return false;
  if (typeof value === "string") out.push(value);
  else if (typeof value === "number" || typeof value === "boolean") out.push(String(value));
  else if (Array.isArray(value)) return value.every((item) => leaves(item, out, max, depth + 1));
  else if (value && typeof value === "object") {
    return Object.values(value).every((item) => leaves(item, out, max, depth + 1));
  }
  return true;
}

/**
 * True when the text parts already say what `structured` holds: they are its JSON (what the spec asks servers to send
 * beside it), or every value in it appears in them (server-filesystem sends a file's text and `{content: <text>}`).
 */
function carries(texts: readonly string[], structured: Record<string, unknown>): boolean {
  if (!texts.length) return false;
  const json = JSON.stringify(structured);
  if (texts.some((text) => text.length <= 4 * json.length + 64 && sameJson(text, json))) return true;
  const values: string[] = [];
  if (!leaves(structured, values, 100)) return false;
  return values.length > 0 && values.every((value) => texts.some((text) => text.includes(value)));
}

function sameJson(text: string, json: string): boolean {
  try {
    return JSON.stringify(JSON.parse(text)) === json;
  } catch {
    return false;
  }
}

/**
 * A tool result as text for the model, at most `maxChars` characters plus a marker saying how much the server sent.
 *
 * @example
 * ```ts
 * await renderMcpResult({ content: [{ type: "text", text: "Echo: hi" }] }); // "Echo: hi"
 * await renderMcpResult({ content: [{ type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" }] });
 * // "[image: image/png, 8 bytes, not shown]"
 * await renderMcpResult({ content: [{ type: "text", text: "x".repeat(10) }] }, { maxChars: 4 });
 * // "xxxx\n[… cut: the MCP server sent 10 characters; homed kept the first 4]"
 * ```
 */
export async function renderMcpResult(result: McpCallResult, options: RenderOptions = {}): Promise<string> {
  const maxChars = options.maxChars ?? DEFAULT_MAX_RESULT_CHARS;
  const pieces: string[] = [];
  let kept = 0;
  let sent = 0;
  const add = (text: string) => {
    const joined = pieces.length ? `\n${text}` : text;
    sent += joined.length;
    if (kept >= maxChars) return;
    const piece = joined.length > maxChars - kept ? joined.slice(0, maxChars - kept) : joined;
    pieces.push(piece);
    kept += piece.length;
  };
  const texts: string[] = [];
  for (const part of result.content) {
    const text = await renderPart(part, options.describeImage);
    if (text === undefined) continue;
    if (part.type === "text") texts.push(text);
    add(text);
  }
  if (result.structuredContent && !carries(texts, result.structuredContent)) {
    add(JSON.stringify(result.structuredContent));
  }
  const body = pieces.join("");
  if (sent <= maxChars) return body;
  return `${body}\n[… cut: the MCP server sent ${sent} characters; homed kept the first ${maxChars}]`;
}

/**
 * The schema homed shows the model and checks arguments with: the server's, when homed's validator compiles it;
 * else the same with every keyword it cannot check removed (only ever a looser schema: a `not` that needed cutting
 * goes whole), so the model still sees the fields; else `{type: "object"}`. Either way the server validates too.
 *
 * @example
 * ```ts
 * parametersOf({ type: "object", properties: { path: { type: "string" } } }); // the same schema
 * parametersOf({ type: "object", properties: { when: { $ref: "#/$defs/time" } }, $defs: {} });
 * // { type: "object", properties: { when: {} } }
 * parametersOf({ type: "string" }); // { type: "object" }
 * ```
 */
export function parametersOf(schema: unknown): JsonSchema {
  const fits = (candidate: unknown): candidate is JsonSchema => {
    if (!candidate || typeof candidate !== "object" || Array.isArray(candidate)) return false;
    if ((candidate as JsonSchema).type !== "object") return false;
    try {
      compileSchema(candidate);
      return true;
    } catch {
      return false;
    }
  };
  if (fits(schema)) return schema;
  const loosened = loosen(schema);
  if (fits(loosened)) return loosened;
  return { type: "object" };
}

const SCHEMA_LISTS = new Set(["anyOf", "oneOf", "allOf"]);

/** The schema without keywords homed does not know; `undefined` when a `not` would have to change (it is dropped). */
function loosen(schema: unknown, depth = 0): unknown {
  if (depth > 32 || schema === null || typeof schema !== "object" || Array.isArray(schema)) {
    return typeof schema === "boolean" ? schema : {};
  }
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema as Record<string, unknown>)) {
    if (!knownSchemaKeyword(key)) continue;
    if (key === "properties" && value && typeof value === "object" && !Array.isArray(value)) {
      out[key] = Object.fromEntries(Object.entries(value).map(([name, sub]) => [name, loosen(sub, depth + 1)]));
    } else if ((key === "items" || key === "additionalProperties") && typeof value === "object" && value !== null) {
      out[key] = loosen(value, depth + 1);
    } else if (SCHEMA_LISTS.has(key) && Array.isArray(value)) {
      out[key] = value.map((sub) => loosen(sub, depth + 1));
    } else if (key === "not") {
      // Loosening inside `not` would tighten the whole; keep it only when it needs no change.
      try {
        compileSchema(value);
        out[key] = value;
      } catch {
        // dropped: looser
      }
    } else {
      out[key] = value;
    }
  }
  return out;
}

/** Options of {@link mcpTools}. */
export interface McpToolsOptions {
  server: McpServerConfig;
  listed: readonly McpListedTool[];
  /** Calls the server's tool `name`; rejects with a message for the model when the call could not be made. */
  call(name: string, args: Record<string, unknown>, context: ToolContext): Promise<McpCallResult>;
  describeImage?: DescribeImage;
  maxResultChars?: number;
}

/** What {@link mcpTools} gives: the tools, and which server tool each one is. */
export interface McpToolSet {
  tools: Tool[];
  /** homed's name and the server's, in the server's order. */
  names: { name: string; mcp_name: string }[];
}

/**
 * The homed tools for a server's listed tools, `include`/`exclude` applied (exact names; an empty `include` takes
 * all). Two server tools whose homed names would clash (`a.b` and `a_b`) both stay, the later one with a hash suffix.
 *
 * @example
 * ```ts
 * import type { McpServerConfig } from "../config/mcp_servers.ts";
import type { Trust } from "../identity/trust.ts";
 *
 * declare const server: McpServerConfig; // name "everything", trust "household"
 * const { tools } = mcpTools({
 *   server,
 *   listed: [{ name: "echo", description: "Echoes back the input", inputSchema: { type: "object" } }],
 *   call: () => Promise.resolve({ content: [{ type: "text", text: "Echo: hi" }] }),
 * });
 * tools[0]?.name; // "mcp__everything__echo"
 * tools[0]?.allow; // "household"
 * ```
 */
export function mcpTools(options: McpToolsOptions): McpToolSet {
  const { server } = options;
  const include = new Set(server.include);
  const exclude = new Set(server.exclude);
  const taken = new Set<string>();
  const tools: Tool[] = [];
  const names: McpToolSet["names"] = [];
  for (const listed of options.listed) {
    if (include.size && !include.has(listed.name)) continue;
    if (exclude.has(listed.name)) continue;
    let name = mcpToolName(server.name, listed.name);
    if (taken.has(name)) name = mcpToolName(server.name, listed.name, { hashed: true });
    if (taken.has(name)) continue; // the same tool listed twice
    taken.add(name);
    const about = listed.description ?? listed.title ?? listed.name;
    const description = untrustedLine(`[MCP server ${server.name}] ${about}`).slice(0, MAX_DESCRIPTION);
    const mcpName = listed.name;
    const tool: Tool = {
      name,
      description,
      parameters: parametersOf(listed.inputSchema),
      allow: server.trust,
      execute: async (args, context) => {
        const result = await options.call(mcpName, args, context);
        const text = await renderMcpResult(result, {
          ...(options.maxResultChars !== undefined ? { maxChars: options.maxResultChars } : {}),
          ...(options.describeImage ? { describeImage: options.describeImage } : {}),
        });
        // The tool's own failure: the registry makes it an error result, with the tool's words.
        if (result.isError) throw new Error(text || `MCP server "${server.name}" reported an error without a message`);
        return text;
      },
    };
    if (server.timeout !== undefined) tool.timeoutMs = server.timeout;
    tool.effect = mcpEffect(listed);
    tool.resultTrust = mcpResultTrust(server, listed);
    tools.push(tool);
    names.push({ name, mcp_name: mcpName });
  }
  return { tools, names };
}

/**
 * A listed tool's effect class for homed's policy, from the server's annotations: `destructiveHint: true` is
 * `sensitive` (the owner's yes), `readOnlyHint: true` is `read`, anything else — an unmarked tool included — `act`.
 * A destructive mark wins over a read-only one: hints from a server are used to be stricter, never looser.
 *
 * @example
 * ```ts
 * mcpEffect({ name: "delete_file", inputSchema: {}, annotations: { destructiveHint: true } }); // "sensitive"
 * mcpEffect({ name: "read_file", inputSchema: {}, annotations: { readOnlyHint: true } }); // "read"
 * mcpEffect({ name: "echo", inputSchema: {} }); // "act"
 * ```
 */
export function mcpEffect(listed: McpListedTool): ToolEffect {
  if (listed.annotations?.destructiveHint === true) return "sensitive";
  if (listed.annotations?.readOnlyHint === true) return "read";
  return "act";
}

/**
 * Whose words a tool's result carries, for the turn's taint: a tool that reaches the open world (`openWorldHint`,
 * which MCP takes to be true when a server does not say) brings a stranger's text, as a guest's; otherwise the
 * server's own, at the trust its config gives it (`anyone`: a guest's).
 *
 * @example
 * ```ts
 * import { serverConfig } from "./testdata/servers.ts";
 *
 * const files = serverConfig("files", { trust: "household" });
 * mcpResultTrust(files, { name: "read", inputSchema: {}, annotations: { openWorldHint: false } }); // "household"
 * mcpResultTrust(files, { name: "fetch", inputSchema: {} }); // "guest"
 * ```
 */
export function mcpResultTrust(server: Pick<McpServerConfig, "trust">, listed: McpListedTool): Trust {
  if (listed.annotations?.openWorldHint !== false) return "guest";
  return server.trust === "anyone" ? "guest" : server.trust;
}
