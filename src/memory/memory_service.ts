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
import { type Asker, type JobReport, type Memory, onlySaidBy, openMemory, type RecallItem } from "./memory.ts";
import { REFERENCE_MIN_SCORE } from "../prompt/reference_floor.ts";

export type { Asker, RecallItem } from "./memory.ts";

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
      const { sender, trust } = group[0]!;
      const lines = group.flatMap((entry) => {
        const { message } = entry;
        if (message.role === "user") return [{ speaker: entry.sender, text: untagged(message.content) }];
        if (message.role === "assistant" && message.content) return [{ speaker: "butler", text: message.content }];
        return [];
      });
      if (!lines.length) continue;
      // In eviction order: callbacks on one promise run in the order they were added.
      const draft = { lines, time: group[0]!.time, provenance: [eventId], sender, ...(trust ? { trust } : {}) };
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

  /** Documents matching a query, for `/api/memory/documents` (not counted as an access). */
  async inspectDocuments(query: string, k: number): Promise<Array<Record<string, unknown>>> {
    return (await this.#ready()).documents().search(query, k, false).map(({ document, score }) => ({
      id: document.id,
      summary: document.summary,
      text: document.text,
      created: new Date(document.created).toISOString(),
      last_accessed: new Date(document.lastAccessed).toISOString(),
      hits: document.hits,
      provenance: document.provenance,
      sender: document.sender,
      trust: document.trust,
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

  /** An entity's facts, holding ones first, for `/api/memory/graph`. */
  async inspectGraph(name: string): Promise<Array<Record<string, unknown>>> {
    return (await this.#ready()).graph().facts(name).map((fact) => ({
      subject: fact.subject,
      type: fact.subjectType,
      predicate: fact.predicate,
      object: fact.object,
      holds: fact.validTo === null,
      valid_from: new Date(fact.validFrom).toISOString(),
      valid_to: fact.validTo === null ? null : new Date(fact.validTo).toISOString(),
      provenance: fact.provenance,
    }));
  }

  /**
   * Forgets what came from the input events `eventIds` in every layer — the context, the journal, documents and
   * their index, facts — and saves the context at once.
   */
  async forget(eventIds: readonly string[]): Promise<Record<string, number>> {
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
        return items.map((item) => ({ ...item, time: new Date(item.time).toISOString() }));
      },
    }];
  }

  /** The graph index for the system message; it changes only when the memory job ran. */
  system(): PromptSection | undefined {
    if (this.#graphIndex === "") return undefined;
    return {
      title: "Household memory index (what memory_recall knows about; details on request)",
      body: this.#graphIndex,
    };
  }

  #refreshIndex(): void {
    if (!this.#memory) return;
    const entities = this.#memory.graph().index(this.#options.indexEntities ?? 60);
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
    const saidBy = onlySaidBy({ sender: input.sender, trust: input.trust ?? "guest" });
    const hits = memory.documents().search(input.text, 3, false, saidBy).filter((hit) =>
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
