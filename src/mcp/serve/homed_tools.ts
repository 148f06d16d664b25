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
import { type Clock, systemClock } from "../../clock.ts";
import { MCP_ANSWER_WITHIN_MS, MCP_PROGRESS_EVERY_MS, registerChatTool } from "./chat_tool.ts";
import { ChatTurns } from "./chat_turns.ts";
import { guardToolRequests } from "./tool_request_guard.ts";
import { errorResult, textResult } from "./tool_result.ts";

export { MCP_ANSWER_WITHIN_MS, MCP_PROGRESS_EVERY_MS, MCP_TEXT_MAX_CHARS } from "./chat_tool.ts";

/** What a chat call may ask of the access besides the text. */
export interface ChatOptions {
  /** Called with each piece of the reply's text as the butler writes it (for an answer before the turn ends). */
  onText?: (delta: string) => void;
  /**
   * Aborts when nobody waits for the reply any more (`homed mcp serve` ending): the access may stop waiting. The turn
   * itself goes on in the conversation.
   */
  signal?: AbortSignal;
}

/**
 * What the tools reach: the butler, as one person. Each call may throw; the error's message is what the MCP client
 * sees (so it should say what went wrong in words a person acts on, as the daemon's refusals do).
 */
export interface ButlerAccess {
  /** Sends `text` into the household's one conversation, as the person this access belongs to; the butler's reply. */
  chat(text: string, options?: ChatOptions): Promise<{ reply: string; channel: string }>;
  /** Layer-2 memory documents best matching `query` (at most `k`), as JSON. */
  recall(query: string, k?: number): Promise<unknown>;
  /** Knowledge-base sections best matching `query` (at most `k`), as JSON. */
  searchKnowledge(query: string, k?: number): Promise<unknown>;
  /** The active reminders and schedules this person may see, as JSON. */
  schedules(): Promise<unknown>;
}

/** Longest lookup query, in characters: the daemon refuses a longer `q`. */
export const MCP_QUERY_MAX_CHARS = 500;
/** Most results one lookup asks for (the daemon allows 50; an assistant's context is better served by fewer). */
export const MCP_K_MAX = 20;

/** The tools' names, in the order they are listed. */
export const HOMED_TOOL_NAMES = ["chat", "memory_recall", "knowledge_search", "schedule_list"] as const;

// Strict objects: a misspelt argument ("limit" for "k") is an error the model sees, not a silent default.
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
  "use chat to ask or tell the butler something in words (it may act on it, as the person this connection belongs to);",
  "a long turn is answered in time with its reply so far and a turn_id, to pass to chat again for the rest.",
  "What you may see and do follows that person's trust level, as homed's own channels do.",
].join(" ");

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

/** Options of {@link createHomedMcpServer}. */
export interface HomedMcpOptions {
  /** homed's version, shown to clients. */
  version: string;
  /**
   * Where chat turns are kept between calls: the daemon's `/mcp` shares one set among its per-request servers. A set
   * of this server's own by default.
   */
  turns?: ChatTurns;
  /** Whose turns this server's calls are, in `turns` (the caller's identity); "" by default. */
  caller?: string;
  /** The longest a `chat` call waits for the turn, in milliseconds ({@link MCP_ANSWER_WITHIN_MS}). */
  answerWithinMs?: number;
  /** Time between progress notifications of a `chat` call with a progress token ({@link MCP_PROGRESS_EVERY_MS}). */
  progressEveryMs?: number;
  /** Where the timers come from; the system clock by default. */
  clock?: Pick<Clock, "after" | "monotonic">;
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
export function createHomedMcpServer(access: ButlerAccess, options: HomedMcpOptions): McpServer {
  const clock = options.clock ?? systemClock;
  const server = new McpServer(
    { name: "homed", title: "homed, the household's butler", version: options.version },
    // No call of these tools has more than two arguments; a payload of thousands is refused before it is parsed.
    { instructions: INSTRUCTIONS, maxToolInputElements: 16 },
  );

  registerChatTool(server, access, {
    turns: options.turns ?? new ChatTurns({ clock }),
    caller: options.caller ?? "",
    answerWithinMs: options.answerWithinMs ?? MCP_ANSWER_WITHIN_MS,
    progressEveryMs: options.progressEveryMs ?? MCP_PROGRESS_EVERY_MS,
    clock,
  });

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

  guardToolRequests(server, HOMED_TOOL_NAMES);
  return server;
}
