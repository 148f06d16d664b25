/**
 * Who may read a fact: the messages it was learnt from (`heard`, schema 10), each as who may read it. Kept apart from
 * the graph's reads and writes because recall, the prompt index and the console all ask it of facts they hold.
 *
 * @module
 */

import { type Provenance, type Viewer, visibleTo } from "../../identity/visibility.ts";
import type { Fact } from "./fact.ts";

/**
 * One message a fact was learnt from, as who may read it (`identity/visibility.ts`): its event, channel, sender and
 * their trust. A fact's `heard` lists them (schema 10); an empty list is the household's (facts from before, from the
 * configuration, and every fact also learnt where the household could read it).
 */
export interface HeardIn extends Provenance {
  event: string;
}

/** Read by the owner alone: what is left of a fact's origin once the messages it was heard in are forgotten. */
export const OWNER_ONLY: HeardIn = { event: "", source: "owner-only", sender: "", trust: "owner" };

/**
 * May `viewer` read `fact`? The owner reads every fact, a guest none (a fact merges what everyone said about an
 * entity), a household member those learnt in at least one message they may read — or the household's.
 *
 * @example
 * ```ts
 * import type { Fact } from "./fact.ts";
 *
 * declare const fact: Fact;
 * factVisibleTo({ sender: "alice", trust: "household" }, fact);
 * ```
 */
export function factVisibleTo(viewer: Viewer, fact: Pick<Fact, "heard">): boolean {
  if (viewer.trust === "owner") return true;
  if (viewer.trust !== "household") return false;
  return fact.heard.length === 0 || fact.heard.some((heard) => visibleTo(viewer, heard));
}

/**
 * The union of two origins (`[]`: the household's, which takes in any other).
 *
 * @example
 * ```ts
 * const group = { event: "e1", source: "qq:group:1", sender: "alice", trust: "household" as const };
 * unionHeard([group], []); // []: the household's
 * ```
 */
export function unionHeard(a: readonly HeardIn[], b: readonly HeardIn[]): HeardIn[] {
  if (!a.length || !b.length) return [];
  const all = new Map<string, HeardIn>();
  for (const heard of [...a, ...b]) all.set(JSON.stringify([heard.event, heard.source, heard.sender]), heard);
  return [...all.values()];
}

/**
 * A `heard` column read back; text that is not a JSON list leaves the fact to the owner alone.
 *
 * @example
 * ```ts
 * parseHeard("[]"); // []: the household's
 * parseHeard("not json"); // [OWNER_ONLY]
 * ```
 */
export function parseHeard(text: unknown): HeardIn[] {
  try {
    const parsed = JSON.parse(String(text ?? "[]")) as unknown;
    return Array.isArray(parsed) ? parsed as HeardIn[] : [OWNER_ONLY];
  } catch {
    return [OWNER_ONLY];
  }
}
