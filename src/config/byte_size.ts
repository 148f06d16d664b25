/**
 * Sizes written as `500MB`, `2GB` in the config — how a household reads a disk's free space — rather than a count
 * of bytes nobody can check at a glance. 1024-based, as `df -h` and the console show them.
 *
 * @module
 */

const UNIT_BYTES = { b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3, tb: 1024 ** 4 } as const;
const SIZE = /^(\d+(?:\.\d+)?)\s*(b|kb|mb|gb|tb)$/i;

/** What a size may look like, for error messages. */
export const BYTE_SIZE_FORMS = 'a size such as "500MB", "2GB" or "1.5GB" (1 GB = 1024 MB)';

/**
 * Parses a size into bytes, or returns `undefined` when it is not one; `"0"` is 0.
 *
 * @example
 * ```ts
 * parseByteSize("500MB"); // 524288000
 * parseByteSize("1.5 gb"); // 1610612736
 * parseByteSize("lots"); // undefined
 * ```
 */
export function parseByteSize(text: string): number | undefined {
  if (text.trim() === "0") return 0;
  const match = SIZE.exec(text.trim());
  if (!match) return undefined;
  const [, amount, unit] = match;
  return Math.round(Number(amount) * UNIT_BYTES[unit!.toLowerCase() as keyof typeof UNIT_BYTES]);
}
