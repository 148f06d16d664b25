/**
 * The memory service, as far as it is built: every exchange is written to the TextMemory journal by the after-turn
 * hook (the distiller's input later); layer 1 is saved on the heartbeat and at stop, and restored at start; exchanges that leave
 * layer 1 become layer-2 documents, found again by `memory_recall` and, unasked, by the top document summaries in the
 * reference block. Layer 3 (the graph), the distiller and `memory_forget` come with the rest of the memory work.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import { join } from "node:path";
import type { ContextEntry, ContextWindow } from "../agent/core/context.ts";
import { similarities } from "../agent/core/relevance.ts";
import type { Clock } from "../clock.ts";
import type { HistoryEntry, PromptContributor, PromptInput, PromptSection, TurnRecord } from "../prompt/contributor.ts";
import type { JobSpec, Service } from "../service/service.ts";
import type { Tool } from "../tools/tool.ts";
import { ContextStore } from "./context_store.ts";
import type { DatabaseSync } from "node:sqlite";
import { openMemoryDb } from "./database.ts";
import { DocumentStore } from "./document/document_store.ts";
import { GraphStore } from "./graph/graph_store.ts";
import { TextMemory } from "./text/text_memory.ts";
import { VectorStore } from "./vector/store.ts";

/** One recalled item, as the memory facade of ARCHITECTURE §7 returns them. */
export interface RecallItem {
  kind: "context" | "document" | "fact";
  text: string;
  score: number;
  /** Milliseconds since the epoch. */
  time: number;
  /** Input event ids. */
  provenance: string[];
}

/** Least score for a document summary to be shown unasked. */
export const SUMMARY_MIN_SCORE = 0.12;

/** The user's words of a tagged message: the text after `[via …, trust …] `. */
function untagged(content: string): string {
  return content.replace(/^\[via [^\]]*\] /, "");
}

/** Options of {@link MemoryService}. */
export interface MemoryServiceOptions {
  /** `data_dir/memory`. */
  dir: string;
  clock: Clock;
  logger: Logger;
  /** `memory.distill_interval`: how often the document index is re-indexed. */
  jobEveryMs?: number;
}

/** The `memory` service. */
export class MemoryService implements Service, PromptContributor {
  readonly name = "memory";
  #options: MemoryServiceOptions;
  #journal: TextMemory | undefined;
  #store: ContextStore;
  #restored: ContextEntry[] = [];
  #context: ContextWindow | undefined;
  #index: VectorStore | undefined;
  #documents: DocumentStore | undefined;
  #db: DatabaseSync | undefined;
  #graph: GraphStore | undefined;
  #archiving: Promise<void> = Promise.resolve();
  #contextChanged = false;

  /**
   * @example
   * ```ts
   * const memory = await services.start(new MemoryService({ dir: join(dataDir, "memory"), logger }));
   * const context = new ContextWindow({ maxEntries: 30, entries: memory.restored });
   * memory.keep(context);
   * ```
   */
  constructor(options: MemoryServiceOptions) {
    this.#options = options;
    this.#store = new ContextStore(join(options.dir, "context.json"), options.logger);
  }

