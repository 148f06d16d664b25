/**
 * The binary snapshot of an index: its documents as flat typed arrays, loaded without a JSON object or `Map` per
 * document (the record format it replaces parsed one JSON record per document, which made opening 10k documents cost
 * ≈ 50 MB of short-lived heap and 100k documents ≈ 3 s).
 *
 * Layout, little-endian: the magic `HVS2`, a u32 CRC-32 of everything after it, then sections, each a u32 byte length
 * and its bytes padded to 4: a JSON header `{documents, terms, pairs}`, the terms (JSON array), the ids (JSON array),
 * the metadata (JSON array), each document's term count (i32), the term ids of all documents (i32) and their weights
 * (f32). A snapshot that does not start with the magic is read as the older record format by the store.
 *
 * @module
 */

import { crc32 } from "./crc32.ts";
import type { DocMeta } from "./inverted_index.ts";

const MAGIC = [0x48, 0x56, 0x53, 0x32]; // "HVS2"

/** An index's live documents, as {@link InvertedIndex.snapshot} gives them and `fromSnapshot` takes them. */
export interface IndexSnapshot {
  terms: string[];
  ids: string[];
  metas: DocMeta[];
  /** Term count of each document, in `ids` order. */
  lengths: Int32Array<ArrayBuffer>;
  /** Indexes into `terms`, document after document. */
  termIds: Int32Array<ArrayBuffer>;
  /** `1 + ln tf` of each term id. */
  weights: Float32Array<ArrayBuffer>;
}

/** True when `bytes` are a binary snapshot (rather than the older record format). */
export function isBinarySnapshot(bytes: Uint8Array): boolean {
  return bytes.length >= 4 && MAGIC.every((byte, i) => bytes[i] === byte);
}

/**
 * Encodes a snapshot. homed no longer writes this format (its indexes are segments since issue 25, see `segment.ts`);
 * the encoder stays beside the decoder to show the format and to make such files for the tests of their conversion.
 *
 * @example
 * ```ts
 * import { InvertedIndex } from "./inverted_index.ts";
 *
 * const index = new InvertedIndex();
 * index.put("a", new Map([["客厅", 1]]), {});
 * await Deno.writeFile("index.bin", encodeSnapshot(index.snapshot()));
 * ```
 */
export function encodeSnapshot(snapshot: IndexSnapshot): Uint8Array {
  const encoder = new TextEncoder();
  const header = { documents: snapshot.ids.length, terms: snapshot.terms.length, pairs: snapshot.termIds.length };
  const bytes = (array: Int32Array | Float32Array) => new Uint8Array(array.buffer, array.byteOffset, array.byteLength);
  const sections: Uint8Array[] = [
    encoder.encode(JSON.stringify(header)),
    encoder.encode(JSON.stringify(snapshot.terms)),
    encoder.encode(JSON.stringify(snapshot.ids)),
    encoder.encode(JSON.stringify(snapshot.metas)),
    bytes(snapshot.lengths),
    bytes(snapshot.termIds),
    bytes(snapshot.weights),
  ];
  const padded = (length: number) => (length + 3) & ~3;
  const size = 8 + sections.reduce((sum, section) => sum + 4 + padded(section.length), 0);
  const out = new Uint8Array(size);
  const view = new DataView(out.buffer);
  out.set(MAGIC, 0);
  let offset = 8;
  for (const section of sections) {
    view.setUint32(offset, section.length, true);
    out.set(section, offset + 4);
    offset += 4 + padded(section.length);
  }
  view.setUint32(4, crc32(out.subarray(8)), true);
  return out;
}

/** A snapshot that cannot be used; `offset` is where reading found the problem. */
export class SnapshotError extends Error {
  readonly offset: number;
  readonly detail: string;
  /**
   * @example
   * ```ts
   * throw new SnapshotError(4, "checksum mismatch");
   * ```
   */
  constructor(offset: number, detail: string) {
    super(`corrupt at byte ${offset} (${detail})`);
    this.name = "SnapshotError";
    this.offset = offset;
    this.detail = detail;
  }
}

/**
 * Decodes a snapshot, checking its checksum and that its parts agree; throws {@link SnapshotError} otherwise.
 *
 * @example
 * ```ts
 * const snapshot = decodeSnapshot(await Deno.readFile("index.bin"));
 * snapshot.ids; // ["a"]
 * ```
 */
export function decodeSnapshot(bytes: Uint8Array): IndexSnapshot {
  if (!isBinarySnapshot(bytes) || bytes.length < 8) throw new SnapshotError(0, "not a binary snapshot");
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (crc32(bytes.subarray(8)) !== view.getUint32(4, true)) throw new SnapshotError(4, "checksum mismatch");
  const decoder = new TextDecoder("utf-8", { fatal: true });
  let offset = 8;
  const next = (): Uint8Array => {
    if (offset + 4 > bytes.length) throw new SnapshotError(offset, "a section is missing");
    const length = view.getUint32(offset, true);
    if (offset + 4 + length > bytes.length) throw new SnapshotError(offset, `section length ${length} is impossible`);
    const section = bytes.subarray(offset + 4, offset + 4 + length);
    offset += 4 + ((length + 3) & ~3);
    return section;
  };
  const json = (what: string): unknown => {
    const at = offset;
    try {
      return JSON.parse(decoder.decode(next()));
    } catch (error) {
      if (error instanceof SnapshotError) throw error;
      throw new SnapshotError(at, `the ${what} are not JSON`);
    }
  };
  // Typed arrays are copied out, so the file's buffer (and its JSON sections) can be collected.
  const ints = (count: number, what: string) => {
    const at = offset;
    const section = next();
    if (section.length !== count * 4) throw new SnapshotError(at, `${what}: ${section.length} bytes for ${count}`);
    return new Int32Array(section.slice().buffer);
  };
  const header = json("header") as { documents?: unknown; terms?: unknown; pairs?: unknown };
  const { documents, terms: termCount, pairs } = header;
  if (![documents, termCount, pairs].every((n) => Number.isSafeInteger(n) && (n as number) >= 0)) {
    throw new SnapshotError(12, `the header ${JSON.stringify(header)} has no valid counts`);
  }
  const terms = json("terms");
  const ids = json("ids");
  const metas = json("metadata");
  if (!Array.isArray(terms) || terms.length !== termCount || !terms.every((t) => typeof t === "string")) {
    throw new SnapshotError(offset, `the terms do not match the header's ${termCount}`);
  }
  if (!Array.isArray(ids) || ids.length !== documents || !Array.isArray(metas) || metas.length !== documents) {
    throw new SnapshotError(offset, `the ids or metadata do not match the header's ${documents} documents`);
  }
  const lengths = ints(documents as number, "term counts");
  const termIds = ints(pairs as number, "term ids");
  const weightsAt = offset;
  const weightBytes = next();
  if (weightBytes.length !== (pairs as number) * 4) {
    throw new SnapshotError(weightsAt, `weights: ${weightBytes.length} bytes for ${pairs}`);
  }
  const weights = new Float32Array(weightBytes.slice().buffer);
  let total = 0;
  for (const length of lengths) total += length;
  if (total !== pairs) throw new SnapshotError(offset, `the term counts add up to ${total}, not ${pairs}`);
  for (const termId of termIds) {
    if (termId < 0 || termId >= (termCount as number)) throw new SnapshotError(offset, `term id ${termId} is unknown`);
  }
  return { terms: terms as string[], ids: ids as string[], metas: metas as DocMeta[], lengths, termIds, weights };
}
