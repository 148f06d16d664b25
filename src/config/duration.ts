/**
 * Durations written as `15s`, `30m`, `72h` in the config.
 *
 * @module
 */

const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
const DURATION = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/;

/** What a duration may look like, for error messages. */
export const DURATION_FORMS = 'a duration such as "500ms", "15s", "30m", "72h" or "7d"';

/**
 * Parses a duration string into milliseconds, or returns `undefined` when it is not one.
 *
 * @example
 * ```ts
 * parseDuration("15s"); // 15000
 * parseDuration("1.5h"); // 5400000
 * parseDuration("soon"); // undefined
 * ```
 */
export function parseDuration(text: string): number | undefined {
  const match = DURATION.exec(text.trim());
  if (!match) return undefined;
  const [, amount, unit] = match;
  return Math.round(Number(amount) * UNIT_MS[unit as keyof typeof UNIT_MS]);
}
