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
 * This module is the service; its parts have their own: the prompt (`memory_prompt.ts`), the tools
 * (`memory_tools.ts`), the console's inspection and correction (`memory_inspection.ts`, `fact_views.ts`,
 * `memory_export.ts`) and the smart home's devices (`device_learning.ts`).
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
import type { DamagedFiles } from "../fs/set_aside.ts";
import type { StoreHealth } from "../fs/store_health.ts";
import { COLD_AFTER_MS } from "./document/document_store.ts";
import type { Trust } from "../identity/trust.ts";
import type { Viewer } from "../identity/visibility.ts";
import { learnDevices, type NamedDevice } from "./device_learning.ts";
import type { FactView } from "./fact_views.ts";
import { exportMemory, type MemoryExport } from "./memory_export.ts";
import {
  correctFact,
  documentViews,
  entityFacts,
  type EntityView,
  entityViews,
  type ForgetCounts,
  type NeighborhoodView,
  neighborhoodView,
} from "./memory_inspection.ts";
import { MemoryPrompt } from "./memory_prompt.ts";
import { memoryTools } from "./memory_tools.ts";
import { memoryProfileSource, type ProfileSource } from "./profile/profiles.ts";

export type { Asker, RecallItem } from "./memory.ts";
export { FactConflict } from "./graph/graph_store.ts";
// The console API's shapes, here since before they had modules of their own: importers keep finding them here.
export { type FactView, SOURCE_TEXT_MAX, type SourceView } from "./fact_views.ts";
export type { MemoryExport } from "./memory_export.ts";
export { type EntityView, type ForgetCounts, type NeighborhoodView, NEIGHBORS_MAX } from "./memory_inspection.ts";

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
  /** Where a damaged memory file is set aside and recorded (see `OpenMemoryOptions.damaged`). */
  damaged?: DamagedFiles;
  /**
   * Where a write that fails for the disk (full, read-only) is recorded (issue 38.2): the journal, memory.db and
   * context.json are then degraded — the turn still gets its answer — and each tries again on its next write.
   */
  health?: StoreHealth;
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
  /** The system message's graph index and the reference block's documents. */
  #prompt: MemoryPrompt;
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
    this.#store = new ContextStore(join(options.dir, "context.json"), options.logger, options.health);
    this.#prompt = new MemoryPrompt(() => this.#ready(), options.indexEntities);
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
    const { dir, clock, logger, provider, persona, coldAfterMs, selfNames, damaged, health } = this.#options;
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
      ...(damaged ? { damaged } : {}),
      ...(health ? { health } : {}),
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
      this.#ready().then((memory) => this.#write("memory.db", "memory.db", () => memory.keepDocument(draft)))
        .catch((error) => this.#options.logger.error("Keeping an exchange as a document failed: {error}", { error }));
    }
  }

  /** Journals the exchange (the distiller's input; an empty reply is left out) and marks the context for saving. */
  afterTurn(turn: TurnRecord): Promise<void> {
    const base = { eventId: turn.eventId, time: turn.time, source: turn.source, trust: turn.trust };
    const observed = this.#observing.then(async () => {
      const memory = await this.#ready();
      // On a full or read-only disk the exchange is not journaled (the journal is marked degraded, and takes the
      // next exchange once the disk writes again): the turn has its answer either way.
      await this.#write("memory journal", "candidates.jsonl", async () => {
        await memory.observe({ ...base, role: "user", sender: turn.sender, text: turn.text });
        // A turn the butler did not answer (it only listened) journals no empty reply.
        if (turn.reply.trim() !== "") {
          await memory.observe({ ...base, role: "assistant", sender: "butler", text: turn.reply });
        }
      });
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
    return documentViews(await this.#ready(), query, k, now, coldAfter, viewer);
  }

  /**
   * The household's devices as the smart home names them (Home Assistant's entities): each becomes a graph entity of
   * type `device` whose `home_assistant_id` fact is its id, with its area, and each alias an entity of its own with the
   * same id — so "客厅的灯" and "the living room light" both lead to `light.living_room`. A transaction per 500 facts; a
   * renamed device's old facts are closed (the facts hold one value at a time).
   *
   * @example
   * ```ts
   * declare const memory: MemoryService;
   * await memory.learnDevices([{ id: "light.living_room", name: "Living room light", area: "Living room", aliases: ["客厅的灯"] }]);
   * ```
   */
  async learnDevices(devices: readonly NamedDevice[]): Promise<void> {
    const graph = (await this.#ready()).graph();
    await learnDevices(graph, devices, this.#options.clock.now());
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
    return await entityFacts(await this.#ready(), name, viewer);
  }

  /**
   * What the per-person profiles read of memory once it is open (`profile/`: members who have spoken, a person's
   * facts with their sources, the facts naming them) — each as its reader may read it.
   *
   * @example
   * ```ts
   * import { Profiles } from "./profile/profiles.ts";
   *
   * declare const memory: MemoryService;
   * const profiles = new Profiles(memory.profileSource(), () => [{ id: "owner", trust: "owner" }]);
   * ```
   */
  profileSource(): ProfileSource {
    return memoryProfileSource(() => this.#ready());
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
    return await exportMemory(await this.#ready(), this.#options.clock, entity);
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
    return entityViews((await this.#ready()).graph(), query, k, viewer);
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
    return neighborhoodView((await this.#ready()).graph(), name, viewer);
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
    return await correctFact(memory, id, object, who, this.#options.clock.now());
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
    if (this.#context) await this.#store.save(this.#context.records(), { durable: true });
    this.#refreshIndex();
    return { context, ...removed };
  }

  /** The tools: `memory_recall`, `memory_forget` (owner only). */
  tools(): Tool[] {
    return memoryTools({
      recall: (query, k, asker) => this.recall(query, k, asker),
      forget: (eventIds) => this.forget(eventIds),
      messages: async (eventIds) => (await this.#ready()).messages(eventIds),
    });
  }

  /** The graph index for the system message; it changes only when the memory job ran. */
  system(trust: Trust): PromptSection | undefined {
    return this.#prompt.system(trust);
  }

  #refreshIndex(): void {
    if (!this.#memory) return;
    this.#prompt.refresh(this.#memory.graph());
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
  async reference(input: PromptInput, history: readonly HistoryEntry[]): Promise<PromptSection | undefined> {
    return await this.#prompt.reference(input, history);
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

  /**
   * Runs a write of the store `store` (its file `file` in the memory folder): a failure for the disk marks it degraded
   * in the health (and is logged) instead of failing; any other failure is thrown.
   */
  async #write(store: string, file: string, write: () => Promise<void> | void): Promise<void> {
    const path = join(this.#options.dir, file);
    const health = this.#options.health;
    try {
      await write();
      health?.succeeded(store);
    } catch (error) {
      if (!health?.failed(store, path, error)) throw error;
      this.#options.logger.warning("Could not write {path} (the disk): {error}", { path, error });
    }
  }

  async heartbeat(): Promise<void> {
    const memory = this.#memory;
    // The journal's fsync and marks, the search index's and entities' segments: one store in the status.
    if (memory) await this.#write("memory index", ".", () => memory.sync());
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
