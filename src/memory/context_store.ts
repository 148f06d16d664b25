/**
 * Layer 1 survives a restart: the context's entries, with their provenance, saved in the data dir (atomically; the
 * newest save wins — the memory service saves on the heartbeat and at stop) and restored at start. A file that cannot be read as a valid context is set
 * aside and homed starts with an empty one — it never starts with a context that breaks the tool-call pairing.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import type { ContextEntry } from "../context/context_window.ts";
import { atomicWriteText } from "../fs/atomic_write.ts";
import { LinkError, readContainedText } from "../fs/contained.ts";
import type { StoreHealth } from "../fs/store_health.ts";
import { dirname } from "node:path";

/** Why a saved context cannot be used, or `undefined` when it is a valid sequence. */
export function contextProblem(entries: unknown): string | undefined {
  if (!Array.isArray(entries)) return "it is not a list";
  const pending = new Set<string>();
  for (const [index, entry] of entries.entries()) {
    const e = entry as Partial<ContextEntry> | null;
    if (
      !e || typeof e.eventId !== "string" || typeof e.time !== "number" || typeof e.source !== "string" ||
      typeof e.sender !== "string" || !e.message || typeof e.message !== "object"
    ) {
      return `entry ${index} is not a context entry`;
    }
    const message = e.message as { role?: unknown; tool_call_id?: unknown; tool_calls?: Array<{ id?: unknown }> };
    if (index === 0 && message.role !== "user") return "it does not start with a user message";
    if (message.role === "tool") {
      if (!pending.delete(String(message.tool_call_id))) {
        return `entry ${index} answers a tool call that is not pending`;
      }
      continue;
    }
    if (pending.size) return `entry ${index} comes before the results of tool calls`;
    if (!["user", "assistant"].includes(String(message.role))) return `entry ${index} has role ${String(message.role)}`;
    for (const call of message.tool_calls ?? []) pending.add(String(call.id));
  }
  return pending.size ? "it ends with unanswered tool calls" : undefined;
}

/** Saves and restores the context. */
export class ContextStore {
  readonly path: string;
  #logger: Logger;
  #saving: Promise<void> = Promise.resolve();
  #saves = 0;
  #health: Pick<StoreHealth, "failed" | "succeeded"> | undefined;

  /**
   * @example
   * ```ts
   * import { join } from "node:path";
   * import { ContextWindow } from "../context/context_window.ts";
   * import { log } from "../log/logging.ts";
   *
   * const dataDir = "/var/lib/homed"; // daemon.data_dir
   * const store = new ContextStore(join(dataDir, "memory", "context.json"), log("memory"));
   * const context = new ContextWindow({ maxEntries: 30, entries: await store.load() });
   * ```
   */
  constructor(path: string, logger: Logger, health?: Pick<StoreHealth, "failed" | "succeeded">) {
    this.path = path;
    this.#logger = logger;
    this.#health = health;
  }

  /** The saved entries, or none (a missing file, or an unusable one, set aside and reported). */
  async load(): Promise<ContextEntry[]> {
    let text: string | undefined;
    let problem: string | undefined;
    try {
      text = (await readContainedText(dirname(this.path), this.path))?.text;
    } catch (error) {
      if (!(error instanceof LinkError)) throw error;
      problem = error.message;
    }
    if (text === undefined && !problem) return [];
    let entries: unknown;
    if (!problem) {
      try {
        entries = (JSON.parse(text!) as { entries?: unknown }).entries;
        problem = contextProblem(entries);
      } catch (error) {
        problem = `it is not JSON (${(error as Error).message})`;
      }
    }
    if (problem) {
      const aside = `${this.path}.bad-${Date.now()}`;
      await Deno.rename(this.path, aside).catch(() => {});
      this.#logger.warning("The saved context {path} cannot be used ({problem}); kept it as {aside}, starting empty", {
        path: this.path,
        problem,
        aside,
      });
      return [];
    }
    this.#logger.info("Restored {count} context entries", { count: (entries as unknown[]).length });
    return entries as ContextEntry[];
  }

  /**
   * Saves `entries` after any save in progress; a failure is logged (the next turn saves again). `durable`: the new
   * file's name is fsync'd too, for a save a person is told of (a forgetting). On a full or read-only disk the old
   * file stays whole (the write goes through a temporary file, removed), the store is marked degraded in the health
   * given to the constructor, and the next save tries again.
   */
  save(entries: readonly ContextEntry[], options: { durable?: boolean } = {}): Promise<void> {
    const text = `${JSON.stringify({ version: 1, entries })}\n`;
    this.#saving = this.#saving.then(async () => {
      try {
        await Deno.mkdir(dirname(this.path), { recursive: true });
        await atomicWriteText(this.path, text, { durable: options.durable ?? false });
        this.#saves++;
        this.#health?.succeeded("context.json");
      } catch (error) {
        if (this.#health?.failed("context.json", this.path, error)) {
          this.#logger.warning("Could not save the context to {path} (the disk): {error}", { path: this.path, error });
          return;
        }
        this.#logger.error("Saving the context to {path} failed: {error}", { path: this.path, error });
      }
    });
    return this.#saving;
  }

  /** Waits for the saves in progress. */
  flush(): Promise<void> {
    return this.#saving;
  }

  /** Saves done by this process. */
  get saves(): number {
    return this.#saves;
  }
}
