/**
 * Where an utterance sits in its conversation, from the journal's recent entries: what was said just before it (a
 * document's context field) and which conversation it belongs to (recall fuses a conversation's score in).
 *
 * @module
 */

import type { MemoryEntry } from "../text/text_memory.ts";

/** What was said longer ago than this before a message is not its context. */
export const CONTEXT_GAP_MS = 30 * 60_000;

/**
 * The text said just before the utterance of `eventId`, in the same chat and at most {@link CONTEXT_GAP_MS} earlier —
 * a document's context field — or `undefined`.
 *
 * @example
 * ```ts
 * import type { MemoryEntry } from "../text/text_memory.ts";
 *
 * const said: MemoryEntry[] = [
 *   { eventId: "e6", time: 0, role: "user", source: "http", sender: "anna", text: "Has anyone seen the passport?" },
 *   { eventId: "e7", time: 60_000, role: "user", source: "http", sender: "leo", text: "Top drawer." },
 * ];
 * saidBefore(said, "e7"); // { text: "Has anyone seen the passport?", eventId: "e6" }
 * ```
 */
export function saidBefore(
  said: readonly MemoryEntry[],
  eventId: string | undefined,
): { text: string; eventId: string } | undefined {
  const at = said.findIndex((entry) => entry.eventId === eventId && entry.role === "user");
  const own = said[at];
  if (!own) return undefined;
  for (let i = at - 1; i >= 0; i--) {
    const entry = said[i]!;
    if (own.time - entry.time > CONTEXT_GAP_MS) return undefined;
    if (entry.source === own.source && entry.eventId !== eventId) return { text: entry.text, eventId: entry.eventId };
  }
  return undefined;
}

/**
 * The conversation the utterance of `eventId` belongs to: the first event of its run of turns in the same chat, each
 * at most {@link CONTEXT_GAP_MS} after the one before; the event itself when it is not in `said`.
 *
 * @example
 * ```ts
 * import type { MemoryEntry } from "../text/text_memory.ts";
 *
 * const entry = (eventId: string, minute: number): MemoryEntry =>
 *   ({ eventId, time: minute * 60_000, role: "user", source: "http", sender: "anna", text: "hello" });
 * const said = [entry("e4", 0), entry("e5", 120), entry("e6", 122), entry("e7", 125)];
 * sessionOf(said, "e7"); // "e5": e5, e6 and e7 were said in the same chat, minutes apart; e4 two hours before
 * ```
 */
export function sessionOf(said: readonly MemoryEntry[], eventId: string | undefined): string | undefined {
  let at = said.findIndex((entry) => entry.eventId === eventId);
  if (at === -1) return eventId;
  const { source } = said[at]!;
  let session = said[at]!.eventId;
  for (let i = at - 1; i >= 0; i--) {
    const entry = said[i]!;
    if (entry.source !== source) continue;
    if (said[at]!.time - entry.time > CONTEXT_GAP_MS) break;
    session = entry.eventId;
    at = i;
  }
  return session;
}
