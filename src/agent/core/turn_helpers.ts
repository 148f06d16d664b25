/**
 * Small pure helpers of a turn: who reads its prompt, what contributors see of it, and the model's tool calls made
 * safe for history. Apart from `agent.ts` because they hold no state of the agent.
 *
 * @module
 */

import type { ContextEntry } from "../../context/context_window.ts";
import type { InputEvent } from "../../io/event.ts";
import { type Viewer, visibleTo } from "../../identity/visibility.ts";
import type { Dispatch, HistoryEntry, PromptContributor, PromptInput } from "../../prompt/contributor.ts";
import type { ToolCall } from "../../provider/provider.ts";

/** The message as contributors see it: its words, where and when it came, who said it and their trust. */
export function promptInput(event: InputEvent, text: string): PromptInput {
  return { text, source: event.source, sender: event.sender, time: event.time, trust: event.trust };
}

/** Who reads a turn's prompt: its sender, with their trust. */
export function viewerOf(event: InputEvent): Viewer {
  return { sender: event.sender, trust: event.trust };
}

/** The context entries `viewer` may read (`identity/visibility.ts`); an exchange's entries share their origin. */
export function readableBy(viewer: Viewer): (entry: ContextEntry) => boolean {
  return (entry) => visibleTo(viewer, entry);
}

/** A context entry as contributors see it. */
export function historyEntry(entry: ContextEntry): HistoryEntry {
  const { message } = entry;
  return {
    role: message.role === "system" ? "user" : message.role,
    text: message.content ?? "",
    eventId: entry.eventId,
    time: entry.time,
    source: entry.source,
    sender: entry.sender,
  };
}

/** The call as history may keep it: arguments that are not a JSON object (model output is untrusted) become `{}`. */
export function acceptableArguments(call: ToolCall): ToolCall {
  try {
    const parsed: unknown = JSON.parse(call.function.arguments);
    if (parsed !== null && typeof parsed === "object" && !Array.isArray(parsed)) return call;
  } catch {
    // Not JSON: replaced below.
  }
  return { ...call, function: { ...call.function, arguments: "{}" } };
}

/** Makes tool-call ids unique within one answer, so each gets exactly one result. */
export function uniqueIds(calls: readonly ToolCall[]): ToolCall[] {
  const seen = new Set<string>();
  return calls.map((call) => {
    let id = call.id;
    for (let n = 2; seen.has(id); n++) id = `${call.id}_${n}`;
    seen.add(id);
    return id === call.id ? call : { ...call, id };
  });
}

/**
 * The reply of the round that ends the turn: the model's words, with a note when the rounds ran out before its
 * tool calls (`note`, also streamed), or a visible placeholder when it said nothing.
 *
 * @example
 * ```ts
 * finalReply("", 2, 10).reply; // "(Stopped after 10 rounds of tool use; 2 further tool calls were not run.)"
 * finalReply("  ", 0, 10).reply; // "(The model returned an empty answer.)"
 * ```
 */
export function finalReply(
  content: string,
  unrunCalls: number,
  maxToolRounds: number,
): { reply: string; note?: string } {
  if (unrunCalls) {
    const note = `(Stopped after ${maxToolRounds} rounds of tool use; ${unrunCalls} further ` +
      `tool call${unrunCalls === 1 ? " was" : "s were"} not run.)`;
    const reply = content.trim() ? `${content}\n\n${note}` : note;
    return { reply, note };
  }
  return { reply: content.trim() === "" ? "(The model returned an empty answer.)" : content };
}

/**
 * The first command a contributor dispatches past the model for what the person wrote, or undefined.
 *
 * @example
 * ```ts
 * import type { PromptInput } from "../../prompt/contributor.ts";
 *
 * declare const input: PromptInput; // the owner's "yes" with one action waiting
 * dispatchFor([], input); // undefined: no contributor, no dispatch
 * ```
 */
export function dispatchFor(
  contributors: readonly PromptContributor[] | undefined,
  input: PromptInput,
): Dispatch | undefined {
  for (const contributor of contributors ?? []) {
    const dispatch = contributor.dispatch?.(input);
    if (dispatch) return dispatch;
  }
  return undefined;
}
