/**
 * The graph's rows of `memory.db` read back as values, and text as the graph stores and matches it. Shared by the
 * graph's reads and writes, which must normalise and decode exactly alike.
 *
 * @module
 */

import type { Trust } from "../../identity/trust.ts";
import type { Fact } from "./fact.ts";
import { parseHeard } from "./heard.ts";

/**
 * Text as the graph stores it: NFKC, runs of white space as one space, trimmed.
 *
 * @example
 * ```ts
 * normalize(" 客厅\u3000灯\n"); // "客厅 灯"
 * ```
 */
export function normalize(text: string): string {
  return text.normalize("NFKC").replace(/\s+/g, " ").trim();
}

/**
 * `text` as a LIKE pattern that matches it literally (with a backslash as the ESCAPE character).
 *
 * @example
 * ```ts
 * likeLiteral("50%_off"); // "50\\%\\_off"
 * ```
 */
export function likeLiteral(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/**
 * A fact from a row of `triples` joined with its subject (`subject`, `subject_type`).
 *
 * @example
 * ```ts
 * import type { DatabaseSync } from "node:sqlite";
 *
 * declare const db: DatabaseSync;
 * const row = db.prepare("SELECT t.*, e.name AS subject, e.type AS subject_type FROM triples t JOIN entities e ON e.id = t.subject").get();
 * if (row) factOf(row);
 * ```
 */
export function factOf(row: Record<string, unknown>): Fact {
  return { ...factBesidesOrigins(row), heard: parseHeard(row.heard ?? "[]") };
}

/** {@link factOf} but for its origins (`heard`), for a reader that reads them only when it needs them. */
export function factBesidesOrigins(row: Record<string, unknown>): Omit<Fact, "heard"> {
  return {
    id: Number(row.id),
    subject: String(row.subject),
    subjectType: String(row.subject_type),
    predicate: String(row.predicate),
    object: String(row.object),
    provenance: JSON.parse(String(row.provenance)) as string[],
    validFrom: Number(row.valid_from),
    validTo: row.valid_to === null ? null : Number(row.valid_to),
    ...(typeof row.corrected_by === "string" ? { correctedBy: row.corrected_by } : {}),
    saidBy: String(row.said_by ?? ""),
    trust: trustOf(String(row.trust ?? "household")),
  };
}

/**
 * A trust level read back from the database; anything else counts as a guest's (as `lowerTrust` does).
 *
 * @example
 * ```ts
 * trustOf("household"); // "household"
 * trustOf("admin"); // "guest"
 * ```
 */
export function trustOf(value: string): Trust {
  return value === "owner" || value === "household" ? value : "guest";
}
