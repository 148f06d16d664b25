/**
 * A schema failure as the owner reads it: one line per bad key — the key, what it got (a secret shown only by its
 * length), and what is allowed there (for an unknown key, the keys that are). zod's own messages name neither the
 * value nor the neighbours, and a config is edited by people who did not write the schema.
 *
 * @module
 */

import type { z } from "zod";
import { configSchema } from "./schema.ts";

const SECRET_KEY = /token|key|secret|password/i;

/**
 * A value for a message: a secret (by its key's name) as its length, else its JSON cut at 80 characters.
 *
 * @example
 * ```ts
 * describe("sk-123", "llm.api_key"); // "a secret of 6 characters"
 * describe(0.2, "llm.temperature"); // "0.2"
 * ```
 */
export function describe(value: unknown, key: string): string {
  if (typeof value === "string" && value !== "" && SECRET_KEY.test(key)) {
    return `a secret of ${value.length} characters`;
  }
  if (value === undefined) return "nothing";
  const json = JSON.stringify(value);
  return json.length > 80 ? `${json.slice(0, 77)}...` : json;
}

/**
 * One zod issue as the line `ConfigError` shows (several lines for several unknown keys at one place).
 *
 * @example
 * ```ts
 * import { configSchema } from "./schema.ts";
 *
 * const result = configSchema.safeParse({ llm: { temprature: 1 } }, { reportInput: true });
 * if (!result.success) result.error.issues.map(problemOf);
 * // ["llm.temprature: unknown key; allowed keys here: provider, base_url, …"]
 * ```
 */
export function problemOf(issue: z.core.$ZodIssue): string {
  const key = issue.path.map(String).join(".") || "(top level)";
  if (issue.code === "unrecognized_keys") {
    return issue.keys.map((name) => {
      const full = issue.path.length ? `${key}.${name}` : name;
      return `${full}: unknown key; allowed keys here: ${allowedKeys(issue.path).join(", ")}`;
    }).join("\n  - ");
  }
  // A bad key of a mapping (a device's name): zod nests the key's own issue, which says what is allowed.
  const allowed = issue.code === "invalid_key"
    ? issue.issues[0]?.message ?? issue.message
    : issue.code === "invalid_type" && issue.expected === "object"
    ? "a mapping of keys"
    : issue.message;
  return `${key}: got ${describe(issue.input, key)}; allowed: ${allowed}`;
}

/** The keys the schema allows at `path`. */
function allowedKeys(path: readonly PropertyKey[]): string[] {
  let shape: unknown = configSchema;
  for (const part of path) {
    const inner = unwrap(shape) as { shape?: Record<string, unknown>; def?: { element?: unknown } };
    // An entry of a list (llm.fallbacks.0): the list's element.
    shape = typeof part === "number" ? inner.def?.element : inner.shape?.[String(part)];
  }
  const inner = unwrap(shape) as { shape?: Record<string, unknown> };
  return Object.keys(inner.shape ?? {});
}

/** A schema with its optional, default and pipe wrappers taken off. */
function unwrap(schema: unknown): unknown {
  let current = schema as { def?: { innerType?: unknown; in?: unknown } } | undefined;
  while (current?.def?.innerType ?? current?.def?.in) {
    current = (current.def.innerType ?? current.def.in) as typeof current;
  }
  return current;
}
