/**
 * Watching the plugin folders (`plugins.watch`): a burst of changes under the roots that exist becomes one reload,
 * after the folders stayed quiet for the debounce time; a root created (or removed) later is noticed on the heartbeat,
 * which watches again.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import type { SkillRoot } from "./discovery.ts";

/** The watch over the plugin roots. */
export class RootWatch {
  #roots: readonly SkillRoot[];
  #debounceMs: number;
  #reload: () => Promise<unknown>;
  #logger: Logger;
  #watcher: Deno.FsWatcher | undefined;
  /** The roots the watcher covers; a root created later is noticed on the heartbeat. */
  #watched: string[] = [];
  #debounce: ReturnType<typeof setTimeout> | undefined;

  /**
   * @example
   * ```ts
   * import { getLogger } from "@logtape/logtape";
   *
   * const watch = new RootWatch(
   *   [{ dir: "/srv/homed/plugins", source: "paths.plugins" }],
   *   250,
   *   () => Promise.resolve(),
   *   getLogger(["homed", "plugins"]),
   * );
   * watch.start();
   * watch.stop();
   * ```
   */
  constructor(roots: readonly SkillRoot[], debounceMs: number, reload: () => Promise<unknown>, logger: Logger) {
    this.#roots = roots;
    this.#debounceMs = debounceMs;
    this.#reload = reload;
    this.#logger = logger;
  }

  /** The roots that exist now. */
  #existingRoots(): string[] {
    return this.#roots.flatMap((root) => {
      try {
        return Deno.statSync(root.dir).isDirectory ? [root.dir] : [];
      } catch {
        return [];
      }
    });
  }

  /**
   * Watches the roots that exist now; changes followed by `debounceMs` of quiet reload.
   *
   * @example
   * ```ts
   * declare const watch: RootWatch;
   * watch.start();
   * ```
   */
  start(): void {
    const roots = this.#existingRoots();
    this.#watched = roots;
    if (!roots.length) return;
    const watcher = Deno.watchFs(roots, { recursive: true });
    this.#watcher = watcher;
    (async () => {
      for await (const event of watcher) {
        if (event.kind === "access") continue;
        clearTimeout(this.#debounce);
        this.#debounce = setTimeout(() => {
          this.#debounce = undefined;
          this.#reload().catch((error) => this.#logger.error("Plugins: reload failed: {error}", { error }));
        }, this.#debounceMs);
      }
    })().catch((error) => this.#logger.warning("Plugins: the file watch stopped: {error}", { error }));
  }

  /**
   * When the roots that exist are no longer those watched, watches them instead and returns `true` (the caller
   * reloads: what is in a new root was never seen).
   *
   * @example
   * ```ts
   * declare const watch: RootWatch;
   * declare const reload: () => Promise<void>;
   * if (watch.rewatch()) await reload();
   * ```
   */
  rewatch(): boolean {
    if (this.#existingRoots().join("\n") === this.#watched.join("\n")) return false;
    this.#watcher?.close();
    this.start();
    return true;
  }

  /**
   * Stops watching, and drops a reload still waiting for quiet.
   *
   * @example
   * ```ts
   * declare const watch: RootWatch;
   * watch.stop();
   * ```
   */
  stop(): void {
    this.#watcher?.close();
    clearTimeout(this.#debounce);
  }
}
