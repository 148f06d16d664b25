/**
 * The files of a vector store's folder by name: `snap-<g>.bin` and `wal-<g>.log` of each generation, and `analyzer`
 * (the name of the analyzer its terms came from, written through a temporary file and a rename).
 *
 * @module
 */

import { join } from "node:path";

/**
 * One store's folder.
 *
 * @example
 * ```ts
 * const files = new StoreFiles("/var/lib/homed/vector/knowledge");
 * files.path("wal", 3); // "/var/lib/homed/vector/knowledge/wal-3.log"
 * await files.generations(); // [3, 2], newest first
 * ```
 */
export class StoreFiles {
  readonly dir: string;

  constructor(dir: string) {
    this.dir = dir;
  }

  /** The snapshot or the log of `generation`. */
  path(kind: "snap" | "wal", generation: number): string {
    return join(this.dir, `${kind}-${generation}.${kind === "snap" ? "bin" : "log"}`);
  }

  /** The generations that have a snapshot or a log in the folder, newest first. */
  async generations(): Promise<number[]> {
    const found = new Set<number>();
    for await (const entry of Deno.readDir(this.dir)) {
      const match = /^(?:snap|wal)-(\d+)\.(?:bin|log)$/.exec(entry.name);
      if (match) found.add(Number(match[1]));
    }
    return [...found].sort((a, b) => b - a);
  }

  /** A file's bytes, or undefined when it is missing. */
  async read(path: string): Promise<Uint8Array | undefined> {
    try {
      return await Deno.readFile(path);
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) return undefined;
      throw error;
    }
  }

  /** The file naming the analyzer. */
  get analyzerFile(): string {
    return join(this.dir, "analyzer");
  }

  /** Records the analyzer's name. */
  async writeAnalyzer(name: string): Promise<void> {
    await Deno.writeTextFile(`${this.analyzerFile}.tmp`, `${name}\n`);
    await Deno.rename(`${this.analyzerFile}.tmp`, this.analyzerFile);
  }
}
