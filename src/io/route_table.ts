/**
 * Input source (or prefix) → default output channel. Config gives the defaults; changes made at run time are kept
 * in the data dir and survive restarts. A run-time route is the source's (the owner's, for everyone on it) or one
 * sender's own (a household member's, for her own messages from that source only).
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import { dirname } from "node:path";
import { atomicWriteText } from "../fs/atomic_write.ts";
import { DamagedFiles } from "../fs/set_aside.ts";
import { LinkError, readContainedText } from "../fs/contained.ts";
import { compareText } from "../text/compare_text.ts";

/** One row of the table, as `/api/channels` shows it. */
export interface Route {
  /** A source (`http`) or a prefix ending in a colon (`qq:group:`). */
  source: string;
  /**
   * Whose messages from `source` it routes, for a route a household member remembered for themself; absent for a route
   * of the whole source (the config's and the owner's), which applies to everyone on it.
   */
  sender?: string;
  channel: string;
  origin: "config" | "runtime";
}

/**
 * The run-time routes: the source's own (the owner's, for everyone on it) and each sender's own, by source then
 * sender.
 */
export interface RuntimeRoutes {
  routes: Record<string, string>;
  senders: Record<string, Record<string, string>>;
}

/** Stores the run-time routes; `undefined` for a table that keeps nothing (tests). */
export interface RouteStore {
  load(): Promise<RuntimeRoutes>;
  save(routes: RuntimeRoutes): Promise<void>;
}

/** The version of `routes.json` that holds senders' own routes; a file without one is an older homed's. */
const FILE_VERSION = 2;

/**
 * Reads the text of a route file. An older homed's file — one JSON object of source → channel, without `version` — is
 * the owner's: each of its routes is the source's. A version-2 file is `{version: 2, routes: {source: channel},
 * senders: {source: {sender: channel}}}`. Throws `SyntaxError` or `TypeError` for anything else.
 *
 * @example
 * ```ts
 * parseRouteFile('{"http": "qq:private:7"}'); // { routes: { http: "qq:private:7" }, senders: {} }
 * parseRouteFile('{"version": 2, "routes": {}, "senders": {"http": {"alice": "qq:private:8"}}}');
 * // { routes: {}, senders: { http: { alice: "qq:private:8" } } }
 * ```
 */
export function parseRouteFile(text: string): RuntimeRoutes {
  const parsed: unknown = JSON.parse(text);
  if (!isObject(parsed)) throw new TypeError("not a JSON object");
  if (!("version" in parsed) || typeof parsed.version === "string") {
    // An older homed's file; a source named "version" is one of its routes like any other.
    return { routes: channelsOf(parsed, "route"), senders: {} };
  }
  if (parsed.version !== FILE_VERSION) throw new TypeError(`version ${JSON.stringify(parsed.version)} is not 2`);
  const routes = channelsOf(objectField(parsed, "routes"), "route");
  const senders: Record<string, Record<string, string>> = {};
  for (const [source, bySender] of Object.entries(objectField(parsed, "senders"))) {
    if (!isObject(bySender)) throw new TypeError(`senders of "${source}" is not an object`);
    senders[source] = channelsOf(bySender, `route of "${source}" for`);
  }
  return { routes, senders };
}

/**
 * The text of a route file for `routes`: while no sender has a route of their own, an older homed's format (so an
 * older homed still reads it); else version 2.
 *
 * @example
 * ```ts
 * routeFileText({ routes: { http: "qq:private:7" }, senders: {} }); // '{\n  "http": "qq:private:7"\n}\n'
 * ```
 */
