/**
 * A segment's metadata in columns, in memory: per key a column of numbers (8 bytes a document) or of codes into the
 * key's values (4 bytes a document, each value kept once), and per document the order of its keys. Ranking reads a
 * candidate's metadata (a conversation's session, a time) for each of its 40 best: read from the file, each one the
 * first time a question was asked cost a seek, a read and a JSON parse — about as much as ranking the question.
 * Read once when the segment opens (a year's 100k documents: ≈ 3 MB, where the JSON is 10 MB on disk).
 *
 * @module
 */

import type { DocMeta } from "./inverted_index.ts";

/** Keys beyond this many (over all documents) are not put in columns: the segment reads its metadata from the file. */
export const MAX_META_KEYS = 16;

const decoder = new TextDecoder("utf-8", { fatal: true });

/** One key's values: numbers where `codes` is -1 (or absent), else `values[code]`. */
interface Column {
  numbers: Float64Array | undefined;
  codes: Int32Array | undefined;
  values: Array<string | boolean>;
  /** While reading: each value's code. */
  coded: Map<string | boolean, number> | undefined;
}

/** A node of the shapes' trie: the keys so far, the shape ending here (or -1), and the next key's nodes. */
interface ShapeNode {
  shape: number;
  keys: number[];
  next: Map<number, ShapeNode>;
}

const LEFT_BRACKET = 0x5b, COMMA = 0x2c, RIGHT_BRACKET = 0x5d;

/** What the columns are read from: the segment's metadata, in slices of slots. */
export interface MetaSource {
  readonly documents: number;
  metaSlices(bytes: number): Iterable<[number, number]>;
  metasOfRange(from: number, to: number): { bytes: Uint8Array; offset: (slot: number) => number };
}

/** Bytes of metadata parsed at once: a slice's objects die young (larger slices, promoted, swelled the heap at open). */
const SLICE_BYTES = 32 << 10;

/** The metadata of a segment's documents, by slot. */
export class MetaColumns {
  #keys: string[] = [];
  #columns: Column[] = [];
  /** Each shape: the key indexes of a document's metadata, in its order. */
  #shapes: number[][] = [];
  #shapeOf: Uint32Array;
  /** Metadata that is not an object of strings, numbers and booleans (never written by homed), as parsed. */
  #odd = new Map<number, DocMeta>();
  /** While reading: the shapes met, by their keys in order (a shape of -1 is a prefix no document ended at). */
  #shapeTrie: ShapeNode | undefined = { shape: -1, keys: [], next: new Map() };
  #stringBytes = 0;

  private constructor(documents: number) {
    this.#shapeOf = new Uint32Array(documents);
  }

  /**
   * Reads every document's metadata from `source` into columns, awaiting `pause()` between slices; undefined when
   * the metadata has more than {@link MAX_META_KEYS} keys in all (each key's column is as long as the segment).
   *
   * @example
   * ```ts
   * import { Segment } from "./segment.ts";
   *
   * const segment = await Segment.open("/var/lib/homed/memory/documents-index/snap-4.bin");
   * const columns = await MetaColumns.read(segment, () => Promise.resolve());
   * columns?.get(0); // { time: 1788246218450, session: "y001-1" }
   * ```
   */
  static async read(source: MetaSource, pause: () => Promise<void>): Promise<MetaColumns | undefined> {
    const columns = new MetaColumns(source.documents);
    let list = new Uint8Array(0);
    for (const [from, to] of source.metaSlices(SLICE_BYTES)) {
      // A slice's metadata as one JSON array, parsed at once: a parse per document cost twice as much.
      const { bytes, offset } = source.metasOfRange(from, to);
      const length = offset(to) - offset(from) + (to - from) + 1;
      if (list.length < length) list = new Uint8Array(2 * length);
      let at = 0;
      for (let slot = from; slot < to; slot++) {
        list[at++] = slot === from ? LEFT_BRACKET : COMMA;
        list.set(bytes.subarray(offset(slot), offset(slot + 1)), at);
        at += offset(slot + 1) - offset(slot);
      }
      list[at++] = RIGHT_BRACKET;
      const metas = JSON.parse(decoder.decode(list.subarray(0, at))) as unknown[];
      for (let slot = from; slot < to; slot++) if (!columns.#put(slot, metas[slot - from])) return undefined;
      await pause();
    }
    for (const column of columns.#columns) column.coded = undefined;
    columns.#shapeTrie = undefined;
    return columns;
  }

  /** Puts one document's metadata in; false when there are too many keys for columns. */
  #put(slot: number, meta: unknown): boolean {
    if (typeof meta !== "object" || meta === null || Array.isArray(meta)) {
      this.#odd.set(slot, meta as DocMeta);
      return true;
    }
    let node = this.#shapeTrie!;
    for (const key in meta) {
      const value = (meta as Record<string, unknown>)[key];
      if (typeof value !== "number" && typeof value !== "string" && typeof value !== "boolean") {
        this.#odd.set(slot, meta as DocMeta);
        return true;
      }
      let k = this.#keys.indexOf(key);
      if (k < 0) {
        if (this.#keys.length === MAX_META_KEYS) return false;
        k = this.#keys.push(key) - 1;
        this.#columns.push({ numbers: undefined, codes: undefined, values: [], coded: new Map() });
      }
      let next = node.next.get(k);
      if (!next) node.next.set(k, next = { shape: -1, keys: [...node.keys, k], next: new Map() });
      node = next;
      const column = this.#columns[k]!;
      if (typeof value === "number") {
        column.numbers ??= new Float64Array(this.#shapeOf.length);
        column.numbers[slot] = value;
        if (column.codes) column.codes[slot] = -1;
        continue;
      }
      if (!column.codes) {
        column.codes = new Int32Array(this.#shapeOf.length);
        // Slots before this one held numbers or nothing.
        column.codes.fill(-1);
      }
      let code = column.coded!.get(value);
      if (code === undefined) {
        code = column.values.push(value) - 1;
        column.coded!.set(value, code);
        if (typeof value === "string") this.#stringBytes += 2 * value.length + 16;
      }
      column.codes[slot] = code;
    }
    if (node.shape < 0) node.shape = this.#shapes.push(node.keys) - 1;
    this.#shapeOf[slot] = node.shape;
    return true;
  }

  /** The slot's metadata: a new object, with its keys in the order they were written. */
  get(slot: number): DocMeta {
    const odd = this.#odd.size ? this.#odd.get(slot) : undefined;
    if (odd !== undefined) return structuredClone(odd);
    const meta: DocMeta = {};
    const keys = this.#keys, columns = this.#columns;
    for (const k of this.#shapes[this.#shapeOf[slot]!]!) {
      const column = columns[k]!;
      const code = column.codes ? column.codes[slot]! : -1;
      meta[keys[k]!] = code >= 0 ? column.values[code]! : column.numbers![slot]!;
    }
    return meta;
  }

  /** Bytes held (the columns, the shapes and an estimate of the values' strings). */
  get residentBytes(): number {
    let bytes = this.#shapeOf.byteLength + this.#stringBytes;
    for (const column of this.#columns) bytes += (column.numbers?.byteLength ?? 0) + (column.codes?.byteLength ?? 0);
    return bytes;
  }
}
