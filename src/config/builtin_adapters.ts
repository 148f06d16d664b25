/**
 * The Lua adapters shipped in `config/adapters/`, embedded so a compiled or bundled homed has them without the
 * repository: `llm.adapter: builtin:ollama` or `builtin:anthropic`. A file path works as before.
 *
 * @module
 */

import anthropic from "../../config/adapters/anthropic.lua" with { type: "text" };
import ollama from "../../config/adapters/ollama.lua" with { type: "text" };

/** The prefix that names an embedded adapter. */
export const BUILTIN_PREFIX = "builtin:";

/** Name → script. */
export const BUILTIN_ADAPTERS: Readonly<Record<string, string>> = { anthropic, ollama };

/**
 * The embedded script `adapter` names (`builtin:<name>`), `undefined` for a file path; an unknown name is a
 * `RangeError` listing the known ones.
 *
 * @example
 * ```ts
 * builtinAdapter("builtin:ollama"); // "-- Ollama's native chat API (POST {base_url}/api/chat) for homed's …"
 * builtinAdapter("/etc/homed/adapters/my.lua"); // undefined
 * builtinAdapter("builtin:gemini"); // RangeError: …; allowed: a file path or "builtin:anthropic", "builtin:ollama"
 * ```
 */
export function builtinAdapter(adapter: string): string | undefined {
  if (!adapter.startsWith(BUILTIN_PREFIX)) return undefined;
  const name = adapter.slice(BUILTIN_PREFIX.length);
  const source = Object.hasOwn(BUILTIN_ADAPTERS, name) ? BUILTIN_ADAPTERS[name] : undefined;
  if (source === undefined) {
    throw new RangeError(
      `llm.adapter: got ${JSON.stringify(adapter)}; allowed: a file path or ${
        Object.keys(BUILTIN_ADAPTERS).map((known) => `"${BUILTIN_PREFIX}${known}"`).join(", ")
      }`,
    );
  }
  return source;
}
