/**
 * What homed loads before it listens is what it costs in memory on a device (docs/PERFORMANCE.md, "Start-up and idle
 * memory"): heavy libraries a feature needs only when it is configured are loaded by a dynamic `import()` when it is.
 * This walks the static imports from `src/cli/run.ts` (what `homed run` loads) (type-only ones are erased and load nothing) and names the
 * packages reached.
 */

import assert from "node:assert/strict";
import { dirname, join } from "node:path";

const SRC = new URL("../src/", import.meta.url).pathname;

/** The specifiers of the imports and re-exports that load a module (not `import type`, not all-`type` braces). */
function loadingSpecifiers(text: string): string[] {
  // Comments that start a line only: "/api/*" in a string is not one.
  const code = text.replace(/^\s*\/\*[\s\S]*?\*\//gm, "").replace(/^\s*\/\/.*$/gm, "");
  const found: string[] = [];
  // A clause holds no ";" (which keeps a match from running on from an `export const …` to a later `from "…"`).
  for (const match of code.matchAll(/^\s*(import|export)\s+([^;]*?)\s+from\s+"([^"]+)"/gm)) {
    const clause = match[2]!;
    if (/^type\s/.test(clause)) continue;
    const braces = /^\{([\s\S]*)\}$/.exec(clause.trim());
    if (
      braces && braces[1]!.split(",").map((part) => part.trim()).filter(Boolean).every((p) => p.startsWith("type "))
    ) {
      continue;
    }
    found.push(match[3]!);
  }
  for (const match of code.matchAll(/^\s*import\s+"([^"]+)"/gm)) found.push(match[1]!);
  return found;
}

/** The packages (`npm`/bare specifiers) statically reachable from `entry`. */
async function staticPackages(entry: string): Promise<Set<string>> {
  const packages = new Set<string>();
  const seen = new Set<string>();
  const queue = [entry];
  while (queue.length) {
    const file = queue.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    for (const specifier of loadingSpecifiers(await Deno.readTextFile(file))) {
      if (specifier.startsWith(".")) queue.push(join(dirname(file), specifier));
      else packages.add(specifier);
    }
  }
  return packages;
}

Deno.test("homed's start-up loads no MCP SDK, ajv or media codec unless a feature that needs one is configured", async () => {
  const packages = [...await staticPackages(join(SRC, "cli", "run.ts"))];
  assert.ok(packages.includes("hono"), `the walk reaches the API (${packages.join(", ")})`);
  const heavy = packages.filter((name) => /^@modelcontextprotocol\/sdk|^ajv|^silk-wasm|^playwright/.test(name));
  assert.deepEqual(heavy, [], `statically imported from src/cli/run.ts: ${heavy.join(", ")}`);
});
