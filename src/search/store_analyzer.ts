/**
 * A store's terms are only as good as the analyzer that made them: when the folder's recorded analyzer is not the one
 * the store is opened with, its snapshots and logs are removed, so it opens empty and its owner indexes its documents
 * again from their source (the open report says so). A folder from before analyzers were named holds the first one's
 * terms.
 *
 * @module
 */

import type { StoreFiles } from "./store_files.ts";

/** The analyzer a store written before analyzers were named used. */
const FIRST_ANALYZER = "engine-1";

/**
 * Empties the folder when its terms came from another analyzer than `current`, then records `current`.
 *
 * @example
 * ```ts
 * import { StoreFiles } from "./store_files.ts";
 *
 * await checkAnalyzer(new StoreFiles("/var/lib/homed/vector/knowledge"), "engine-3", (message) => console.warn(message));
 * ```
 */
export async function checkAnalyzer(
  files: StoreFiles,
  current: string,
  recovered: (message: string) => void,
): Promise<void> {
  const generations = await files.generations();
  let written: string | undefined;
  try {
    written = (await Deno.readTextFile(files.analyzerFile)).trim();
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  const stored = written ?? (generations.length ? FIRST_ANALYZER : current);
  if (stored !== current) {
    for (const generation of generations) {
      for (const kind of ["snap", "wal"] as const) await Deno.remove(files.path(kind, generation)).catch(() => {});
    }
    recovered(
      `the analyzer changed from ${stored} to ${current}: the index was emptied and is rebuilt from its documents`,
    );
  }
  if (written !== current) await files.writeAnalyzer(current);
}
