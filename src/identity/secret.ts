/**
 * Comparing secrets (API tokens, the OneBot access token) so that the time taken says nothing about how close a guess
 * came: both sides are hashed to SHA-256 digests of equal length, then compared in full. Hashing is synchronous
 * (`node:crypto`): WebCrypto's digest is an operation on another thread, a hop every API request paid on its way in.
 *
 * @module
 */

import { createHash } from "node:crypto";

/**
 * The SHA-256 digest of a secret, to compare with {@link sameDigest}.
 *
 * @example
 * ```ts
 * secretDigest("token").length; // 32
 * ```
 */
export function secretDigest(secret: string): Uint8Array {
  return new Uint8Array(createHash("sha256").update(secret, "utf8").digest());
}

/**
 * Whether two digests of {@link secretDigest} are equal, in time that does not depend on where they differ.
 *
 * @example
 * ```ts
 * sameDigest(secretDigest("a"), secretDigest("a")); // true
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
 * sameSecret("a-long-enough-secret", "a-long-enough-secret"); // true
 * sameSecret("a-long-enough-secret", "a-long-enough-secreT"); // false
 * ```
 */
export function sameSecret(a: string, b: string): boolean {
  return sameDigest(secretDigest(a), secretDigest(b));
}
