/**
 * The memory service, as far as it is built: every exchange is written to the TextMemory journal by the after-turn
 * hook (the distiller's input later), and layer 1 is saved after every turn and restored at start. Layers 2 and 3,
 * the distiller and recall come with the rest of the memory work.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import { join } from "node:path";
import type { ContextEntry, ContextWindow } from "../agent/core/context.ts";
import type { PromptContributor, TurnRecord } from "../prompt/contributor.ts";
import type { Service } from "../service/service.ts";
import { ContextStore } from "./context_store.ts";
import { TextMemory } from "./text/text_memory.ts";

/** Options of {@link MemoryService}. */
export interface MemoryServiceOptions {
  /** `data_dir/memory`. */
  dir: string;
  logger: Logger;
}

/** The `memory` service. */
export class MemoryService implements Service, PromptContributor {
  readonly name = "memory";
  #options: MemoryServiceOptions;
  #journal: TextMemory | undefined;
  #store: ContextStore;
  #restored: ContextEntry[] = [];
  #context: ContextWindow | undefined;

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
    await Deno.mkdir(this.#options.dir, { recursive: true });
    this.#journal = await TextMemory.open(join(this.#options.dir, "candidates.jsonl"), this.#options.logger);
    this.#restored = await this.#store.load();
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
    if (this.#context) await this.#store.save(this.#context.records());
  }

  async heartbeat(): Promise<void> {
    await this.#journal?.sync();
  }

  async stop(): Promise<void> {
    if (this.#context) await this.#store.save(this.#context.records());
    await this.#store.flush();
    await this.#journal?.close();
  }

  status(): Record<string, unknown> {
    return { candidates: this.#journal?.count ?? 0, context_saves: this.#store.saves };
  }
}
