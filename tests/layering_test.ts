import assert from "node:assert/strict";
import { join, relative } from "node:path";

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

/** Imports that load code at run time (`import type` and `import { type … }`-only lines are erased). */
function runtimeImports(text: string): string[] {
  const out: string[] = [];
  for (const match of text.matchAll(/^import\s+(?!type\b)([^;]*?)\s+from\s+"([^"]+)";/gms)) {
    const names = match[1]!.replace(/^\{|\}$/g, "").split(",").map((name) => name.trim()).filter(Boolean);
    if (names.every((name) => name.startsWith("type "))) continue;
    out.push(match[2]!);
  }
  return out;
}

Deno.test("memory, knowledge and prompt load no agent code at run time (agent depends on them, not back)", async () => {
  const offenders: string[] = [];
  for (const layer of ["src/memory", "src/knowledge", "src/prompt"]) {
    for (const path of await sources(layer)) {
      for (const specifier of runtimeImports(await Deno.readTextFile(path))) {
        if (/(?:^|\/)agent\//.test(specifier)) offenders.push(`${relative(".", path)} imports ${specifier}`);
      }
    }
  }
  assert.deepEqual(offenders, []);
});

Deno.test("the layering check sees a runtime import and ignores a type-only one", () => {
  const text = [
    'import type { Provider } from "../agent/provider/provider.ts";',
    'import { type ContextEntry } from "../agent/core/context.ts";',
    'import { similarities } from "../agent/core/relevance.ts";',
  ].join("\n");
  assert.deepEqual(runtimeImports(text), ["../agent/core/relevance.ts"]);
});
