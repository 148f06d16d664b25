/**
 * Facts as the console's memory API shows them (`/api/memory/graph`, corrections, the export): each with its row id,
 * who said it and their trust, and its provenance resolved to the messages it came from — only those the viewer may
 * read. Shared by inspection, correction and export, which show facts alike.
 *
 * @module
 */

import type { Trust } from "../identity/trust.ts";
import { type Viewer, visibleTo } from "../identity/visibility.ts";
import type { Fact } from "./graph/fact.ts";
import type { Memory } from "./memory.ts";

/** Where one provenance entry of a fact came from: the message of that input event, or just its id when unknown. */
export type SourceView = { event_id: string } | {
  event_id: string;
  /** ISO 8601. */
  time: string;
  sender: string;
  /** The channel (`http`, `qq:private:…`). */
  source: string;
  trust: Trust;
  /** What was said, at most {@link SOURCE_TEXT_MAX} characters (a longer text ends in "…"). */
  text: string;
};

/** A fact as `/api/memory/graph` shows it. */
export interface FactView {
  /** The fact's row id (for correcting or forgetting it). */
  id: number;
  subject: string;
  type: string;
  predicate: string;
  object: string;
  holds: boolean;
  /** ISO 8601. */
  valid_from: string;
  /** ISO 8601, or null while it holds. */
  valid_to: string | null;
  /** Input event ids (and `corrected by <who>` for a correction). */
  provenance: string[];
  /** Who said it, as the lines it cites name them ("" when not recorded), and their trust (the lowest of those lines). */
  said_by: string;
  trust: Trust;
  /** Each provenance entry resolved to its message, in provenance order. */
  sources: SourceView[];
  /** Who corrected it by hand, on the fact a correction made. */
  corrected_by?: string;
}

/** Characters of a source message shown with a fact. */
export const SOURCE_TEXT_MAX = 300;

/** `text` cut to `max` characters (code points), a cut one ending in "…". */
function cut(text: string, max: number): string {
  const chars = [...text];
  return chars.length <= max ? text : `${chars.slice(0, max - 1).join("")}…`;
}

/**
 * Facts in the API's shape, their provenance resolved to messages with one read of the journal; for a `viewer`,
 * the messages they may not read are left out (a fact learnt in a group and in the owner's private chat shows a
 * household member the group's line only).
 *
 * @example
 * ```ts
 * import type { Memory } from "./memory.ts";
 *
 * declare const memory: Memory;
 * await factViews(memory, memory.graph().facts("spare key"), { sender: "alice", trust: "household" });
 * // [{ id: 3, subject: "spare key", …, provenance: ["e1"], sources: [{ event_id: "e1", sender: "owner", … }] }]
 * ```
 */
export async function factViews(memory: Memory, facts: readonly Fact[], viewer?: Viewer): Promise<FactView[]> {
  const all = await memory.messages([...new Set(facts.flatMap((fact) => fact.provenance))]);
  const messages = viewer ? new Map([...all].filter(([, entry]) => visibleTo(viewer, entry))) : all;
  const readable = (eventId: string) => !all.has(eventId) || messages.has(eventId);
  return facts.map((fact) => ({
    id: fact.id,
    subject: fact.subject,
    type: fact.subjectType,
    predicate: fact.predicate,
    object: fact.object,
    holds: fact.validTo === null,
    valid_from: new Date(fact.validFrom).toISOString(),
    valid_to: fact.validTo === null ? null : new Date(fact.validTo).toISOString(),
    provenance: fact.provenance.filter(readable),
    said_by: fact.saidBy,
    trust: fact.trust,
    sources: fact.provenance.filter(readable).map((eventId): SourceView => {
      const entry = messages.get(eventId);
      if (!entry) return { event_id: eventId };
      return {
        event_id: eventId,
        time: new Date(entry.time).toISOString(),
        sender: entry.sender,
        source: entry.source,
        // A line journaled before trust was recorded is the household's.
        trust: entry.trust ?? "household",
        text: cut(entry.text, SOURCE_TEXT_MAX),
      };
    }),
    ...(fact.correctedBy !== undefined ? { corrected_by: fact.correctedBy } : {}),
  }));
}
