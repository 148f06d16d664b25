/**
 * SHA-256 of bytes as lower-case hex (Web Crypto; no dependency).
 *
 * @example
 * ```ts
 * await sha256Hex(new TextEncoder().encode("abc")); // "ba7816bf…"
 * ```
 */
export async function sha256Hex(data: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", data as Uint8Array<ArrayBuffer>));
  return Array.from(digest, (byte) => byte.toString(16).padStart(2, "0")).join("");
}
