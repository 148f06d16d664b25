/**
 * homed as an MCP server: the four tools other assistants (desktop agents, editors) call to ask the butler what it
 * knows — `chat`, `memory_recall`, `knowledge_search` and `schedule_list`. The tools only describe and check; the work
 * is done by an injected {@link ButlerAccess}, so the same server runs inside the daemon (direct calls, as the identity
 * its auth resolved) and in `homed mcp serve` (HTTP calls to the daemon, as the token's holder). Either way the trust
 * rules are the daemon's: a guest's `memory_recall` is refused there, and the refusal comes back as the tool's error.
 *
 * @module
 */

// The SDK's "./*" export maps `x.js` to types at `x.js.d.ts`, which do not exist: without @ts-types naming
// `x.d.ts`, Deno types every import from it as `any`.
// @ts-types="@modelcontextprotocol/sdk/server/mcp"
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";

/**
 * What the tools reach: the butler, as one person. Each call may throw; the error's message is what the MCP client
 * sees (so it should say what went wrong in words a person acts on, as the daemon's refusals do).
 */
export interface ButlerAccess {
  /** Sends `text` into the household's one conversation, as the person this access belongs to; the butler's reply. */
  chat(text: string): Promise<{ reply: string; channel: string }>;
  /** Layer-2 memory documents best matching `query` (at most `k`), as JSON. */
  recall(query: string, k?: number): Promise<unknown>;
  /** Knowledge-base sections best matching `query` (at most `k`), as JSON. */
  searchKnowledge(query: string, k?: number): Promise<unknown>;
  /** The active reminders and schedules this person may see, as JSON. */
  schedules(): Promise<unknown>;
}

/** Longest `chat` message, in characters: the daemon's own limit for a chat request (`MAX_TEXT_CHARS`). */
export const MCP_TEXT_MAX_CHARS = 32_000;
/** Longest lookup query, in characters: the daemon refuses a longer `q`. */
export const MCP_QUERY_MAX_CHARS = 500;
/** Most results one lookup asks for (the daemon allows 50; an assistant's context is better served by fewer). */
export const MCP_K_MAX = 20;

/** The tools' names, in the order they are listed. */
export const HOMED_TOOL_NAMES = ["chat", "memory_recall", "knowledge_search", "schedule_list"] as const;

// Strict objects: a misspelt argument ("limit" for "k") is an error the model sees, not a silent default.
const chatInput = z.strictObject({
  text: z.string().min(1).max(MCP_TEXT_MAX_CHARS).regex(/\S/, "Must not be blank").describe(
    `The message to the butler, as you would say it (at most ${MCP_TEXT_MAX_CHARS} characters).`,
  ),
});

const lookupInput = (what: string) =>
  z.strictObject({
    query: z.string().min(1).max(MCP_QUERY_MAX_CHARS).regex(/\S/, "Must not be blank").describe(
      `What to look for in ${what}: a few words or a question (at most ${MCP_QUERY_MAX_CHARS} characters).`,
    ),
    k: z.number().int().min(1).max(MCP_K_MAX).optional().describe(
      `How many results at most, 1 to ${MCP_K_MAX} (default 5).`,
    ),
  });

const INSTRUCTIONS = [
  "homed is a household's butler: it runs the home, keeps reminders and remembers what the household told it.",
  "Use memory_recall, knowledge_search and schedule_list to look things up without disturbing anyone;",
  "use chat to ask or tell the butler something in words (it may act on it, as the person this connection belongs to).",
  "What you may see and do follows that person's trust level, as homed's own channels do.",
].join(" ");

/** A tool's answer as text. */
function textResult(text: string): CallToolResult {
  return { content: [{ type: "text", text }] };
}

/** A failure as the tool's answer, so the model reads why (an MCP protocol error would only tell the client). */
function errorResult(error: unknown): CallToolResult {
  const message = error instanceof Error ? error.message : String(error);
  return { content: [{ type: "text", text: message || "The butler failed without saying why" }], isError: true };
}

/** Runs a tool's work, turning a throw into an `isError` result. */
async function answer(work: () => Promise<string>): Promise<CallToolResult> {
  try {
    return textResult(await work());
  } catch (error) {
    return errorResult(error);
  }
}

/** JSON for a model to read: pretty-printed; `undefined` (nothing came back) as `null`. */
function json(value: unknown): string {
  return JSON.stringify(value ?? null, null, 2);
}

/**
 * The MCP server with homed's four tools, calling `access`. Not yet connected: hand it a transport (`connect`).
 *
 * @example
 * ```ts
 * // @ts-types="@modelcontextprotocol/sdk/inMemory"
 * import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
 * import { VERSION } from "../../version.ts";
 *
 * const access: ButlerAccess = {
 *   chat: (text) => Promise.resolve({ reply: `You said: ${text}`, channel: "http" }),
 *   recall: () => Promise.resolve([]),
 *   searchKnowledge: () => Promise.resolve([]),
 *   schedules: () => Promise.resolve([]),
 * };
 * const server = createHomedMcpServer(access, { version: VERSION });
 * const [serverSide] = InMemoryTransport.createLinkedPair();
 * await server.connect(serverSide);
 * ```
 */
export function createHomedMcpServer(access: ButlerAccess, info: { version: string }): McpServer {
  const server = new McpServer(
    { name: "homed", title: "homed, the household's butler", version: info.version },
    // No call of these tools has more than two arguments; a payload of thousands is refused before it is parsed.
    { instructions: INSTRUCTIONS, maxToolInputElements: 16 },
  );

  server.registerTool("chat", {
    title: "Chat with the butler",
    description: "Sends a message into the household's one conversation with homed, the butler, as the person this " +
      "connection belongs to, and returns the butler's reply. The butler may act on it (devices, reminders, messages " +
      "to the household) within that person's trust; the turn can take a while when it does.",
    inputSchema: chatInput,
    annotations: { readOnlyHint: false, idempotentHint: false, openWorldHint: true },
  }, ({ text }) =>
    answer(async () => {
      const { reply } = await access.chat(text);
      return reply.trim() === "" ? "(The butler gave no reply.)" : reply;
    }));

  server.registerTool("memory_recall", {
    title: "Recall from the household's memory",
    description: "Looks up what the household told the butler: its long-term memory documents best matching the " +
      "query, with their summary, text, when and from whom they came, and a score. Household members and the owner " +
      "only; a guest is refused. Returns JSON.",
    inputSchema: lookupInput("the household's memory"),
    annotations: { readOnlyHint: true, openWorldHint: false },
  }, ({ query, k }) => answer(async () => json(await access.recall(query, k))));

  server.registerTool("knowledge_search", {
    title: "Search the knowledge base",
    description: "Searches homed's knowledge base (the household's notes: appliances, routines, how-tos) and returns " +
      "the best matching sections with their topic, heading, a snippet and a score. Returns JSON.",
    inputSchema: lookupInput("the knowledge base"),
    annotations: { readOnlyHint: true, openWorldHint: false },
  }, ({ query, k }) => answer(async () => json(await access.searchKnowledge(query, k))));

  server.registerTool("schedule_list", {
    title: "List reminders and schedules",
    description: "Lists the active reminders and schedules with their text, next run (UTC and local), creator and " +
      "channel: all of them for the owner, one's own for everyone else. Returns JSON.",
    inputSchema: z.strictObject({}),
    annotations: { readOnlyHint: true, openWorldHint: false },
  }, () => answer(async () => json(await access.schedules())));

  return server;
}