  async start(): Promise<void> {
    const { dir, logger, clock } = this.#options;
    await Deno.mkdir(dir, { recursive: true });
    this.#journal = await TextMemory.open(join(dir, "candidates.jsonl"), logger);
    this.#restored = await this.#store.load();
    this.#index = await VectorStore.open(join(dir, "documents-index"), {
      compactEvery: 5_000,
      now: () => clock.now(),
      onRecovery: (message) => logger.warning("Document index: {message}", { message }),
    });
    this.#db = openMemoryDb(join(dir, "memory.db"));
    this.#documents = DocumentStore.over(this.#db, this.#index, clock);
    this.#graph = new GraphStore(this.#db);
  }

  /**
   * Keeps exchanges that left layer 1 as documents (grouped by the input event that produced them); never throws —
   * a failure is logged, and the journal still holds every exchange.
   */
  archive(entries: readonly ContextEntry[]): Promise<void> {
    const groups = new Map<string, ContextEntry[]>();
    for (const entry of entries) groups.set(entry.eventId, [...(groups.get(entry.eventId) ?? []), entry]);
    this.#archiving = this.#archiving.then(() => {
      for (const [eventId, group] of groups) {
        const lines = group.flatMap((entry) => {
          const { message } = entry;
          if (message.role === "user") return [{ speaker: entry.sender, text: untagged(message.content) }];
          if (message.role === "assistant" && message.content) return [{ speaker: "butler", text: message.content }];
          return [];
        });
        if (!lines.length) continue;
        try {
          this.#documents?.add({ lines, time: group[0]!.time, provenance: [eventId] });
        } catch (error) {
          this.#options.logger.error("Keeping an exchange as a document failed: {error}", { error });
        }
      }
    });
    return this.#archiving;
  }

  /**
   * The best of layers 1 and 2 for a query, best first.
   *
   * @example
   * ```ts
   * memory.recall("when do the bins go out", 5); // [{ kind: "document", text: "owner: …", score: 0.4, … }]
   * ```
   */
  async recall(query: string, k = 5): Promise<RecallItem[]> {
    await this.#archiving;
    const items: RecallItem[] = (this.#documents?.search(query, k) ?? []).map((hit) => ({
      kind: "document",
      text: hit.document.text,
      score: Math.round(hit.score * 1000) / 1000,
      time: hit.document.created,
      provenance: hit.document.provenance,
    }));
    const records = (this.#context?.records() ?? []).filter((entry) => entry.message.role !== "tool");
    const texts = records.map((entry) => untagged(entry.message.content ?? ""));
    similarities(texts, query).forEach((score, index) => {
      if (score <= 0) return;
      const entry = records[index]!;
      items.push({
        kind: "context",
        text: texts[index]!,
        score: Math.round(score * 1000) / 1000,
        time: entry.time,
        provenance: [entry.eventId],
      });
    });
    return items.sort((a, b) => b.score - a.score).slice(0, k);
  }

  /**
   * Documents matching a query, for inspection (`/api/memory/documents`): not counted as an access.
   *
   * @example
   * ```ts
   * memory.inspectDocuments("spare key", 5); // [{ id, summary, created, hits, provenance, score }]
   * ```
   */
  inspectDocuments(query: string, k: number): Array<Record<string, unknown>> {
    return (this.#documents?.search(query, k, false) ?? []).map(({ document, score }) => ({
      id: document.id,
      summary: document.summary,
      text: document.text,
      created: new Date(document.created).toISOString(),
      last_accessed: new Date(document.lastAccessed).toISOString(),
      hits: document.hits,
      provenance: document.provenance,
      score: Math.round(score * 1000) / 1000,
    }));
  }

  /** The tools: `memory_recall`. */
  tools(): Tool[] {
    return [{
      name: "memory_recall",
      description:
        "Recall what was said in this household beyond the current conversation: earlier exchanges (documents) and the recent context, best first, with when and in which message. Use it when someone refers to something said before.",
      parameters: {
        type: "object",
        properties: {
          query: { type: "string", minLength: 1, maxLength: 500 },
          k: { type: "integer", minimum: 1, maximum: 20, description: "How many items (default 5)" },
        },
        required: ["query"],
        additionalProperties: false,
      },
      allow: "household",
      execute: async (args) => {
        const items = await this.recall(args.query as string, (args.k as number | undefined) ?? 5);
        if (!items.length) return "Nothing in memory matches that.";
        return items.map((item) => ({ ...item, time: new Date(item.time).toISOString() }));
      },
    }];
  }

  /** The reference block's memory part: up to three documents that match the message, by summary. */
  reference(input: PromptInput, _history: readonly HistoryEntry[]): PromptSection | undefined {
    const hits = (this.#documents?.search(input.text, 3, false) ?? []).filter((hit) => hit.score >= SUMMARY_MIN_SCORE);
    if (!hits.length) return undefined;
    return {
      title: "Earlier in this household (memory; memory_recall for more)",
      body: hits.map((hit) => `- ${new Date(hit.document.created).toISOString().slice(0, 16)} ${hit.document.summary}`)
        .join("\n"),
    };
  }

  jobs(): JobSpec[] {
    return [{ name: "reindex", everyMs: this.#options.jobEveryMs ?? 1_800_000, run: () => this.#index!.reindex() }];
  }

  /** The context saved by the last run (empty when there was none or it could not be used). */
  get restored(): ContextEntry[] {
    return this.#restored;
  }

  /** The context to save after every turn. */
  keep(context: ContextWindow): void {
    this.#context = context;
  }

  /** Writes the exchange to the journal and saves the context. */
  async afterTurn(turn: TurnRecord): Promise<void> {
    const journal = this.#journal;
    if (!journal) return;
    const base = { eventId: turn.eventId, time: turn.time, source: turn.source };
    await journal.append({ ...base, role: "user", sender: turn.sender, text: turn.text });
    await journal.append({ ...base, role: "assistant", sender: "butler", text: turn.reply });
    // Layer 1 is saved on the heartbeat, not per turn (an fsync per turn costs the turn's budget); the journal already
    // holds every exchange, so a crash loses at most a heartbeat's worth of context continuity, never what was said.
    this.#contextChanged = true;
  }

  async heartbeat(): Promise<void> {
    await this.#journal?.sync();
    await this.#index?.sync();
    if (this.#contextChanged && this.#context) {
      this.#contextChanged = false;
      await this.#store.save(this.#context.records());
    }
  }

  async stop(): Promise<void> {
    if (this.#context) await this.#store.save(this.#context.records());
    await this.#store.flush();
    await this.#archiving;
    await this.#journal?.close();
    this.#db?.close();
    await this.#index?.close();
  }

  status(): Record<string, unknown> {
    return {
      candidates: this.#journal?.count ?? 0,
      context_saves: this.#store.saves,
      documents: this.#documents?.size ?? 0,
      ...this.#graph?.counts(),
    };
  }
}
