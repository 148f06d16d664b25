/**
 * Comparing secrets (API tokens, the OneBot access token) so that the time taken says nothing about how close a guess
 * came: both sides are hashed to SHA-256 digests of equal length, then compared in full.
 *
 * @module
 */

/**
 * The SHA-256 digest of a secret, to compare with {@link sameDigest}.
 *
 * @example
 * ```ts
 * (await secretDigest("token")).length; // 32
 * ```
 */
export async function secretDigest(secret: string): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(secret)));
}

/**
 * Whether two digests of {@link secretDigest} are equal, in time that does not depend on where they differ.
 *
 * @example
 * ```ts
 * sameDigest(await secretDigest("a"), await secretDigest("a")); // true
 * ```
 */
export function sameDigest(x: Uint8Array, y: Uint8Array): boolean {
  if (x.length !== y.length) return false;
  let difference = 0;
  for (let i = 0; i < x.length; i++) difference |= x[i]! ^ y[i]!;
  return difference === 0;
}

/**
 * Whether two secrets are equal, compared through their digests.
 *
 * @example
 * ```ts
 * await sameSecret("a-long-enough-secret", "a-long-enough-secret"); // true
 * await sameSecret("a-long-enough-secret", "a-long-enough-secreT"); // false
 * ```
 */
export async function sameSecret(a: string, b: string): Promise<boolean> {
  const [x, y] = await Promise.all([secretDigest(a), secretDigest(b)]);
  return sameDigest(x, y);
}
