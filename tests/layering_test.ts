/**
 * The folder picture of DESIGN.md ("Modules and direction of dependence"), checked: every folder (and top-level file)
 * of `src/` sits on a level, and imports — type imports included — go only to lower levels, so no two folders depend
 * on each other, however indirectly.
 */

import assert from "node:assert/strict";
import { dirname, join, normalize, relative } from "node:path";

/** Lowest first: a part may import only parts on lower levels (and itself). DESIGN.md draws the same levels. */
export const LEVELS: readonly (readonly string[])[] = [
  ["clock.ts", "version.ts", "build_info.ts", "text", "fs", "sqlite", "identity", "lua", "audio"],
  ["net", "log", "service", "tools", "prompt", "chat_policy", "search"],
  ["config", "process"],
  ["io", "tracker", "policy"],
  ["provider", "devices", "timer", "knowledge", "backup", "mcp"],
  ["context", "media", "intents", "rights"],
  ["memory", "agent", "plugin"],
  ["api", "supervise"],
  ["daemon.ts"],
  ["cli", "flags.ts"],
  ["main.ts"],
];

/**
 * Imports the levels alone would allow but the design refuses: the provider owns its failure codes (io passes them
 * through without naming them), and config — below every part that runs Lua — never reaches into lua/ (the rights,
 * above both, ask lua/ for the VM's wasm).
 */
export const REFUSED: readonly (readonly [from: string, to: string])[] = [["provider", "io"], ["config", "lua"]];

const refused = new Set(REFUSED.map(([from, to]) => `${from} ${to}`));

const levelOf = new Map(LEVELS.flatMap((parts, level) => parts.map((part) => [part, level] as const)));

/** Every non-test TypeScript file under `dir`. */
async function sources(dir: string): Promise<string[]> {
  const out: string[] = [];
  for await (const entry of Deno.readDir(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory) out.push(...await sources(path));
    else if (entry.name.endsWith(".ts") && !entry.name.endsWith("_test.ts")) out.push(path);
  }
  return out;
}

/** The relative specifiers a file imports or re-exports, type-only ones included (doc examples are not imports). */
export function importedSpecifiers(text: string): string[] {
  const code = text.replace(/\/\*[\s\S]*?\*\//g, "");
  return [...code.matchAll(/^(?:import|export)\s[^;]*?\sfrom\s+"(\.{1,2}\/[^"]+)"/gm)].map((match) => match[1]!);
}

/** The part of `src/` a path is in: its top folder, or the file itself at the top. */
function partOf(path: string): string {
  return relative("src", path).split("/")[0]!;
}

Deno.test("every part of src/ is on a level, and imports only parts on lower levels (type imports too)", async () => {
  const offenders: string[] = [];
  const unplaced = new Set<string>();
  for (const path of await sources("src")) {
    const from = partOf(path);
    if (!levelOf.has(from)) unplaced.add(from);
    for (const specifier of importedSpecifiers(await Deno.readTextFile(path))) {
      const target = normalize(join(dirname(path), specifier));
      if (!target.startsWith("src/")) continue;
      const to = partOf(target);
      if (to === from) continue;
      if (!levelOf.has(to)) unplaced.add(to);
      else if ((levelOf.get(to) ?? 0) >= (levelOf.get(from) ?? 0) || refused.has(`${from} ${to}`)) {
        offenders.push(`${relative(".", path)} (${from}) imports ${specifier} (${to})`);
      }
    }
  }
  assert.deepEqual([...unplaced], [], "parts of src/ not on a level: add them to LEVELS and to DESIGN.md");
  assert.deepEqual(offenders, []);
});

Deno.test("the layering check sees value and type imports and re-exports, not imports in doc comments", () => {
  const text = [
    'import type { Provider } from "../provider/provider.ts";',
    'import { type ContextEntry } from "../context/context_window.ts";',
    'import {\n  similarities,\n} from "../search/relevance.ts";',
    'export { ScheduleStore } from "./timer/schedule_store.ts";',
    '/**\n * @example\n * ```ts\n * import { createApi } from "../api/app.ts";\n * ```\n */',
    'import { z } from "zod";',
  ].join("\n");
  assert.deepEqual(importedSpecifiers(text), [
    "../provider/provider.ts",
    "../context/context_window.ts",
    "../search/relevance.ts",
    "./timer/schedule_store.ts",
  ]);
});

Deno.test("the levels name each part once", () => {
  const all = LEVELS.flat();
  assert.deepEqual(all.filter((part, i) => all.indexOf(part) !== i), []);
});

Deno.test("the refused imports name parts on a level, each a downward import the levels alone would allow", () => {
  for (const [from, to] of REFUSED) {
    assert.ok((levelOf.get(to) ?? Infinity) < (levelOf.get(from) ?? -Infinity), `${from} -> ${to}`);
  }
});

Deno.test("a device kind's folder is reached only through the one list: no file outside it imports inside it", async () => {
  const kinds = new Set<string>();
  for await (const entry of Deno.readDir("src/devices")) if (entry.isDirectory) kinds.add(entry.name);
  const offenders: string[] = [];
  for (const path of await sources("src")) {
    const home = relative("src/devices", path).split("/");
    for (const specifier of importedSpecifiers(await Deno.readTextFile(path))) {
      const target = relative("src/devices", normalize(join(dirname(path), specifier))).split("/");
      // Inside a kind's folder, and not from that same folder nor from the list.
      if (target.length < 2 || !kinds.has(target[0]!) || (home.length > 1 && home[0] === target[0])) continue;
      if (relative(".", path) !== "src/devices/kinds.ts") offenders.push(`${relative(".", path)} imports ${specifier}`);
    }
  }
  assert.deepEqual(offenders, []);
  // Every kind's folder has its descriptor, and the list names it.
  const list = await Deno.readTextFile("src/devices/kinds.ts");
  for (const kind of kinds) {
    assert.ok((await Deno.stat(`src/devices/${kind}/kind.ts`)).isFile, `src/devices/${kind}/kind.ts`);
    assert.ok(list.includes(`from "./${kind}/kind.ts"`), `src/devices/kinds.ts does not list ${kind}`);
  }
});
