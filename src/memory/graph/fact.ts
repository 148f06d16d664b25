/**
 * The graph's vocabulary: an entity, a fact, a fact to record and what recording it did. Its own module so the
 * graph's reads, its writes and their callers share the types without depending on each other.
 *
 * @module
 */

import type { Trust } from "../../identity/trust.ts";
import type { HeardIn } from "./heard.ts";

/** An entity. */
export interface Entity {
  id: number;
  name: string;
  type: string;
  aliases: string[];
  mentions: number;
  firstSeen: number;
  lastSeen: number;
}

/** A fact. `validTo` is null while it holds. */
export interface Fact {
  id: number;
  subject: string;
  subjectType: string;
  predicate: string;
  object: string;
  provenance: string[];
  validFrom: number;
  validTo: number | null;
  /** Who corrected it by hand ({@linkcode GraphStore.correct}): set on the fact a correction made, absent otherwise. */
  correctedBy?: string;
  /**
   * Who said it, as their channel named them (the most trusted of those who said it; who corrected it for a
   * correction); `""` when not known (facts from before schema 8, facts from the configuration).
   */
  saidBy: string;
  /** Their trust; facts from before schema 8 are the household's. */
  trust: Trust;
  /** The messages it was learnt from, as who may read them; `[]`: the household's (see {@link factVisibleTo}). */
  heard: HeardIn[];
}

/** A fact to record. */
export interface FactDraft {
  subject: { name: string; type: string };
  predicate: string;
  object: string;
  /** When it was said (ms since the epoch). */
  time: number;
  /** Input event ids it comes from. */
  provenance: string[];
  /** The predicate holds one value at a time (a location, a state): a different value closes the old fact. */
  single: boolean;
  /** Who said it (the sender, as their channel named them); absent: not known (e.g. the configuration). */
  saidBy?: string;
  /** Their trust; absent: the household's (what homed learns from its configuration). */
  trust?: Trust;
  /** The messages it was learnt from (see {@link HeardIn}); absent or empty: the household's. */
  heard?: readonly HeardIn[];
}

/**
 * What recording a fact did. `"refused"`: a guest's new value of a single-valued predicate that a household member
 * or the owner said — nothing was recorded (see `graph_store.ts`'s description).
 */
export type FactOutcome = "added" | "confirmed" | "replaced" | "refused";

/** A guest's claim the graph did not record: the draft, and the holding fact it would have replaced. */
export interface Refusal {
  draft: FactDraft;
  held: Fact;
}

/**
 * The provenance entry of a fact corrected by hand by `who` (an identity's name).
 *
 * @example
 * ```ts
 * correctedByTag("owner"); // "corrected by owner"
 * ```
 */
export function correctedByTag(who: string): string {
  return `corrected by ${who}`;
}
