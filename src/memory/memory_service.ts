/**
 * Memory in the running daemon: the facade ({@link openMemory}) plus what ties it to the agent. Every exchange is
 * observed by the after-turn hook (journaled, no LLM call); exchanges that leave layer 1 are kept as documents; layer 1
 * is saved on the heartbeat and at stop and restored at start; the distill job turns candidates into graph facts on
 * `memory.distill_interval`. The system message carries the graph index (refreshed by that job, so it stays
 * byte-identical between runs); a message's reference block carries up to three matching document summaries;
 * `memory_recall` finds facts, documents and recent context with their time and provenance. Both follow the asker's
 * trust: a guest's turn gets only what that guest said (its own documents and recent entries, no facts); the owner's
 * and household members' turns get everything.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import { join } from "node:path";
import type { ContextEntry, ContextWindow } from "../context/context_window.ts";
import type { Provider } from "../provider/provider.ts";
import type { Clock } from "../clock.ts";
import type { HistoryEntry, PromptContributor, PromptInput, PromptSection, TurnRecord } from "../prompt/contributor.ts";
import type { JobSpec, Service } from "../service/service.ts";
import type { Tool } from "../tools/tool.ts";
import { ContextStore } from "./context_store.ts";
import { type Asker, type JobReport, type Memory, openMemory, type RecallItem } from "./memory.ts";
import { REFERENCE_MIN_SCORE } from "../prompt/reference_floor.ts";
import { COLD_AFTER_MS, coldness } from "./document/document_store.ts";
import { type Fact, factVisibleTo } from "./graph/graph_store.ts";
import type { Trust } from "../identity/trust.ts";
import { type Viewer, visibleTo } from "../identity/visibility.ts";

export type { Asker, RecallItem } from "./memory.ts";
export { FactConflict } from "./graph/graph_store.ts";

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
  /** Each provenance entry resolved to its message, in provenance order. */
  /** Who said it, as the lines it cites name them ("" when not recorded), and their trust (the lowest of those lines). */
  said_by: string;
  trust: Trust;
  sources: SourceView[];
  /** Who corrected it by hand, on the fact a correction made. */
  corrected_by?: string;
}

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

/** Characters of a source message shown with a fact. */
export const SOURCE_TEXT_MAX = 300;
/** Nodes `/api/memory/neighbors` shows at most (the entity included). */
export const NEIGHBORS_MAX = 40;

/** `text` cut to `max` characters (code points), a cut one ending in "…". */
function cut(text: string, max: number): string {
  const chars = [...text];
  return chars.length <= max ? text : `${chars.slice(0, max - 1).join("")}…`;
}

/** Options of {@link MemoryService}. */
export interface MemoryServiceOptions {
  /** `data_dir/memory`. */
  dir: string;
  clock: Clock;
  logger: Logger;
  /** `memory.distill_interval`. */
  jobEveryMs?: number;
  /** `memory.cold_after`. */
  coldAfterMs?: number;
  /** The LLM for the distiller; without one the rule-based fallback runs. */
  provider?: Provider | undefined;
  /** The persona, first in the distiller's system message. */
  persona?: string;
  /** The butler's own names: facts about them are never recorded (its identity is personal.md). */
  selfNames?: readonly string[];
  /** Entities the system message's graph index lists at most. */
  indexEntities?: number;
}

/** The user's words of a tagged message: the text after `[via …, trust …] `. */
function untagged(content: string): string {
  return content.replace(/^\[via [^\]]*\] /, "");
}

/** The `memory` service. */
export class MemoryService implements Service, PromptContributor {
  readonly name = "memory";
  #options: MemoryServiceOptions;
  #memory: Memory | undefined;
  /** The facade being opened in the background (start does not wait for it, so the daemon listens first). */
  #opening: Promise<Memory> | undefined;
  #openError: string | undefined;
  #store: ContextStore;
  #restored: ContextEntry[] = [];
  #context: ContextWindow | undefined;
  #contextChanged = false;
  #graphIndex = "";
  /** After-turn work in progress (the agent does not wait for it); stop does. */
  #observing: Promise<void> = Promise.resolve();
  #lastJob: JobReport | undefined;

