/**
 * What the console's memory endpoints read and correct (`api/memory_routes.ts`, through {@link MemoryService}):
 * documents with their coldness, an entity's facts, entities, an entity's neighbours, a fact corrected by hand. Each
 * follows the viewer's trust (`identity/visibility.ts`): the owner sees everything, a household member what was said
 * where they may read it.
 *
 * @module
 */

import { coldness } from "./document/document_store.ts";
import type { Fact } from "./graph/fact.ts";
import type { GraphStore } from "./graph/graph_store.ts";
import { factVisibleTo } from "./graph/heard.ts";
import type { Viewer } from "../identity/visibility.ts";
import { type FactView, factViews } from "./fact_views.ts";
import type { Memory } from "./memory.ts";

/** An entity as `/api/memory/entities` lists it. */
export interface EntityView {
  name: string;
  type: string;
  /** Times a recorded fact named it as its subject (the graph counts them; a confirmation counts again). */
  mentions: number;
  /** Facts that hold about it now. */
  facts: number;
  /** ISO 8601. */
  last_seen: string;
}

/** `/api/memory/neighbors`: an entity and the entities its facts connect it to, one step. */
export interface NeighborhoodView {
  center: string;
  nodes: Array<{ name: string; type: string; mentions: number }>;
  edges: Array<{ from: string; to: string; predicate: string; holds: boolean }>;
}

/** What a forget removed, per layer: context entries, journal lines, documents, facts. */
export interface ForgetCounts {
  context: number;
  candidates: number;
  documents: number;
  facts: number;
}

/** Nodes `/api/memory/neighbors` shows at most (the entity included). */
export const NEIGHBORS_MAX = 40;

/**
 * Documents matching a query, not counted as an access, each with how far it is into `coldAfter` at `now` since it
 * was last accessed (its `coldness`); with a `viewer`, only what they may read.
 *
 * @example
 * ```ts
 * import type { Memory } from "./memory.ts";
 *
 * declare const memory: Memory;
 * documentViews(memory, "spare key", 5, Date.now(), 72 * 3_600_000);
 * // [{ id: "dmhx…-0", summary: "owner: The spare key is under the blue flowerpot.", hits: 1, coldness: 0.25, … }]
 * ```
 */
export function documentViews(
  memory: Memory,
  query: string,
  k: number,
  now: number,
  coldAfter: number,
  viewer?: Viewer,
): Array<Record<string, unknown>> {
  // With a viewer (the API's caller), only what they may read (identity/visibility.ts).
  return memory.documents().search(query, k, false, viewer).map(({ document, score }) => ({
    id: document.id,
    summary: document.summary,
    text: document.text,
    created: new Date(document.created).toISOString(),
    last_accessed: new Date(document.lastAccessed).toISOString(),
    hits: document.hits,
    coldness: coldness(document, now, coldAfter),
    provenance: document.provenance,
    sender: document.sender,
    trust: document.trust,
    source: document.source,
    score: Math.round(score * 1000) / 1000,
  }));
}

/**
 * An entity's facts, holding ones first, as {@link FactView}s; with a `viewer`, only the facts (and the messages they
 * came from) that viewer may read.
 *
 * @example
 * ```ts
 * import type { Memory } from "./memory.ts";
 *
 * declare const memory: Memory;
 * await entityFacts(memory, "spare key", { sender: "alice", trust: "household" });
 * ```
 */
export async function entityFacts(memory: Memory, name: string, viewer?: Viewer): Promise<FactView[]> {
  const facts = memory.graph().facts(name);
  return await factViews(memory, viewer ? facts.filter((fact) => factVisibleTo(viewer, fact)) : facts, viewer);
}

/**
 * Entities for `/api/memory/entities`: with an empty query the most mentioned, otherwise those whose name or an
 * alias contains the query, at most `k`; for a `viewer` other than the owner, only entities with a fact they may
 * read, counting those facts.
 *
 * @example
 * ```ts
 * import type { GraphStore } from "./graph/graph_store.ts";
 *
 * declare const graph: GraphStore;
 * entityViews(graph, "key", 20);
 * // [{ name: "spare key", type: "thing", mentions: 2, facts: 1, last_seen: "2026-11-01T09:00:00.000Z" }]
 * ```
 */
