/**
 * The one error a Lua script's failure becomes: it names the script, the line when Lua gave one, and the kind.
 *
 * @module
 */

/** What went wrong: the script does not compile, it failed, or it hit a limit. */
export type LuaErrorKind = "syntax" | "runtime" | "time_limit" | "memory_limit";

/** A Lua script failed; the message names the script and line, e.g. `ollama.lua:12: attempt to index a nil value`. */
export class LuaError extends Error {
  readonly kind: LuaErrorKind;
  readonly script: string;
  readonly line: number | undefined;

  /**
   * @example
   * ```ts
   * throw new LuaError("runtime", "ollama.lua", 12, "attempt to index a nil value (field 'message')");
   * ```
   */
  constructor(kind: LuaErrorKind, script: string, line: number | undefined, detail: string) {
    super(`${script}${line === undefined ? "" : `:${line}`}: ${detail}`);
    this.name = "LuaError";
    this.kind = kind;
    this.script = script;
    this.line = line;
  }
}

/**
 * Reads a message from Lua (`name:12: text`, possibly with a traceback) into a {@link LuaError} of `kind`.
 *
 * @example
 * ```ts
 * const error = luaErrorFrom("runtime", "a.lua", "a.lua:3: boom\nstack traceback:\n\t[C]: in ?");
 * error.message; // "a.lua:3: boom"
 * error.line; // 3
 * ```
 */
export function luaErrorFrom(kind: LuaErrorKind, script: string, raw: string): LuaError {
  const first = raw.split("\n")[0]!.replace(/^Error: /, "");
  // The innermost position of this script; a message relayed through error() may carry it twice.
  const escaped = script.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const match = new RegExp(`^(?:${escaped}:(\\d+): )+(.*)$`, "s").exec(first);
  if (match) return new LuaError(kind, script, Number(match[1]), match[2]!);
  return new LuaError(kind, script, undefined, first);
}