  /**
   * @example
   * ```ts
   * import { join } from "node:path";
   * import { ContextWindow } from "../context/context_window.ts";
   * import { systemClock } from "../clock.ts";
   * import { log } from "../log/logging.ts";
   * import { ServiceHost } from "../service/service_host.ts";
   *
   * const dataDir = "/var/lib/homed"; // daemon.data_dir
   * const services = new ServiceHost({ clock: systemClock, logger: log(), heartbeatMs: 15_000 });
   * const memory = await services.start(
   *   new MemoryService({ dir: join(dataDir, "memory"), clock: systemClock, logger: log("memory") }),
   * );
   * const context = new ContextWindow({ maxEntries: 30, entries: memory.restored, onEvict: (e) => memory.archive(e) });
   * memory.keep(context);
   * ```
   */
  constructor(options: MemoryServiceOptions) {
    this.#options = options;
    this.#store = new ContextStore(join(options.dir, "context.json"), options.logger);
  }

  /**
   * The facade once it is open: every use waits for the background open (recall waits for the load, not the
   * server); when opening failed, this rejects with why.
   */
  #ready(): Promise<Memory> {
    if (!this.#opening) return Promise.reject(new RangeError("The memory service is not started"));
    return this.#opening;
  }

  /**
   * Restores layer 1 (a small file) and starts opening the stores in the background; returns before they are
   * loaded. A failed open is logged and shown in the status; the distill job tries again on its clock.
   */
  async start(): Promise<void> {
    this.#restored = await this.#store.load();
    this.#openInBackground();
  }

