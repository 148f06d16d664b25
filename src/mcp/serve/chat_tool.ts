/**
 * homed's `chat` tool: a message into the household's one conversation, answered within a bound. An MCP client gives
 * up on a request after its timeout (the SDK's is 60 s, and it does not reset on progress unless the client asks it
 * to), while a turn with tools can take longer. So the tool answers within `answerWithinMs` (50 s) in any case: with
 * the whole reply when the turn ended, else with the text streamed so far and the turn's id, which a later `chat`
 * call passes as `turn_id` to wait (again within the bound) for the rest. The turn goes on meanwhile, and its reply
 * is kept ({@link ChatTurns}). A request with a progress token also gets a progress notification every
 * `progressEveryMs` (10 s) while it waits: a client that resets its timeout on progress sees the butler is working.
 *
 * @module
 */

// The SDK's "./*" export maps `x.js` to types at `x.js.d.ts`, which do not exist: without @ts-types naming
// `x.d.ts`, Deno types every import from it as `any`.
// @ts-types="@modelcontextprotocol/sdk/server/mcp"
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { Clock } from "../../clock.ts";
import type { ChatTurns, TurnState } from "./chat_turns.ts";
import type { ButlerAccess } from "./homed_tools.ts";
import { errorResult, textResult } from "./tool_result.ts";

/** Longest `chat` message, in characters: the daemon's own limit for a chat request (`MAX_TEXT_CHARS`). */
export const MCP_TEXT_MAX_CHARS = 32_000;
/** How long one `chat` call waits for the turn before answering with what is known: 10 s inside the SDK's 60 s. */
export const MCP_ANSWER_WITHIN_MS = 50_000;
/** How often a `chat` call with a progress token reports that the butler is still working. */
export const MCP_PROGRESS_EVERY_MS = 10_000;
/** Longest `turn_id` accepted (homed's are UUIDs, 36 characters). */
const TURN_ID_MAX_CHARS = 100;

/** What {@link registerChatTool} needs besides the access. */
export interface ChatToolOptions {
  /** Where turns are kept between calls. */
  turns: ChatTurns;
  /** Whose turns these are in `turns` (the identity's name in the daemon; "" for `homed mcp serve`'s one client). */
  caller: string;
  /** The longest one call waits for a turn, in milliseconds ({@link MCP_ANSWER_WITHIN_MS}). */
  answerWithinMs: number;
  /** Time between progress notifications, in milliseconds ({@link MCP_PROGRESS_EVERY_MS}). */
  progressEveryMs: number;
  /** Where the timers come from. */
  clock: Pick<Clock, "after" | "monotonic">;
}

// Strict: a misspelt argument is an error the model sees. text or turn_id, one of them: the handler checks that,
// as JSON Schema's oneOf is not something every client shows its model.
const chatInput = z.strictObject({
  text: z.string().min(1).max(MCP_TEXT_MAX_CHARS).regex(/\S/, "Must not be blank").optional().describe(
    `The message to the butler, as you would say it (at most ${MCP_TEXT_MAX_CHARS} characters).`,
  ),
  turn_id: z.string().min(1).max(TURN_ID_MAX_CHARS).optional().describe(
    "Instead of text: the turn_id of an earlier chat answer that said the butler was still working. Waits for that " +
      "turn's reply (it is not sent again).",
  ),
});

/** Seconds, rounded, for a person to read. */
const seconds = (ms: number) => Math.round(ms / 1000);

/** The answer for where a turn is. */
function answerOf(state: TurnState, options: ChatToolOptions): CallToolResult {
  if (state.state === "done") {
    return textResult(state.reply.trim() === "" ? "(The butler gave no reply.)" : state.reply);
  }
  if (state.state === "failed") return errorResult(new Error(state.error));
  const lines = [
    `The butler is still working on this (${seconds(state.elapsedMs)} s so far); homed answers within ` +
    `${seconds(options.answerWithinMs)} s so that your call does not time out.`,
  ];
  if (state.textSoFar.trim() !== "") lines.push(`Its reply so far:\n\n${state.textSoFar}\n`);
  lines.push(
    `To get the rest, call chat again with turn_id "${state.id}" and no text: it waits for the reply, which homed ` +
      `keeps for ${Math.round(options.turns.keepMs / 60_000)} minutes after the turn ends.`,
  );
  return textResult(lines.join("\n"));
}

/** Calls `report` every `everyMs` (with 1, 2, …) until the returned function is called. */
function every(clock: Pick<Clock, "after">, everyMs: number, report: (count: number) => void): () => void {
  let count = 0;
  let cancel = () => {};
  const tick = () => {
    report(++count);
    cancel = clock.after(everyMs, tick);
  };
  cancel = clock.after(everyMs, tick);
  return () => cancel();
}

/**
 * Registers `chat` on `server`, sending messages through `access`.
 *
 * @example
 * ```ts
 * // @ts-types="@modelcontextprotocol/sdk/server/mcp"
 * import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
 * import { systemClock } from "../../clock.ts";
 * import { ChatTurns } from "./chat_turns.ts";
 * import type { ButlerAccess } from "./homed_tools.ts";
 *
 * declare const access: ButlerAccess;
 * const server = new McpServer({ name: "homed", version: "1.0.0" });
 * registerChatTool(server, access, {
 *   turns: new ChatTurns(),
 *   caller: "alice",
 *   answerWithinMs: MCP_ANSWER_WITHIN_MS,
 *   progressEveryMs: MCP_PROGRESS_EVERY_MS,
 *   clock: systemClock,
 * });
 * ```
 */
export function registerChatTool(server: McpServer, access: ButlerAccess, options: ChatToolOptions): void {
  const { turns, caller, clock } = options;
  server.registerTool("chat", {
    title: "Chat with the butler",
    description: "Sends a message into the household's one conversation with homed, the butler, as the person this " +
      "connection belongs to, and returns the butler's reply. The butler may act on it (devices, reminders, messages " +
      `to the household) within that person's trust. A turn can take a while: when it is not done within ` +
      `${seconds(options.answerWithinMs)} s the answer says so, with the reply so far and a turn_id; call chat ` +
      "again with that turn_id (and no text) to wait for the rest.",
    inputSchema: chatInput,
    annotations: { readOnlyHint: false, idempotentHint: false, openWorldHint: true },
  }, async ({ text, turn_id: turnId }, extra) => {
    if (text === undefined && turnId === undefined) {
      return errorResult(
        new Error("chat needs text (a message to the butler) or turn_id (an earlier turn to wait for)"),
      );
    }
    if (text !== undefined && turnId !== undefined) {
      return errorResult(
        new Error("chat takes text or turn_id, not both: text sends a new message, turn_id waits for an earlier reply"),
      );
    }
    const id = turnId ??
      turns.start(caller, async (onText, signal) => (await access.chat(text!, { onText, signal })).reply);
    const token = extra._meta?.progressToken;
    const started = clock.monotonic();
    const stopReporting = token === undefined ? () => {} : every(clock, options.progressEveryMs, (count) => {
      const message = `The butler is still working (${seconds(clock.monotonic() - started)} s so far; turn_id "${id}")`;
      // A notification that cannot be sent (the client went away) changes nothing for the turn.
      extra.sendNotification({
        method: "notifications/progress",
        params: { progressToken: token, progress: count, message },
      })
        .catch(() => {});
    });
    try {
      // The client's cancellation (extra.signal) ends the wait, not the turn: its reply is kept for a later call.
      return answerOf(await turns.wait(caller, id, options.answerWithinMs, extra.signal), options);
    } catch (error) {
      return errorResult(error);
    } finally {
      stopReporting();
    }
  });
}
