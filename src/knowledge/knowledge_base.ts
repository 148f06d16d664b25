/**
 * The knowledge base: what the butler has learned about the world, kept apart from memory. Files are the truth —
 * `knowledge/<topic>/content.md`, editable by hand — and the TF-IDF store indexes them by section.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import { join, resolve, sep } from "node:path";
import type { Clock } from "../clock.ts";
import { atomicWriteText, syncFolder, writeTextInPlace } from "../fs/atomic_write.ts";
import { checkContained, LinkError, readContainedText } from "../fs/contained.ts";
import { oneLine, withoutControl } from "../text/untrusted.ts";
import type { VectorStore } from "../search/store.ts";
import { tokenize } from "../search/tokenizer.ts";
import { markLearned, parseSections, type Section } from "./sections.ts";
import { topicProblem } from "./topic_name.ts";
import { compareText } from "../text/compare_text.ts";
import { sha256Hex } from "../text/sha256_hex.ts";

/** A search result. */
export interface KnowledgeHit {
  topic: string;
  heading: string;
  score: number;
  snippet: string;
}

/** A topic, as `knowledge_list` and `/api/knowledge` show it. */
export interface TopicInfo {
  topic: string;
  sections: number;
  bytes: number;
  /** Last modification of content.md, ISO 8601. */
  updated: string;
  /** The butler wrote some of it itself (`knowledge_create`): a section carries a learned marker. */
  learned: boolean;
}

/** One topic's file, as `GET /api/knowledge/topics/<topic>` shows it. */
export interface TopicDocument {
  topic: string;
  /** content.md as it is, learned markers included. */
  markdown: string;
  /** Last modification of content.md, ISO 8601. */
  updated: string;
  sections: Array<{ heading: string; learned: boolean }>;
}

/** What {@link KnowledgeBase.write} did. */
export interface TopicWritten {
  topic: string;
  /** Sections of the new content. */
  sections: number;
  /** Size of the new content.md. */
  bytes: number;
  /** The topic did not exist before. */
  created: boolean;
}

/** What a sync changed. */
export interface SyncReport {
  added: string[];
  updated: string[];
  removed: string[];
}

/** Options of {@link KnowledgeBase.open}. */
export interface KnowledgeOptions {
  /** The knowledge folder (`paths.knowledge`). */
  dir: string;
  store: VectorStore;
  clock: Clock;
  logger: Logger;
  /** Longest entry `create` accepts, in characters. */
  maxEntryChars?: number;
  /** Largest content.md `create` will grow, or `write` will write, in bytes (1 MiB). */
  maxFileBytes?: number;
  /**
   * Test seam: called after `create` staged the new content and before it checks for a concurrent edit and replaces
   * the file — where a hand edit would race with it.
   */
  beforeReplace?: (path: string) => Promise<void> | void;
}

/** How often `create` starts over when the file changed under it, before giving up. */
export const CREATE_ATTEMPTS = 5;

/** The largest content.md by default, in bytes. */
export const DEFAULT_MAX_FILE_BYTES = 1024 * 1024;

/** Mode of a content.md that homed creates: readable like a file the user made (umask 022). */
const NEW_FILE_MODE = 0o644;

interface TopicState {
  hash: string;
  mtime: number;
  bytes: number;
  sections: Section[];
}

const FILE = "content.md";

function localDate(ms: number): string {
  const date = new Date(ms);
  return `${date.getFullYear()}-${String(date.getMonth() + 1).padStart(2, "0")}-${
    String(date.getDate()).padStart(2, "0")
  }`;
}

/** The knowledge base. */
export class KnowledgeBase {
  #options: KnowledgeOptions;
  #dir: string;
  #topics = new Map<string, TopicState>();
  #syncing: Promise<SyncReport> | undefined;
  #watcher: Deno.FsWatcher | undefined;
  #watchTimer: ReturnType<typeof setTimeout> | undefined;
  #watching: Promise<void> | undefined;
  #skipped = new Set<string>();
  /** Sync, create and reindex run one at a time, in the order called. */
  #queue: Promise<unknown> = Promise.resolve();

  private constructor(options: KnowledgeOptions) {
    this.#options = options;
    this.#dir = resolve(options.dir);
  }

