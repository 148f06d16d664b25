/**
 * `GET /api/memory/export` (owner): everything remembered about one entity — its facts, holding and closed, with
 * their sources, and the documents that mention it — or everything memory holds. What a household may ask to see of
 * what was kept about them.
 *
 * @module
 */

import type { Clock } from "../clock.ts";
import type { Trust } from "../identity/trust.ts";
import { type FactView, factViews } from "./fact_views.ts";
import type { Memory } from "./memory.ts";

/** What `GET /api/memory/export` answers: the entities with their facts, and the documents. */
export interface MemoryExport {
  /** ISO 8601. */
  exported_at: string;
  /** The entity asked for, or null for everything. */
  entity: string | null;
  entities: Array<{ name: string; type: string; mentions: number; facts: FactView[] }>;
  documents: Array<{
    id: string;
    text: string;
    created: string;
    provenance: string[];
    sender: string;
    trust: Trust;
    hits: number;
  }>;
}

/**
 * The export of `entity` (by name, any case), or without one of every entity and every document; stamped with the
 * clock's time once it is gathered.
 *
 * @example
 * ```ts
 * import { systemClock } from "../clock.ts";
 * import type { Memory } from "./memory.ts";
 *
 * declare const memory: Memory;
 * (await exportMemory(memory, systemClock, "spare key")).entities[0]?.facts[0]?.sources; // who said it, where, when
 * ```
 */
export async function exportMemory(memory: Memory, clock: Clock, entity?: string): Promise<MemoryExport> {
  const graph = memory.graph();
  const entities = entity === undefined
    ? graph.entities("", Number.MAX_SAFE_INTEGER)
    : graph.entities(entity, 1).filter((found) => found.name.toLowerCase() === entity.toLowerCase());
  const documents = entity === undefined
    ? memory.documents().list()
    : memory.documents().search(entity, 50, false).map((hit) => hit.document);
  const listed = [];
  for (const found of entities) {
    listed.push({
      name: found.name,
      type: found.type,
      mentions: found.mentions,
      facts: await factViews(memory, graph.facts(found.name)),
    });
  }
  return {
    exported_at: new Date(clock.now()).toISOString(),
    entity: entity ?? null,
    entities: listed,
    documents: documents.map((document) => ({
      id: document.id,
      text: document.text,
      created: new Date(document.created).toISOString(),
      provenance: document.provenance,
      sender: document.sender,
      trust: document.trust,
      hits: document.hits,
    })),
  };
}
