/**
 * The templates homed understands: the embedded ones (`config/intents/*.yaml`), then the household's own files in
 * `paths.intents` (each `*.yaml`, in name order), which add sentences and list values. A file that cannot be used
 * stops start-up naming the file and line.
 *
 * @module
 */

import { join } from "node:path";
import { EMBEDDED_INTENT_FILES } from "./embedded_intents.ts";
import { IntentDataError } from "./intent.ts";
import { IntentMatcher } from "./matcher.ts";

/**
 * The matcher over the embedded templates and the `*.yaml` files in `dir` (a missing folder adds none).
 *
 * @throws {IntentDataError} naming the file (its path, for the household's own) and the line
 *
 * @example
 * ```ts
 * const matcher = await loadIntents("/etc/homed/intents");
 * matcher.counts.languages; // ["en", "zh"]
 * ```
 */
export async function loadIntents(dir: string): Promise<IntentMatcher> {
  const own: { name: string; text: string }[] = [];
  let entries: Deno.DirEntry[] = [];
  try {
    entries = await Array.fromAsync(Deno.readDir(dir));
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) {
      throw new IntentDataError(dir, 0, `cannot read the folder (paths.intents): ${(error as Error).message}`);
    }
  }
  for (const entry of entries.filter((item) => item.isFile && /\.ya?ml$/i.test(item.name)).sort(byName)) {
    const path = join(dir, entry.name);
    own.push({ name: path, text: await Deno.readTextFile(path) });
  }
  return IntentMatcher.compile([...EMBEDDED_INTENT_FILES, ...own]);
}

function byName(a: Deno.DirEntry, b: Deno.DirEntry): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}
