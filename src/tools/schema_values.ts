/**
 * JSON values as the schema validator sees them: their JSON type (an integer is also a number), deep equality (for
 * `enum`, `const` and `uniqueItems`), a violation's path one level down, and a string's length in code points (what
 * `minLength` and `maxLength` count, as JSON Schema says).
 *
 * @module
 */

/** The JSON Schema `type` names. */
export type JsonType = "string" | "number" | "integer" | "boolean" | "object" | "array" | "null";

/** Every {@link JsonType}, for checking a schema's `type`. */
export const TYPES: ReadonlySet<string> = new Set([
  "string",
  "number",
  "integer",
  "boolean",
  "object",
  "array",
  "null",
]);

/**
 * The JSON type of `value` (`integer` for a whole number), or `undefined`.
 *
 * @example
 * ```ts
 * typeOf(2); // "integer"
 * typeOf([1]); // "array"
 * ```
 */
export function typeOf(value: unknown): JsonType | "undefined" {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value as JsonType;
}

/**
 * Whether `value` is of `type` (an integer is a number too).
 *
 * @example
 * ```ts
 * isType(2, "number"); // true
 * ```
 */
export function isType(value: unknown, type: JsonType): boolean {
  const actual = typeOf(value);
  return actual === type || (type === "number" && actual === "integer");
}

/**
 * Deep equality of two JSON values.
 *
 * @example
 * ```ts
 * equal({ a: [1] }, { a: [1] }); // true
 * ```
 */
export function equal(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const keysA = Object.keys(a), keysB = Object.keys(b);
  if (keysA.length !== keysB.length) return false;
  return keysA.every((key) => equal((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]));
}

/**
 * The path of a field or item below `path` (`items.2.name`; empty for the whole value).
 *
 * @example
 * ```ts
 * childPath("items", 2); // "items.2"
 * childPath("", "room"); // "room"
 * ```
 */
export const childPath = (path: string, key: string | number): string => path === "" ? String(key) : `${path}.${key}`;

/**
 * A string's length in code points.
 *
 * @example
 * ```ts
 * codePoints("茶🍵"); // 2
 * ```
 */
export const codePoints = (text: string): number => [...text].length;