  #openInBackground(): void {
    const { dir, clock, logger, provider, persona, coldAfterMs, selfNames } = this.#options;
    const started = performance.now();
    this.#openError = undefined;
    this.#opening = openMemory({
      dir,
      clock,
      logger,
      provider,
      ...(selfNames ? { selfNames } : {}),
      ...(persona !== undefined ? { persona } : {}),
      ...(coldAfterMs !== undefined ? { coldAfterMs } : {}),
    }).then((memory) => {
      this.#memory = memory;
      this.#refreshIndex();
      const counts = memory.status() as { documents?: number; entities?: number };
      logger.info("Memory open in {ms} ms: {documents} documents, {entities} entities", {
        ms: Math.round(performance.now() - started),
        documents: counts.documents ?? 0,
        entities: counts.entities ?? 0,
      });
      return memory;
    }, (error: unknown) => {
      this.#openError = (error as Error).message;
      logger.error("Memory could not be opened from {dir}: {error}; homed answers without it", { dir, error });
      throw new Error(`Memory could not be opened: ${this.#openError}`, { cause: error });
    });
    // Callers see the rejection through #ready; this keeps an unobserved one from being reported as unhandled.
    this.#opening.catch(() => {});
  }

  /** The context saved by the last run (empty when there was none or it could not be used). */
  get restored(): ContextEntry[] {
    return this.#restored;
  }

  /** The context to save on the heartbeat and at stop. */
  keep(context: ContextWindow): void {
    this.#context = context;
  }

  /** Keeps exchanges that left layer 1 as documents, one per input event; a failure is logged, never thrown. */
  archive(entries: readonly ContextEntry[]): void {
    const groups = new Map<string, ContextEntry[]>();
    for (const entry of entries) groups.set(entry.eventId, [...(groups.get(entry.eventId) ?? []), entry]);
    for (const [eventId, group] of groups) {
      // Every entry of an exchange carries its input event's origin: who asked, and their trust (none in a context
      // saved before trust was recorded: such a document is the household's).
      const { sender, trust, source } = group[0]!;
      const lines = group.flatMap((entry) => {
        const { message } = entry;
        if (message.role === "user") return [{ speaker: entry.sender, text: untagged(message.content) }];
        if (message.role === "assistant" && message.content) return [{ speaker: "butler", text: message.content }];
        return [];
      });
      if (!lines.length) continue;
      // In eviction order: callbacks on one promise run in the order they were added.
      const draft = {
        lines,
        time: group[0]!.time,
        provenance: [eventId],
        sender,
        source,
        ...(trust ? { trust } : {}),
      };
      this.#ready().then((memory) => memory.keepDocument(draft))
        .catch((error) => this.#options.logger.error("Keeping an exchange as a document failed: {error}", { error }));
    }
  }

  /** Journals the exchange (the distiller's input; an empty reply is left out) and marks the context for saving. */
  afterTurn(turn: TurnRecord): Promise<void> {
    const base = { eventId: turn.eventId, time: turn.time, source: turn.source, trust: turn.trust };
    const observed = this.#observing.then(async () => {
      const memory = await this.#ready();
      await memory.observe({ ...base, role: "user", sender: turn.sender, text: turn.text });
      // A turn the butler did not answer (it only listened) journals no empty reply.
      if (turn.reply.trim() !== "") {
        await memory.observe({ ...base, role: "assistant", sender: "butler", text: turn.reply });
      }
    });
    this.#observing = observed.catch(() => {});
    // Layer 1 is saved on the heartbeat, not per turn (an fsync per turn costs the turn's budget); the journal holds
    // every exchange, so a crash loses at most a heartbeat's worth of context continuity, never what was said.
    this.#contextChanged = true;
    return observed;
  }

  /**
   * Facts, documents and recent context for a query, best first; for `asker`, only what they may recall (a guest:
   * what that guest said).
   *
   * @example
   * ```ts
   * declare const memory: MemoryService;
   * await memory.recall("where is my umbrella", 5, { sender: "visitor", trust: "guest" });
   * ```
   */
  async recall(query: string, k = 5, asker?: Asker): Promise<RecallItem[]> {
    return (await this.#ready()).recall(query, { k, ...(asker ? { asker } : {}) });
  }

  /**
   * Documents matching a query, for `/api/memory/documents` (not counted as an access). `coldness` is how far each is
   * into `memory.cold_after` since it was last accessed (see {@linkcode coldness}: at 1 or more, a document with at
   * most two hits is archived by the next memory job).
   *
   * @example
   * ```ts
   * declare const memory: MemoryService;
   * await memory.inspectDocuments("spare key", 5);
   * // [{ id: "dmhx…-0", summary: "owner: The spare key is under the blue flowerpot.", hits: 1, coldness: 0.25, … }]
   * ```
   */
  async inspectDocuments(query: string, k: number, viewer?: Viewer): Promise<Array<Record<string, unknown>>> {
    const now = this.#options.clock.now();
    const coldAfter = this.#options.coldAfterMs ?? COLD_AFTER_MS;
    // With a viewer (the API's caller), only what they may read (identity/visibility.ts).
    return (await this.#ready()).documents().search(query, k, false, viewer).map(({ document, score }) => ({
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
   * The household's devices as the smart home names them (Home Assistant's entities): each becomes a graph entity of
   * type `device` whose `home_assistant_id` fact is its id, with its area, and each alias an entity of its own with the
   * same id — so "客厅的灯" and "the living room light" both lead to `light.living_room`. One transaction; a renamed
   * device's old facts are closed (the facts hold one value at a time).
   *
   * @example
   * ```ts
   * declare const memory: MemoryService;
   * await memory.learnDevices([{ id: "light.living_room", name: "Living room light", area: "Living room", aliases: ["客厅的灯"] }]);
   * ```
   */
  async learnDevices(
    devices: ReadonlyArray<{ id: string; name: string; area: string | null; aliases: readonly string[] }>,
  ): Promise<void> {
    const graph = (await this.#ready()).graph();
    const time = this.#options.clock.now();
    const fact = (name: string, predicate: string, object: string) => ({
      subject: { name, type: "device" },
      predicate,
      object,
      time,
      provenance: ["home-assistant"],
      single: true,
    });
    const drafts = devices.flatMap((device) => [
      fact(device.name, "home_assistant_id", device.id),
      ...(device.area ? [fact(device.name, "area", device.area)] : []),
      ...device.aliases.filter((alias) => alias.trim() !== "").map((alias) =>
        fact(alias, "home_assistant_id", device.id)
      ),
    ]).filter((draft) => draft.subject.name.trim() !== "");
    // In slices: a large installation has thousands of entities; one transaction each keeps the event loop free.
    for (let at = 0; at < drafts.length; at += 500) {
      graph.recordBatch(drafts.slice(at, at + 500));
      await new Promise((resolve) => setTimeout(resolve, 0));
    }
  }

  /**
   * An entity's facts, holding ones first, for `/api/memory/graph`: each with its row id, its provenance resolved to
   * the messages it came from (one read of the journal) and who corrected it, if someone did.
   *
   * @example
   * ```ts
   * declare const memory: MemoryService;
   * await memory.inspectGraph("spare key");
   * // [{ id: 3, subject: "spare key", type: "thing", predicate: "location", object: "under blue flowerpot",
   * //    holds: true, valid_from: "2026-11-01T09:00:00.000Z", valid_to: null, provenance: ["e1"],
   * //    sources: [{ event_id: "e1", time: "2026-11-01T09:00:00.000Z", sender: "owner", source: "http",
   * //      trust: "owner", text: "The spare key is under the blue flowerpot." }] }]
   * ```
   */
  async inspectGraph(name: string, viewer?: Viewer): Promise<FactView[]> {
    const memory = await this.#ready();
    const facts = memory.graph().facts(name);
    return await this.#views(memory, viewer ? facts.filter((fact) => factVisibleTo(viewer, fact)) : facts, viewer);
  }

  /**
   * Everything remembered about one entity — its facts (holding and closed, with their sources) and the documents
   * that mention it — or, without a name, everything: every entity with its facts and every document, for
   * `GET /api/memory/export` (owner).
   *
   * @example
   * ```ts
   * declare const memory: MemoryService;
   * const all = await memory.export();
   * all.entities.length; // every entity in the graph
   * (await memory.export("spare key")).entities[0]?.facts[0]?.sources; // who said it, where, when
   * ```
   */
  async export(entity?: string): Promise<MemoryExport> {
    const memory = await this.#ready();
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
        facts: await this.#views(memory, graph.facts(found.name)),
      });
    }
    return {
      exported_at: new Date(this.#options.clock.now()).toISOString(),
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

  /**
   * Facts in the API's shape, their provenance resolved to messages with one read of the journal; for a `viewer`,
   * the messages they may not read are left out (a fact learnt in a group and in the owner's private chat shows a
   * household member the group's line only).
   */
  async #views(memory: Memory, facts: readonly Fact[], viewer?: Viewer): Promise<FactView[]> {
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

  /**
   * Entities for `/api/memory/entities`: with an empty query the most mentioned, otherwise those whose name or an
   * alias contains the query (exact names first, then prefixes), at most `k`.
   *
   * @example
   * ```ts
   * declare const memory: MemoryService;
   * await memory.inspectEntities("key", 20);
   * // [{ name: "spare key", type: "thing", mentions: 2, facts: 1, last_seen: "2026-11-01T09:00:00.000Z" }]
   * ```
   */
  async inspectEntities(query: string, k: number, viewer?: Viewer): Promise<EntityView[]> {
    const graph = (await this.#ready()).graph();
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
   * An entity and those its facts connect it to (one step, at most {@link NEIGHBORS_MAX} nodes), for
   * `/api/memory/neighbors`; an unknown name gives just no nodes.
   *
   * @example
   * ```ts
   * declare const memory: MemoryService;
   * await memory.inspectNeighbors("Leo");
   * // { center: "Leo", nodes: [{ name: "Leo", type: "thing", mentions: 1 }, { name: "alice", type: "person", mentions: 1 }],
   * //   edges: [{ from: "alice", to: "Leo", predicate: "likes", holds: true }] }
   * ```
   */
  async inspectNeighbors(name: string, viewer?: Viewer): Promise<NeighborhoodView> {
    const graph = (await this.#ready()).graph();
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
   * Corrects the fact `id` (one that holds) to `object`, in one transaction: the old fact is closed now, a new one
   * holds with provenance `corrected by <who>` and `corrected_by` set. `undefined` for an unknown id; throws
   * {@linkcode FactConflict} when the fact no longer holds or already says that, `RangeError` for an empty object.
   *
   * @example
   * ```ts
   * declare const memory: MemoryService;
   * const { superseded, fact } = (await memory.correctFact(3, "in the kitchen drawer", "owner"))!;
   * // superseded.holds === false; fact.corrected_by === "owner"; fact.provenance: ["corrected by owner"]
   * ```
   */
  async correctFact(
    id: number,
    object: string,
    who: string,
  ): Promise<{ superseded: FactView; fact: FactView } | undefined> {
    const memory = await this.#ready();
    const corrected = memory.graph().correct(id, object, who, this.#options.clock.now());
    if (!corrected) return undefined;
    const [superseded, fact] = await this.#views(memory, [corrected.superseded, corrected.fact]);
    return { superseded: superseded!, fact: fact! };
  }

  /**
   * Deletes the fact `id` (and its entity when no fact is left about it); `false` when there is no such fact. The
   * messages it came from stay (see {@linkcode MemoryService.forget} for those).
   *
   * @example
   * ```ts
   * declare const memory: MemoryService;
   * await memory.forgetFact(3); // true
   * ```
   */
  async forgetFact(id: number): Promise<boolean> {
    const deleted = (await this.#ready()).graph().delete(id);
    if (deleted) this.#refreshIndex();
    return deleted;
  }

  /**
   * Forgets an entity: every fact about it, holding or closed (the entity goes with its last fact); what people said
   * stays in the journal and the documents (forget those by message or conversation). Returns how many facts went;
   * `undefined` when memory knows no entity of that name.
   *
   * @example
   * ```ts
   * declare const memory: MemoryService;
   * await memory.forgetEntity("spare key"); // 2
   * ```
   */
  async forgetEntity(name: string): Promise<number | undefined> {
    const graph = (await this.#ready()).graph();
    const facts = graph.facts(name);
    if (!facts.length) return undefined;
    let deleted = 0;
    for (const fact of facts) if (graph.delete(fact.id)) deleted++;
    this.#refreshIndex();
    return deleted;
  }

  /**
   * Forgets a whole stored conversation: every input event of the document's provenance, in every layer (see
   * {@linkcode MemoryService.forget}); `undefined` when there is no document `id`.
   *
   * @example
   * ```ts
   * declare const memory: MemoryService;
   * await memory.forgetDocument("dmhx3k2a-0"); // { context: 0, candidates: 2, documents: 1, facts: 1 }
   * ```
   */
  async forgetDocument(id: string): Promise<ForgetCounts | undefined> {
    const document = (await this.#ready()).documents().get(id);
    return document ? await this.forget(document.provenance) : undefined;
  }

  /**
   * Forgets what came from the input events `eventIds` in every layer — the context, the journal, documents and
   * their index, facts — and saves the context at once.
   *
   * @example
   * ```ts
   * declare const memory: MemoryService;
   * await memory.forget(["e1"]); // { context: 2, candidates: 2, documents: 0, facts: 1 }
   * ```
   */
  async forget(eventIds: readonly string[]): Promise<ForgetCounts> {
    await this.#observing;
    const ids = new Set(eventIds);
    const context = this.#context?.forget(ids) ?? 0;
    const removed = await (await this.#ready()).forget(eventIds);
    if (this.#context) await this.#store.save(this.#context.records());
    this.#refreshIndex();
    return { context, ...removed };
  }

  /** The tools: `memory_recall`, `memory_forget` (owner only). */
  tools(): Tool[] {
    return [{
      name: "memory_forget",
      effect: "act",
      description:
        "Forget what the household said in given messages, in every layer of memory (context, journal, documents, facts). Find the messages first with memory_recall: pass the event ids from its provenance. Only when the owner asks.",
      parameters: {
        type: "object",
        properties: {
          event_ids: {
            type: "array",
            items: { type: "string", minLength: 1, maxLength: 100 },
            minItems: 1,
            maxItems: 100,
          },
        },
        required: ["event_ids"],
        additionalProperties: false,
      },
      allow: "owner",
      execute: async (args) => {
        const removed = await this.forget(args.event_ids as string[]);
        return `Forgotten: ${removed.context} context entries, ${removed.candidates} journal lines, ` +
          `${removed.documents} documents, ${removed.facts} facts`;
      },
    }, {
      name: "memory_recall",
      effect: "read",
      description:
        "Recall what happened in this household beyond the current conversation: facts learned from what people said, earlier exchanges (documents) and recent context, best first, with when and in which message. Use it when someone refers to something said before. For a guest it recalls only what that guest said.",
      parameters: {
        type: "object",
        properties: {
          query: { type: "string", minLength: 1, maxLength: 500 },
          k: { type: "integer", minimum: 1, maximum: 20, description: "How many items (default 5)" },
        },
        required: ["query"],
        additionalProperties: false,
      },
      // Anyone may ask: the asker's trust decides what the recall holds (a guest: only what that guest said).
      allow: "anyone",
      execute: async (args, context) => {
        const asker = { sender: context.sender, trust: context.trust };
        const items = await this.recall(args.query as string, (args.k as number | undefined) ?? 5, asker);
        if (!items.length) return "Nothing in memory matches that.";
        // When and from whom each item came: its messages' senders, channels and trust — those the asker may read.
        const all = await (await this.#ready()).messages([...new Set(items.flatMap((item) => item.provenance))]);
        const messages = new Map([...all].filter(([, entry]) => visibleTo(asker, entry)));
        return items.map((item) => ({
          ...item,
          time: new Date(item.time).toISOString(),
          from: item.provenance.flatMap((eventId) => {
            const entry = messages.get(eventId);
            return entry
              ? [{
                sender: entry.sender,
                source: entry.source,
                trust: entry.trust ?? "household",
                time: new Date(entry.time).toISOString(),
              }]
              : [];
          }),
        }));
      },
    }];
  }

  /** The graph index for the system message; it changes only when the memory job ran. */
  system(trust: Trust): PromptSection | undefined {
    // A guest reads no graph facts, so not even their names.
    if (this.#graphIndex === "" || trust === "guest") return undefined;
    return {
      title: "Household memory index (what memory_recall knows about; details on request)",
      body: this.#graphIndex,
    };
  }

  #refreshIndex(): void {
    if (!this.#memory) return;
    // The system message is everyone's: it names only entities with a fact the whole household may read, said by a
    // household member or the owner — never what was learnt only in someone's private chat, nor a guest's claim.
    const graph = this.#memory.graph();
    const limit = this.#options.indexEntities ?? 60;
    const household = { sender: "", trust: "household" as const };
    const entities = graph.index(limit * 4).filter((entity) =>
      graph.facts(entity.name).some((fact) =>
        fact.validTo === null && fact.trust !== "guest" && factVisibleTo(household, fact)
      )
    ).slice(0, limit);
    this.#graphIndex = entities.map((e) => `${e.name} (${e.type}) ×${e.mentions}`).join("; ");
  }

  /**
   * The reference block's memory part: up to three documents that match the message, by summary — for a guest's
   * message (or one whose trust is not given), only documents of that guest's own turns. Each is an item naming who
   * asked in that exchange and their trust then (the prompt ends its line with `[said by …, trust …]`), so a guest's
   * words recalled in the owner's turn stay a guest's.
   *
   * @example
   * ```ts
   * declare const memory: MemoryService;
   * const input = { text: "my umbrella", source: "http", sender: "owner", trust: "owner" as const, time: Date.now() };
   * (await memory.reference(input, []))?.items;
   * // [{ text: "2026-11-01T09:00 visitor: My umbrella is the green one / butler: Noted.", sender: "visitor",
   * //    trust: "guest" }]
   * ```
   */
  async reference(input: PromptInput, _history: readonly HistoryEntry[]): Promise<PromptSection | undefined> {
    // A memory that could not be opened leaves the turn without references rather than failing it.
    const memory = await this.#ready().catch(() => undefined);
    if (!memory) return undefined;
    // Only what the sender may read (identity/visibility.ts); a message without a trust is a guest's.
    const viewer = { sender: input.sender, trust: input.trust ?? "guest" };
    const hits = memory.documents().search(input.text, 3, false, viewer).filter((hit) =>
      hit.score >= REFERENCE_MIN_SCORE
    );
    if (!hits.length) return undefined;
    return {
      title: "Earlier in this household (memory; memory_recall for more)",
      body: "",
      items: hits.map(({ document }) => ({
        text: `${new Date(document.created).toISOString().slice(0, 16)} ${document.summary}`,
        sender: document.sender,
        trust: document.trust,
      })),
    };
  }

  jobs(): JobSpec[] {
    return [{
      name: "distill",
      everyMs: this.#options.jobEveryMs ?? 1_800_000,
      run: async (signal) => {
        if (this.#openError !== undefined) this.#openInBackground();
        const memory = await this.#ready();
        this.#lastJob = await memory.runJobs(signal);
        this.#refreshIndex();
        await memory.reindex();
        if (this.#lastJob.error) throw new Error(this.#lastJob.error);
      },
    }];
  }

  async heartbeat(): Promise<void> {
    await this.#memory?.sync();
    if (this.#contextChanged && this.#context) {
      this.#contextChanged = false;
      await this.#store.save(this.#context.records());
    }
  }

  async stop(): Promise<void> {
    await this.#opening?.catch(() => {});
    await this.#observing;
    if (this.#context) await this.#store.save(this.#context.records());
    await this.#store.flush();
    await this.#memory?.close();
  }

  status(): Record<string, unknown> {
    // Not `state`: the service host reports the service's own state under that name.
    const stores = this.#memory ? "open" : this.#openError !== undefined ? "failed" : "loading";
    return {
      stores,
      ...(this.#openError !== undefined ? { error: this.#openError } : {}),
      ...this.#memory?.status(),
      context_saves: this.#store.saves,
    };
  }
}
