/**
 * The starter knowledge shipped in `knowledge/`, embedded so a compiled or bundled homed can seed an empty standard
 * layout (`/var/lib/homed/knowledge`) on its first start. A test keeps this list equal to the folder.
 *
 * @module
 */

import { dirname, join } from "node:path";
import type { Logger } from "@logtape/logtape";
import readme from "../../knowledge/README.md" with { type: "text" };
import cooking from "../../knowledge/cooking/content.md" with { type: "text" };
import smartHome from "../../knowledge/smart_home/content.md" with { type: "text" };

/** Path in the knowledge folder → text. */
export const STARTER_KNOWLEDGE: Readonly<Record<string, string>> = {
  "README.md": readme,
  "cooking/content.md": cooking,
  "smart_home/content.md": smartHome,
};

/**
 * Writes the starter knowledge into `dir` when it does not exist yet (a first start); an existing folder, even an
 * empty one, is the household's and is left alone. Resolves to how many files were written.
 *
 * @example
 * ```ts
 * import { log } from "../log/logging.ts";
 *
 * await seedKnowledge("/var/lib/homed/knowledge", log("knowledge")); // 3 on the first start, then 0
 * ```
 */
export async function seedKnowledge(dir: string, logger: Logger): Promise<number> {
  try {
    await Deno.stat(dir);
    return 0;
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  for (const [path, text] of Object.entries(STARTER_KNOWLEDGE)) {
    await Deno.mkdir(dirname(join(dir, path)), { recursive: true });
    await Deno.writeTextFile(join(dir, path), text, { mode: 0o644 });
  }
  const count = Object.keys(STARTER_KNOWLEDGE).length;
  logger.info("First start: copied {count} starter knowledge files into {dir}", { count, dir });
  return count;
}
