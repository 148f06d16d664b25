/**
 * The two byte orders a segment is sorted by: terms by their UTF-8 bytes ({@link compareBytes}), ids by the FNV-1a
 * hash of theirs ({@link hashBytes}, {@link idHash}). The reader's lookups and checks, the writer's merge and the
 * memory's id digest must agree on both, so they live here once; and the reading of an id's bytes as text.
 *
 * @module
 */

const encoder = new TextEncoder();

/**
 * FNV-1a over `bytes[from, to)`: the hash ids are filed by (the writer sorts by it).
 *
 * @example
 * ```ts
 * hashBytes(new TextEncoder().encode("doc-1"), 0, 5) === idHash("doc-1"); // true
 * ```
 */
export function hashBytes(bytes: Uint8Array, from: number, to: number): number {
  let h = 0x811c9dc5;
  for (let i = from; i < to; i++) h = Math.imul(h ^ bytes[i]!, 0x01000193);
  return h >>> 0;
}

const idScratch = new Uint8Array(1024);

/**
 * The hash a segment files an id by (FNV-1a over its UTF-8 bytes): what {@link SegmentIndex.idDigest} sums, so a
 * caller can sum the same over the ids it holds elsewhere (memory.db's rows) and compare.
 *
 * @example
 * ```ts
 * idHash("doc-1"); // a 32-bit unsigned integer
 * ```
 */
export function idHash(id: string): number {
  const bytes = id.length * 3 <= idScratch.length ? idScratch : new Uint8Array(id.length * 3);
  return hashBytes(bytes, 0, encoder.encodeInto(id, bytes).written);
}

/**
 * Compares `a[aFrom, aTo)` with `b[bFrom, bTo)` byte by byte: the order terms are sorted in.
 *
 * @example
 * ```ts
 * const bytes = new TextEncoder().encode("ab");
 * compareBytes(bytes, 0, 1, bytes, 0, 2) < 0; // true: "a" sorts before "ab"
 * ```
 */
export function compareBytes(
  a: Uint8Array,
  aFrom: number,
  aTo: number,
  b: Uint8Array,
  bFrom: number,
  bTo: number,
): number {
  const length = Math.min(aTo - aFrom, bTo - bFrom);
  for (let i = 0; i < length; i++) {
    const d = a[aFrom + i]! - b[bFrom + i]!;
    if (d) return d;
  }
  return aTo - aFrom - (bTo - bFrom);
}

const decoder = new TextDecoder("utf-8", { fatal: true });
/** Character codes of a short ASCII text being read (reused). */
const codes: number[] = [];
/** Texts longer than this are always decoded by the decoder. */
const SHORT_TEXT = 64;

/**
 * `bytes[from, to)` as UTF-8 text (throwing on invalid UTF-8). A short ASCII text — an id, mostly — is read here
 * rather than by the decoder, whose call cost three times as much: a recall reads some 70 ids.
 *
 * @example
 * ```ts
 * const bytes = new TextEncoder().encode("d1a2b-3 客厅");
 * textOf(bytes, 0, 7); // "d1a2b-3"
 * textOf(bytes, 8, bytes.length); // "客厅"
 * ```
 */
export function textOf(bytes: Uint8Array, from: number, to: number): string {
  if (to - from > SHORT_TEXT) return decoder.decode(bytes.subarray(from, to));
  codes.length = 0;
  for (let i = from; i < to; i++) {
    const byte = bytes[i]!;
    if (byte >= 0x80) return decoder.decode(bytes.subarray(from, to));
    codes.push(byte);
  }
  return String.fromCharCode.apply(null, codes);
}
