/**
 * The English multi-session conversation set's shape and loader (`conversation_set.json`, made by
 * `make_conversation_set.ts`).
 *
 * @module
 */

/** A question's kind: what it asks of recall (see make_conversation_set.ts). */
export type ConversationCategory = "reply" | "person" | "time" | "plain";

/** One turn of a session. */
export interface ConversationTurn {
  id: string;
  speaker: string;
  text: string;
  /** ISO date-time the turn was said. */
  time: string;
}

/** A question and the turns that answer it. */
export interface ConversationQuestion {
  id: string;
  text: string;
  gold: string[];
  category: ConversationCategory;
  /** `tune`: parameters may be fitted on it; `test`: report only. */
  split: "tune" | "test";
}

/** The whole set. */
export interface ConversationSet {
  summary: Record<string, number>;
  speakers: string[];
  sessions: Array<{ id: string; time: string; turns: ConversationTurn[] }>;
  questions: ConversationQuestion[];
}

/**
 * Reads the committed set.
 *
 * @example
 * ```ts
 * const set = await loadConversationSet();
 * set.sessions.flatMap((session) => session.turns).length; // 337
 * ```
 */
export async function loadConversationSet(): Promise<ConversationSet> {
  return JSON.parse(await Deno.readTextFile(new URL("./conversation_set.json", import.meta.url))) as ConversationSet;
}