  /**
   * Opens the knowledge base and indexes what changed since the store last saw it.
   *
   * @example
   * ```ts
   * import { join } from "node:path";
   * import { systemClock } from "../clock.ts";
   * import { log } from "../log/logging.ts";
   * import { VectorStore } from "../search/store.ts";
   *
   * const dataDir = "/var/lib/homed"; // daemon.data_dir
   * const store = await VectorStore.open(join(dataDir, "vector", "knowledge"));
   * const knowledge = await KnowledgeBase.open({
   *   dir: join(dataDir, "knowledge"), // paths.knowledge
   *   store,
   *   clock: systemClock,
   *   logger: log("knowledge"),
   * });
   * knowledge.search("番茄炒蛋怎么做");
   * ```
   */
  static async open(options: KnowledgeOptions): Promise<KnowledgeBase> {
    const base = new KnowledgeBase(options);
    await Deno.mkdir(base.#dir, { recursive: true });
    await base.sync();
    return base;
  }

  #topicPath(topic: string): string {
    const problem = topicProblem(topic);
    if (problem) throw new RangeError(problem);
    const path = resolve(this.#dir, topic, FILE);
    // Defence in depth: validation already rules this out.
    if (!path.startsWith(this.#dir + sep)) {
      throw new RangeError(`Topic name ${JSON.stringify(topic)} escapes the knowledge folder`);
    }
    return path;
  }

  /** Runs `work` after every sync, create and reindex called before it has finished. */
  #serial<T>(work: () => Promise<T>): Promise<T> {
    const result = this.#queue.then(work, work);
    this.#queue = result.catch(() => {});
    return result;
  }

  /** Re-reads changed topics (by mtime and size) and re-indexes them; drops topics whose file is gone. */
  sync(): Promise<SyncReport> {
    // A caller while a sync waits for its turn gets that sync's report.
    this.#syncing ??= this.#serial(() => {
      this.#syncing = undefined;
      return this.#sync();
    });
    return this.#syncing;
  }

  /** Rebuilds the index and writes a new snapshot of it (the memory job), under the same guard as sync and create. */
  reindex(): Promise<void> {
    return this.#serial(() => this.#options.store.reindex());
  }

  async #sync(): Promise<SyncReport> {
    const report: SyncReport = { added: [], updated: [], removed: [] };
    const seen = new Set<string>();
    for await (const entry of Deno.readDir(this.#dir)) {
      if (entry.isSymlink) {
        this.#skip(
          `${join(this.#dir, entry.name)} is a symbolic link; homed does not follow links out of the knowledge folder`,
        );
        continue;
      }
      if (!entry.isDirectory) continue;
      const problem = topicProblem(entry.name);
      if (problem) {
        this.#skip(problem);
        continue;
      }
      try {
        const stat = await checkContained(this.#dir, join(this.#dir, entry.name, FILE));
        if (!stat?.isFile) continue;
        const known = this.#topics.get(entry.name);
        const mtime = stat.mtime?.getTime() ?? 0;
        if (known && known.mtime === mtime && known.bytes === stat.size) {
          seen.add(entry.name);
          continue;
        }
        const changed = await this.#indexTopic(entry.name, mtime);
        if (changed === undefined) continue;
        seen.add(entry.name);
        if (changed) (known ? report.updated : report.added).push(entry.name);
      } catch (error) {
        if (!(error instanceof LinkError)) throw error;
        this.#skip(error.message);
      }
    }
    for (const topic of new Set([...this.#topics.keys(), ...this.#storedTopics()])) {
      if (seen.has(topic)) continue;
      this.#dropTopic(topic);
      this.#topics.delete(topic);
      report.removed.push(topic);
    }
    if (report.added.length + report.updated.length + report.removed.length) {
      this.#options.logger.info("Knowledge synced: {added} added, {updated} updated, {removed} removed", {
        added: report.added.length,
        updated: report.updated.length,
        removed: report.removed.length,
      });
    }
    return report;
  }

  /** Logs why a folder or file is left out, once per reason. */
  #skip(reason: string): void {
    if (this.#skipped.has(reason)) return;
    this.#skipped.add(reason);
    this.#options.logger.warning("Skipping in the knowledge folder: {reason}", { reason });
  }

  #storedTopics(): Set<string> {
    const topics = new Set<string>();
    for (const id of this.#options.store.index.ids()) topics.add(id.slice(0, id.lastIndexOf("#")));
    return topics;
  }

  #dropTopic(topic: string): void {
    for (const id of this.#options.store.index.ids()) {
      if (id.slice(0, id.lastIndexOf("#")) === topic) this.#options.store.delete(id);
    }
  }

  /**
   * Reads and indexes one topic; false when the store already held exactly this content (a restart), `undefined`
   * when the file is gone. Throws {@link LinkError} for a link.
   */
  async #indexTopic(topic: string, mtime: number): Promise<boolean | undefined> {
    const found = await readContainedText(this.#dir, join(this.#dir, topic, FILE));
    if (!found) return undefined;
    const text = found.text;
    const hash = await sha256Hex(text);
    const sections = parseSections(text, topic);
    const state = { hash, mtime, bytes: new TextEncoder().encode(text).length, sections };
    const store = this.#options.store;
    const first = store.index.get(`${topic}#0`);
    const storedCount = this.#options.store.index.ids().filter((id) => id.startsWith(`${topic}#`)).length;
    const previous = this.#topics.get(topic);
    this.#topics.set(topic, state);
    if (first?.meta.fileHash === hash && storedCount === sections.length) {
      return previous !== undefined && previous.hash !== hash;
    }
    this.#dropTopic(topic);
    store.putMany(sections.map((section) => ({
      id: `${topic}#${section.index}`,
      text: `${topic} ${section.text}`,
      meta: { topic, heading: section.heading, fileHash: hash, time: mtime },
    })));
    return true;
  }

  /**
   * The best sections for a query.
   *
   * @example
   * ```ts
   * declare const knowledge: KnowledgeBase;
   * knowledge.search("how to reset the router", 3);
   * // [{ topic: "smart_home", heading: "Router keeps dropping · 路由器掉线", score: 0.337,
   * //    snippet: "Restart the router (unplug for 30 seconds). If it keeps dropping, move it off the floor…" }, …]
   * ```
   */
  search(query: string, k = 5): KnowledgeHit[] {
    return this.#options.store.search(query, { k }).flatMap((hit) => {
      const topic = String(hit.meta.topic);
      const index = Number(hit.id.slice(hit.id.lastIndexOf("#") + 1));
      const section = this.#topics.get(topic)?.sections[index];
      if (!section) return [];
      return [{
        topic,
        heading: String(hit.meta.heading),
        score: Math.round(hit.score * 1000) / 1000,
        snippet: snippet(section.text, query),
      }];
    });
  }

  /**
   * Adds knowledge: a new topic, or a dated section appended to an existing one. Throws `RangeError` naming the bad
   * topic, or the limit an entry or file would break.
   *
   * @example
   * ```ts
   * declare const knowledge: KnowledgeBase;
   * await knowledge.create("cooking", "Rice: 1 cup rice to 1.2 cups water, 12 minutes.", "Rice cooker ratio");
   * // { topic: "cooking", created: false, heading: "2026-12-01 Rice cooker ratio" } (today's date; appended)
   * ```
   */
  async create(
    topic: string,
    content: string,
    title?: string,
  ): Promise<{ topic: string; created: boolean; heading: string }> {
    const path = this.#topicPath(topic);
    const maxChars = this.#options.maxEntryChars ?? 16_000;
    if (typeof content !== "string" || content.trim() === "") {
      throw new RangeError("Knowledge content must be a non-empty text");
    }
    if (content.length > maxChars) {
      throw new RangeError(`Knowledge content has ${content.length} characters; allowed: at most ${maxChars}`);
    }
    // Model output goes into the user's file and the log: no control characters (ANSI escapes), one-line titles.
    const cleanTitle = oneLine(title ?? "").slice(0, 120);
    const date = localDate(this.#options.clock.now());
    const heading = `${date}${cleanTitle ? ` ${cleanTitle}` : ""}`;
    // Marked as learned above its heading (and any heading inside it), so it can be told from what people wrote.
    const entry = markLearned(`## ${heading}\n\n${withoutControl(content).trim()}\n`, date);
    return await this.#serial(async () => {
      await Deno.mkdir(join(this.#dir, topic), { recursive: true });
      const created = await this.#appendEntry(topic, path, entry);
      // A new topic's folder is a new name in the knowledge folder: on disk too before the tool reports the entry.
      if (created) await syncFolder(this.#dir);
      const stat = await Deno.stat(path);
      await this.#indexTopic(topic, stat.mtime?.getTime() ?? 0);
      this.#options.logger.info("Learned {heading} in {topic}", { heading, topic });
      return { topic, created, heading };
    });
  }

  /**
   * Appends `entry` to the topic's file without ever writing over a hand edit: the new content is staged beside the
   * file and replaces it only if the file still holds exactly what the entry was added to; otherwise it starts over
   * with the edited file. Mode and owner of an existing file are kept. Returns whether the file was created.
   */
  async #appendEntry(topic: string, path: string, entry: string): Promise<boolean> {
    const maxBytes = this.maxFileBytes;
    for (let attempt = 1; attempt <= CREATE_ATTEMPTS; attempt++) {
      const before = await readContainedText(this.#dir, path);
      const next = before === undefined ? `# ${topic}\n\n${entry}` : `${before.text.replace(/\s*$/, "")}\n\n${entry}`;
      const bytes = new TextEncoder().encode(next).length;
      if (bytes > maxBytes) {
        throw new RangeError(`Topic "${topic}" would grow to ${bytes} bytes; allowed: at most ${maxBytes} per topic`);
      }
      const unchanged = async () => {
        await this.#options.beforeReplace?.(path);
        return (await readContainedText(this.#dir, path))?.text === before?.text;
      };
      const mode = before?.info.mode !== null && before?.info.mode !== undefined
        ? before.info.mode & 0o7777
        : NEW_FILE_MODE;
      const owner = before ? { uid: before.info.uid, gid: before.info.gid } : undefined;
      let replaced: boolean;
      try {
        replaced = await atomicWriteText(path, next, {
          mode,
          ...(owner ? { owner } : {}),
          beforeReplace: unchanged,
          durable: true,
        });
      } catch (error) {
        if (!(error instanceof Deno.errors.PermissionDenied) || !before) throw error;
        // homed may not give the file its owner back (it belongs to someone else): write it in place instead, which
        // keeps owner and mode, after the same check for a concurrent edit.
        if (!(await unchanged())) continue;
        await writeTextInPlace(path, next);
        replaced = true;
      }
      if (replaced) return before === undefined;
      this.#options.logger.info("{path} changed while an entry was being added; starting over ({attempt})", {
        path,
        attempt,
      });
    }
    throw new Error(
      `${path} kept changing while homed tried to add an entry (${CREATE_ATTEMPTS} attempts); nothing was written, ` +
        `so no hand edit was lost — try again once the file is saved`,
    );
  }

  /** Every topic, by name. */
  list(): TopicInfo[] {
    return [...this.#topics.entries()].sort(([a], [b]) => compareText(a, b)).map(([topic, state]) => ({
      topic,
      sections: state.sections.length,
      bytes: state.bytes,
      updated: new Date(state.mtime).toISOString(),
      learned: state.sections.some((section) => section.learned),
    }));
  }

  /** The largest content.md {@link create} grows and {@link write} writes, in bytes. */
  get maxFileBytes(): number {
    return this.#options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
  }

  /**
   * A topic's file as it is on disk (hand edits not yet synced included), with its sections and which of them the
   * butler learned; `undefined` when the topic has no content.md. Throws `RangeError` for a bad topic name and
   * {@link LinkError} for a file that is a link.
   *
   * @example
   * ```ts
   * declare const knowledge: KnowledgeBase;
   * await knowledge.read("cooking");
   * // { topic: "cooking", markdown: "# Cooking\n\n…", updated: "2026-12-01T09:00:00.000Z",
   * //   sections: [{ heading: "Cooking", learned: false }, { heading: "2026-12-01 Rice cooker ratio", learned: true }] }
   * ```
   */
  async read(topic: string): Promise<TopicDocument | undefined> {
    const path = this.#topicPath(topic);
    const found = await readContainedText(this.#dir, path);
    if (!found) return undefined;
    return {
      topic,
      markdown: found.text,
      updated: new Date(found.info.mtime?.getTime() ?? 0).toISOString(),
      sections: parseSections(found.text, topic).map(({ heading, learned }) => ({ heading, learned })),
    };
  }

  /**
   * Replaces a topic's whole content.md with `markdown` (a person's edit: written as given, learned markers it keeps
   * included), atomically, keeping the mode and owner of an existing file; the topic is indexed again before this
   * returns, so search sees the new text at once. Throws `RangeError` for a bad topic name, content that is not a
   * non-empty text or is over {@link maxFileBytes}, and {@link LinkError} when the topic's folder or file is a link.
   *
   * @example
   * ```ts
   * declare const knowledge: KnowledgeBase;
   * await knowledge.write("tea", "# Tea\n\n## Green tea\n\n80 °C, two minutes.\n");
   * // { topic: "tea", sections: 2, bytes: 39, created: true }
   * ```
   */
  async write(topic: string, markdown: string): Promise<TopicWritten> {
    const path = this.#topicPath(topic);
    if (typeof markdown !== "string" || markdown.trim() === "") {
      throw new RangeError("Knowledge content must be a non-empty text");
    }
    const bytes = new TextEncoder().encode(markdown).length;
    if (bytes > this.maxFileBytes) {
      throw new RangeError(`Knowledge content has ${bytes} bytes; allowed: at most ${this.maxFileBytes} per topic`);
    }
    return await this.#serial(async () => {
      // A link in place of the topic's folder is refused before anything is made or written through it.
      await checkContained(this.#dir, path);
      await Deno.mkdir(join(this.#dir, topic), { recursive: true });
      const before = await checkContained(this.#dir, path);
      if (before && !before.isFile) throw new LinkError(`${path} is not a regular file`);
      const mode = before?.mode !== null && before?.mode !== undefined ? before.mode & 0o7777 : NEW_FILE_MODE;
      const owner = before ? { uid: before.uid, gid: before.gid } : undefined;
      try {
        await atomicWriteText(path, markdown, { mode, ...(owner ? { owner } : {}), durable: true });
      } catch (error) {
        if (!(error instanceof Deno.errors.PermissionDenied) || !before) throw error;
        // As in create: homed may not give the file its owner back, so it is written in place, keeping both.
        await writeTextInPlace(path, markdown);
      }
      if (before === undefined) await syncFolder(this.#dir);
      const stat = await Deno.stat(path);
      await this.#indexTopic(topic, stat.mtime?.getTime() ?? 0);
      const sections = this.#topics.get(topic)?.sections.length ?? 0;
      this.#options.logger.info("Topic {topic} written whole ({bytes} bytes, {sections} sections)", {
        topic,
        bytes,
        sections,
      });
      return { topic, sections, bytes, created: before === undefined };
    });
  }

  /** Counts for `/api/status`. */
  counts(): { topics: number; sections: number } {
    let sections = 0;
    for (const state of this.#topics.values()) sections += state.sections.length;
    return { topics: this.#topics.size, sections };
  }

  /**
   * Picks up hand edits as they happen (a debounced sync on file events). The heartbeat's {@link sync} covers
   * anything a watcher misses.
   */
  watch(): void {
    if (this.#watcher) return;
    const watcher = Deno.watchFs(this.#dir, { recursive: true });
    this.#watcher = watcher;
    this.#watching = (async () => {
      try {
        for await (const event of watcher) {
          if (!event.paths.some((path) => path.endsWith(FILE))) continue;
          clearTimeout(this.#watchTimer);
          this.#watchTimer = setTimeout(() => {
            this.#watchTimer = undefined;
            this.sync().catch((error) => this.#options.logger.warning("Knowledge sync failed: {error}", { error }));
          }, 150);
        }
      } catch (error) {
        if (this.#watcher === watcher) {
          this.#options.logger.warning("Knowledge watcher stopped: {error}; the heartbeat still picks up edits", {
            error,
          });
        }
      }
    })();
  }

  /** Stops watching: the watcher, its pending debounce timer, and waits for the sync and writes in progress. */
  async close(): Promise<void> {
    const watcher = this.#watcher;
    this.#watcher = undefined;
    watcher?.close();
    clearTimeout(this.#watchTimer);
    this.#watchTimer = undefined;
    await this.#watching;
    await this.#queue;
  }
}

/** A window of the section around the first place a query term appears. */
export function snippet(text: string, query: string, width = 160): string {
  const flat = text.replace(/^#{1,6}\s+.*\n?/, "").replace(/\s+/g, " ").trim();
  const lower = flat.toLowerCase();
  let at = -1;
  for (const term of tokenize(query)) {
    const index = lower.indexOf(term);
    if (index !== -1 && (at === -1 || index < at)) at = index;
  }
  const start = Math.max(0, at === -1 ? 0 : at - Math.floor(width / 3));
  const piece = flat.slice(start, start + width);
  return `${start > 0 ? "…" : ""}${piece}${start + width < flat.length ? "…" : ""}`;
}