export function entityViews(graph: GraphStore, query: string, k: number, viewer?: Viewer): EntityView[] {
  const view = (entity: ReturnType<typeof graph.entities>[number], facts = entity.facts) => ({
    name: entity.name,
    type: entity.type,
    mentions: entity.mentions,
    facts,
    last_seen: new Date(entity.lastSeen).toISOString(),
  });
  if (!viewer || viewer.trust === "owner") return graph.entities(query, k).map((entity) => view(entity));
  // Only entities with a fact the viewer may read, counting those facts.
  const shown: EntityView[] = [];
  for (const entity of graph.entities(query, Math.max(k * 5, 200))) {
    const facts = graph.facts(entity.name).filter((fact) => factVisibleTo(viewer, fact));
    if (!facts.length) continue;
    shown.push(view(entity, facts.filter((fact) => fact.validTo === null).length));
    if (shown.length >= k) break;
  }
  return shown;
}

/**
 * An entity and those its facts connect it to (one step, at most {@link NEIGHBORS_MAX} nodes); an unknown name gives
 * just no nodes. For a `viewer` other than the owner, only the links a fact they may read makes.
 *
 * @example
 * ```ts
 * import type { GraphStore } from "./graph/graph_store.ts";
 *
 * declare const graph: GraphStore;
 * neighborhoodView(graph, "Leo");
 * // { center: "Leo", nodes: [{ name: "Leo", type: "thing", mentions: 1 }, { name: "alice", type: "person", mentions: 1 }],
 * //   edges: [{ from: "alice", to: "Leo", predicate: "likes", holds: true }] }
 * ```
 */
export function neighborhoodView(graph: GraphStore, name: string, viewer?: Viewer): NeighborhoodView {
  const found = graph.neighbors(name, NEIGHBORS_MAX) ?? { center: name, nodes: [], edges: [] };
  if (!viewer || viewer.trust === "owner" || !found.nodes.length) return found;
  // Only the links a fact the viewer may read makes, and the entities they reach.
  const readable = new Map<string, Fact[]>();
  const factsOf = (entity: string) => {
    let facts = readable.get(entity);
    if (!facts) readable.set(entity, facts = graph.facts(entity).filter((fact) => factVisibleTo(viewer, fact)));
    return facts;
  };
  const edges = found.edges.filter((edge) =>
    factsOf(edge.from).some((fact) =>
      fact.predicate === edge.predicate && fact.object.toLowerCase() === edge.to.toLowerCase()
    )
  );
  const linked = new Set(edges.flatMap((edge) => [edge.from, edge.to]));
  if (!linked.size && !factsOf(found.center).length) return { center: name, nodes: [], edges: [] };
  const nodes = found.nodes.filter((node, i) => i === 0 || linked.has(node.name));
  return { center: found.center, nodes, edges };
}

/**
 * Corrects the fact `id` to `object` at `time` (see {@linkcode GraphStore.correct}) and shows both facts;
 * `undefined` for an unknown id.
 *
 * @example
 * ```ts
 * import type { Memory } from "./memory.ts";
 *
 * declare const memory: Memory;
 * const { superseded, fact } = (await correctFact(memory, 3, "in the kitchen drawer", "owner", Date.now()))!;
 * // superseded.holds === false; fact.corrected_by === "owner"
 * ```
 */
export async function correctFact(
  memory: Memory,
  id: number,
  object: string,
  who: string,
  time: number,
): Promise<{ superseded: FactView; fact: FactView } | undefined> {
  const corrected = memory.graph().correct(id, object, who, time);
  if (!corrected) return undefined;
  const [superseded, fact] = await factViews(memory, [corrected.superseded, corrected.fact]);
  return { superseded: superseded!, fact: fact! };
}
