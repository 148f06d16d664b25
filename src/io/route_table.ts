/**
 * Input source (or prefix) → default output channel. Config gives the defaults; changes made at run time are kept
 * in the data dir and survive restarts.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import { dirname } from "node:path";
import { atomicWriteText } from "../fs/atomic_write.ts";
import { LinkError, readContainedText } from "../fs/contained.ts";
import { compareText } from "../text/compare_text.ts";

/** One row of the table, as `/api/channels` shows it. */
export interface Route {
  /** A source (`http`) or a prefix ending in a colon (`qq:group:`). */
  source: string;
  channel: string;
  origin: "config" | "runtime";
}

/** Stores the run-time routes; `undefined` for a table that keeps nothing (tests). */
export interface RouteStore {
  load(): Promise<Record<string, string>>;
  save(routes: Record<string, string>): Promise<void>;
}

/**
 * A route store in one JSON file. A file that cannot be parsed, or is a link, is kept aside as `<file>.bad-<time>`
 * (never silently overwritten, never followed) and the table starts from the config's routes.
 *
 * @example
 * ```ts
 * import { log } from "../log/logging.ts";
 *
 * const store = fileRouteStore("/var/lib/homed/routes.json", log("io"));
 * ```
 */
export function fileRouteStore(path: string, logger: Logger, now: () => number = Date.now): RouteStore {
  return {
    async load() {
      try {
        // A link in the data dir is not followed: it is treated like an unreadable file (set aside, not read).
        const found = await readContainedText(dirname(path), path);
        if (!found) return {};
        const parsed: unknown = JSON.parse(found.text);
        if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
          throw new TypeError("not a JSON object");
        }
        const routes: Record<string, string> = {};
        for (const [source, channel] of Object.entries(parsed)) {
          if (typeof channel !== "string") throw new TypeError(`route "${source}" is not a string`);
          routes[source] = channel;
        }
        return routes;
      } catch (error) {
        if (!(error instanceof LinkError || error instanceof SyntaxError || error instanceof TypeError)) throw error;
        const aside = `${path}.bad-${now()}`;
        await Deno.rename(path, aside);
        logger.warning("Route file {path} was unreadable ({reason}); kept it as {aside} and started from config", {
          path,
          reason: (error as Error).message,
          aside,
        });
        return {};
      }
    },
    save: async (routes) => {
      await atomicWriteText(path, `${JSON.stringify(routes, null, 2)}\n`);
    },
  };
}

/** The route table. Reads are synchronous; {@link RouteTable.set} persists before it returns. */
export class RouteTable {
  #config: Readonly<Record<string, string>>;
  #runtime: Record<string, string>;
  #store: RouteStore | undefined;

  /**
   * @example
   * ```ts
   * const table = new RouteTable({ "qq:group:": "qq:private:10001" }, {}, undefined);
   * table.resolve("qq:group:42"); // "qq:private:10001"
   * ```
   */
  constructor(config: Record<string, string>, runtime: Record<string, string>, store: RouteStore | undefined) {
    this.#config = { ...config };
    this.#runtime = { ...runtime };
    this.#store = store;
  }

  /**
   * Opens a table with its persisted run-time routes.
   *
   * @example
   * ```ts
   * import { join } from "node:path";
   * import { loadConfig } from "../config/load.ts";
   * import { log } from "../log/logging.ts";
   *
   * const { config } = await loadConfig({ readEnv: (name) => Deno.env.get(name), cwd: Deno.cwd() });
   * const path = join(config.daemon.data_dir, "routes.json");
   * const table = await RouteTable.open(config.io.routes, fileRouteStore(path, log("io")));
   * ```
   */
  static async open(config: Record<string, string>, store: RouteStore): Promise<RouteTable> {
    return new RouteTable(config, await store.load(), store);
  }

  /**
   * The channel for a source: an exact route, else the longest matching prefix route, else the source itself
   * (a reply goes back where the message came from).
   */
  resolve(source: string): string {
    const merged = { ...this.#config, ...this.#runtime };
    const exact = merged[source];
    if (exact !== undefined) return exact;
    let best: string | undefined;
    for (const key of Object.keys(merged)) {
      if (key.endsWith(":") && source.startsWith(key) && (best === undefined || key.length > best.length)) best = key;
    }
    return best === undefined ? source : merged[best]!;
  }

  /** Sets a run-time route and persists it. */
  async set(source: string, channel: string): Promise<void> {
    const next = { ...this.#runtime, [source]: channel };
    await this.#store?.save(next);
    this.#runtime = next;
  }

  /** Every route, run-time ones overriding config ones. */
  entries(): Route[] {
    const rows = new Map<string, Route>();
    for (const [source, channel] of Object.entries(this.#config)) {
      rows.set(source, { source, channel, origin: "config" });
    }
    for (const [source, channel] of Object.entries(this.#runtime)) {
      rows.set(source, { source, channel, origin: "runtime" });
    }
    return [...rows.values()].sort((a, b) => compareText(a.source, b.source));
  }
}