export function routeFileText(routes: RuntimeRoutes): string {
  const senders = Object.fromEntries(Object.entries(routes.senders).filter(([, bySender]) => hasKeys(bySender)));
  const shape = hasKeys(senders) ? { version: FILE_VERSION, routes: routes.routes, senders } : routes.routes;
  return `${JSON.stringify(shape, null, 2)}\n`;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** `object[name]`, which must be an object when present; `{}` when absent. */
function objectField(object: Record<string, unknown>, name: string): Record<string, unknown> {
  const value = object[name];
  if (value === undefined) return {};
  if (!isObject(value)) throw new TypeError(`${name} is not an object`);
  return value;
}

function hasKeys(value: object): boolean {
  return Object.keys(value).length > 0;
}

function channelsOf(object: Record<string, unknown>, what: string): Record<string, string> {
  const channels: Record<string, string> = {};
  for (const [key, channel] of Object.entries(object)) {
    if (typeof channel !== "string") throw new TypeError(`${what} "${key}" is not a string`);
    channels[key] = channel;
  }
  return channels;
}

/**
 * A route store in one JSON file. A file that cannot be parsed (cut in half, say), or is a link, is set aside as
 * `<file>.damaged-<ISO time>` through `damaged` (`fs/set_aside.ts`: never silently overwritten, never followed, and
 * recorded for `/api/status`) and the table starts from the config's routes. An older homed's file is read as the
 * owner's routes ({@link parseRouteFile}).
 *
 * @example
 * ```ts
 * import { log } from "../log/logging.ts";
 * import { DamagedFiles } from "../fs/set_aside.ts";
 *
 * const store = fileRouteStore("/var/lib/homed/routes.json", log("io"), Date.now, new DamagedFiles());
 * ```
 */
export function fileRouteStore(
  path: string,
  logger: Logger,
  now: () => number = Date.now,
  damaged: DamagedFiles = new DamagedFiles(now),
): RouteStore {
  return {
    async load() {
      try {
        // A link in the data dir is not followed: it is treated like an unreadable file (set aside, not read).
        const found = await readContainedText(dirname(path), path);
        if (!found) return { routes: {}, senders: {} };
        return parseRouteFile(found.text);
      } catch (error) {
        if (!(error instanceof LinkError || error instanceof SyntaxError || error instanceof TypeError)) throw error;
        const reason = (error as Error).message;
        const { moved_to: aside } = damaged.setAside(path, `it cannot be read as routes (${reason})`, {
          kept: {
            en: "the config's routes (the run-time ones are in the file set aside)",
            zh: "配置文件里的路由（运行时改的路由在移走的文件里）",
          },
        });
        logger.warning("Route file {path} was unreadable ({reason}); kept it as {aside} and started from config", {
          path,
          reason,
          aside,
        });
        return { routes: {}, senders: {} };
      }
    },
    save: async (routes) => {
      await atomicWriteText(path, routeFileText(routes));
    },
  };
}

/**
 * The route table. Reads are synchronous; {@link RouteTable.set} and {@link RouteTable.setForSender} persist before
 * they return.
 *
 * A route is the whole source's — the config's (`io.routes`) and the ones the owner remembers, for everyone on that
 * source — or one sender's own, remembered by a household member for their own messages from that source only. A
 * sender's own route comes first for that sender; nobody else's replies follow it.
 */
export class RouteTable {
  #config: Readonly<Record<string, string>>;
  #runtime: Record<string, string>;
  #senders: Record<string, Record<string, string>>;
  #store: RouteStore | undefined;

  /**
   * `runtime` is the source's run-time routes (the owner's); `senders` each sender's own, by source then sender.
   *
   * @example
   * ```ts
   * const table = new RouteTable({ "qq:group:": "qq:private:10001" }, {}, undefined, {
   *   http: { alice: "qq:private:30003000" },
   * });
   * table.resolve("qq:group:42"); // "qq:private:10001"
   * table.resolve("http", "alice"); // "qq:private:30003000"
   * table.resolve("http", "owner"); // "http"
   * ```
   */
  constructor(
    config: Record<string, string>,
    runtime: Record<string, string>,
    store: RouteStore | undefined,
    senders: Record<string, Record<string, string>> = {},
  ) {
    this.#config = { ...config };
    this.#runtime = { ...runtime };
    this.#senders = Object.fromEntries(Object.entries(senders).map(([source, bySender]) => [source, { ...bySender }]));
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
    const { routes, senders } = await store.load();
    return new RouteTable(config, routes, store, senders);
  }

  /**
   * The channel for a message from `source`: the route `sender` remembered for their own messages from that source,
   * if any; else the source's exact route, else its longest matching prefix route, else the source itself (a reply
   * goes back where the message came from).
   *
   * @example
   * ```ts
   * const table = new RouteTable({ http: "qq:private:1" }, {}, undefined, { http: { alice: "qq:private:2" } });
   * table.resolve("http", "alice"); // "qq:private:2"
   * table.resolve("http", "owner"); // "qq:private:1"
   * table.resolve("http"); // "qq:private:1"
   * ```
   */
  resolve(source: string, sender?: string): string {
    const own = sender === undefined ? undefined : this.#senders[source]?.[sender];
    if (own !== undefined) return own;
    const merged = { ...this.#config, ...this.#runtime };
    const exact = merged[source];
    if (exact !== undefined) return exact;
    let best: string | undefined;
    for (const key of Object.keys(merged)) {
      if (key.endsWith(":") && source.startsWith(key) && (best === undefined || key.length > best.length)) best = key;
    }
    return best === undefined ? source : merged[best]!;
  }

  /** Sets a run-time route of the whole source (for everyone on it: the owner's to set) and persists it. */
  async set(source: string, channel: string): Promise<void> {
    const next = { ...this.#runtime, [source]: channel };
    await this.#store?.save({ routes: next, senders: this.#senders });
    this.#runtime = next;
  }

  /**
   * Sets the route of `sender`'s own messages from `source` (nobody else's) and persists it.
   *
   * @example
   * ```ts
   * const table = new RouteTable({}, {}, undefined);
   * await table.setForSender("http", "alice", "qq:private:30003000");
   * table.resolve("http", "alice"); // "qq:private:30003000"
   * table.resolve("http", "owner"); // "http"
   * ```
   */
  async setForSender(source: string, sender: string, channel: string): Promise<void> {
    const next = { ...this.#senders, [source]: { ...this.#senders[source], [sender]: channel } };
    await this.#store?.save({ routes: this.#runtime, senders: next });
    this.#senders = next;
  }

  /**
   * Every route, run-time ones overriding config ones, by source; a source's own route before its senders' (by
   * sender).
   */
  entries(): Route[] {
    const rows = new Map<string, Route>();
    for (const [source, channel] of Object.entries(this.#config)) {
      rows.set(source, { source, channel, origin: "config" });
    }
    for (const [source, channel] of Object.entries(this.#runtime)) {
      rows.set(source, { source, channel, origin: "runtime" });
    }
    const senders: Route[] = Object.entries(this.#senders).flatMap(([source, bySender]) =>
      Object.entries(bySender).map(([sender, channel]) => ({ source, sender, channel, origin: "runtime" as const }))
    );
    return [...rows.values(), ...senders].sort((a, b) =>
      compareText(a.source, b.source) || compareText(a.sender ?? "", b.sender ?? "")
    );
  }
}
