/**
 * Keeps secrets out of logs: known secret values and properties with secret-looking names are replaced.
 *
 * @module
 */

const SECRET_NAME = /api_?key|token|secret|password|authorization/i;
const MASK = "[REDACTED]";

/**
 * Makes a function that masks every occurrence of `secrets` (values shorter than 4 characters are ignored, they
 * would mask ordinary words).
 *
 * @example
 * ```ts
 * const redact = secretMasker(["sk-live-123"]);
 * redact("key sk-live-123 sent"); // "key [REDACTED] sent"
 * ```
 */
export function secretMasker(secrets: readonly string[]): (text: string) => string {
  const values = secrets.filter((value) => value.length >= 4).sort((a, b) => b.length - a.length);
  if (!values.length) return (text) => text;
  return (text) => values.reduce((out, value) => out.split(value).join(MASK), text);
}

/**
 * Replaces values of secret-looking keys, at any depth, with a mask.
 *
 * @example
 * ```ts
 * redactProperties({ api_key: "x", model: "m" }); // { api_key: "[REDACTED]", model: "m" }
 * ```
 */
export function redactProperties(value: unknown, depth = 0): unknown {
  if (depth > 8 || value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map((item) => redactProperties(item, depth + 1));
  if (value instanceof Error) return { name: value.name, message: value.message };
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    out[key] = SECRET_NAME.test(key) && item !== "" && item !== undefined ? MASK : redactProperties(item, depth + 1);
  }
  return out;
}
