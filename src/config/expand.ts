/**
 * `${VAR}` and `${VAR:-default}` expansion of config strings.
 *
 * @module
 */

const REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/** Reads one environment variable; `undefined` when it is unset. */
export type EnvReader = (name: string) => string | undefined;

/**
 * Expands every `${VAR}` and `${VAR:-default}` in `text`. An unset variable expands to empty; `:-` also applies
 * the default when the variable is set but empty, as in the shell.
 *
 * @example
 * ```ts
 * expandEnv("${HOME:-/root}/x", (n) => n === "HOME" ? "/home/me" : undefined); // "/home/me/x"
 * expandEnv("${NOPE}", () => undefined); // ""
 * ```
 */
export function expandEnv(text: string, readEnv: EnvReader): string {
  return text.replace(REFERENCE, (_whole, name: string, fallback: string | undefined) => {
    const value = readEnv(name);
    if (value === undefined || value === "") return fallback ?? "";
    return value;
  });
}

/**
 * Lists the variable names that `text` refers to, in order of first use.
 *
 * @example
 * ```ts
 * referencedVariables("${A}:${B:-x}:${A}"); // ["A", "B"]
 * ```
 */
export function referencedVariables(text: string): string[] {
  const names = new Set<string>();
  for (const match of text.matchAll(REFERENCE)) names.add(match[1]!);
  return [...names];
}

/**
 * Walks a parsed YAML value and expands variables in every string in it, recording which ones it read.
 * Expansion after parsing keeps a variable's value from ever being read as YAML syntax.
 */
export function expandTree(value: unknown, readEnv: EnvReader, seen: Set<string>): unknown {
  if (typeof value === "string") {
    for (const name of referencedVariables(value)) seen.add(name);
    return expandEnv(value, readEnv);
  }
  if (Array.isArray(value)) return value.map((item) => expandTree(item, readEnv, seen));
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [key, expandTree(item, readEnv, seen)]),
    );
  }
  return value;
}
