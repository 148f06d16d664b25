/**
 * CRC-32 (IEEE), for detecting torn or corrupted records on disk.
 *
 * @module
 */

const TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

/**
 * The CRC-32 of `bytes`; given the CRC of the bytes before them as `previous`, the CRC of both (so a large buffer can
 * be checked in pieces).
 *
 * @example
 * ```ts
 * crc32(new TextEncoder().encode("123456789")); // 0xcbf43926
 * crc32(new TextEncoder().encode("6789"), crc32(new TextEncoder().encode("12345"))); // 0xcbf43926
 * ```
 */
export function crc32(bytes: Uint8Array, previous = 0): number {
  let crc = (previous ^ 0xffffffff) >>> 0;
  for (let i = 0; i < bytes.length; i++) crc = TABLE[(crc ^ bytes[i]!) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}
