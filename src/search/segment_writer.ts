/**
 * Writes a segment (see `segment.ts` for the layout) by merging the live documents of the segment in use with the
 * documents written since, term by term, without holding either in memory as a whole: the old segment's postings
 * are read one term at a time, its document terms and metadata in slices of 256 KiB, and the new file is written
 * through a 256 KiB buffer with `pause()` awaited after each so a large index never holds the event loop for long.
 *
 * @module
 */

import { crc32 } from "./crc32.ts";
import type { IndexSnapshot } from "./snapshot.ts";
import { compareBytes, hashBytes, type Segment, SEGMENT_HEADER_BYTES, SEGMENT_MAGIC } from "./segment.ts";
import { CONTEXT_FIELD } from "./inverted_index.ts";
import { FILTER_FIELD } from "./ranking.ts";

const MAGIC = SEGMENT_MAGIC;
const HEADER_BYTES = SEGMENT_HEADER_BYTES;
/** Bytes written between two pauses (and read at a time from the old segment). */
const SLICE_BYTES = 256 << 10;
const MAX_U32 = 0xffffffff;
/** Documents or terms handled between two pauses in the steps before writing (a power of two). */
const SLICE_ITEMS = 8192;

/** What a compaction writes: the segment in use with its state at the snapshot point, and the newer documents. */
export interface SegmentInput {
  base?: { segment: Segment; alive: Uint8Array; df: Int32Array } | undefined;
  /** The documents written since `base`, as {@link InvertedIndex.snapshot} gives them (none of them in `base`). */
  delta: IndexSnapshot;
}

/** What was written. */
export interface SegmentWritten {
  documents: number;
  terms: number;
  bytes: number;
}

const encoder = new TextEncoder();

const compare = (a: Uint8Array, b: Uint8Array) => compareBytes(a, 0, a.length, b, 0, b.length);
const hash = (bytes: Uint8Array) => hashBytes(bytes, 0, bytes.length);

/** A file written through a buffer, its CRC-32 kept as it goes. */
class Output {
  #file: Deno.FsFile;
  #buffer = new Uint8Array(SLICE_BYTES);
  #used = 0;
  #pause: () => Promise<void>;
  crc = 0;
  written = 0;

  constructor(file: Deno.FsFile, pause: () => Promise<void>) {
    this.#file = file;
    this.#pause = pause;
  }

  async bytes(bytes: Uint8Array): Promise<void> {
    let from = 0;
    while (from < bytes.length) {
      const take = Math.min(bytes.length - from, this.#buffer.length - this.#used);
      this.#buffer.set(bytes.subarray(from, from + take), this.#used);
      this.#used += take;
      from += take;
      if (this.#used === this.#buffer.length) await this.flush();
    }
  }

  async typed(array: Int32Array | Uint32Array | Float32Array): Promise<void> {
    await this.bytes(new Uint8Array(array.buffer, array.byteOffset, array.byteLength));
  }

  async padding(): Promise<void> {
    const extra = ((this.written + this.#used + 3) & ~3) - (this.written + this.#used);
    if (extra) await this.bytes(new Uint8Array(extra));
  }

  async flush(): Promise<void> {
    const chunk = this.#buffer.subarray(0, this.#used);
    this.crc = crc32(chunk, this.crc);
    let done = 0;
    while (done < chunk.length) done += await this.#file.write(chunk.subarray(done));
    this.written += chunk.length;
    this.#used = 0;
    await this.#pause();
  }
}

/**
 * Writes the merge of `input` to `path` (created or truncated) and fsyncs it. The new segment holds the base's live
 * documents in their order, then the delta's; terms no live document uses are dropped.
 *
 * @example
 * ```ts
 * import { InvertedIndex } from "./inverted_index.ts";
 *
 * const index = new InvertedIndex();
 * index.put("a", new Map([["客厅", 1]]), {});
 * await writeSegment("/tmp/seg-1.bin", { delta: index.snapshot() }, () => Promise.resolve());
 * ```
 */
export async function writeSegment(
  path: string,
  input: SegmentInput,
  pause: () => Promise<void>,
): Promise<SegmentWritten> {
  const { base, delta } = input;
  const baseSegment = base?.segment;
  const baseCount = baseSegment?.documents ?? 0;
  // Every loop over documents or terms yields every SLICE_ITEMS: at 100k documents the steps before the first
  // write, run in one go, held the event loop for ≈ 0.2 s (a large delta: ≈ 0.9 s).
  const due = (i: number) => (i & (SLICE_ITEMS - 1)) === SLICE_ITEMS - 1;
  // Documents: the base's live ones in slot order, then the delta's.
  const newSlotOfBase = new Int32Array(baseCount).fill(-1);
  let documents = 0;
  for (let slot = 0; slot < baseCount; slot++) if (base!.alive[slot]) newSlotOfBase[slot] = documents++;
  const baseLive = documents;
  documents += delta.ids.length;

  // The delta's postings, term by term.
  const deltaTerms = delta.terms.length;
  const deltaDf = new Int32Array(deltaTerms);
  for (const termId of delta.termIds) deltaDf[termId]!++;
  const deltaPostStart = new Int32Array(deltaTerms + 1);
  for (let t = 0; t < deltaTerms; t++) deltaPostStart[t + 1] = deltaPostStart[t]! + deltaDf[t]!;
  const deltaSlots = new Int32Array(delta.termIds.length), deltaWeights = new Float32Array(delta.termIds.length);
  {
    const fill = deltaPostStart.slice(0, deltaTerms);
    let at = 0;
    for (let doc = 0; doc < delta.ids.length; doc++) {
      for (let i = 0; i < delta.lengths[doc]!; i++, at++) {
        const termId = delta.termIds[at]!;
        const to = fill[termId]!++;
        deltaSlots[to] = baseLive + doc;
        deltaWeights[to] = delta.weights[at]!;
      }
      if (due(doc)) await pause();
    }
  }

  // Terms: the base's (sorted) and the delta's (sorted here) merged; a term without live documents is dropped.
  const deltaBytes: Uint8Array[] = [];
  for (let t = 0; t < deltaTerms; t++) {
    deltaBytes.push(encoder.encode(delta.terms[t]!));
    if (due(t)) await pause();
  }
  const deltaOrder = await sortInSlices(
    Uint32Array.from({ length: deltaTerms }, (_, i) => i),
    (a, b) => compare(deltaBytes[a]!, deltaBytes[b]!) || a - b,
    pause,
  );
  const baseTerms = baseSegment?.terms ?? 0;
  const newTermOfBase = new Int32Array(baseTerms).fill(-1);
  const newTermOfDelta = new Int32Array(deltaTerms).fill(-1);
  const merged: Array<{ base: number; delta: number; bytes: Uint8Array; df: number }> = [];
  for (let b = 0, d = 0, step = 0; b < baseTerms || d < deltaTerms; step++) {
    if (due(step)) await pause();
    const baseBytes = b < baseTerms ? baseSegment!.termBytes(b) : undefined;
    const deltaTerm = d < deltaTerms ? deltaOrder[d]! : -1;
    const order = baseBytes === undefined ? 1 : deltaTerm < 0 ? -1 : compare(baseBytes, deltaBytes[deltaTerm]!);
    const fromBase = order <= 0 ? b++ : -1;
    const fromDelta = order >= 0 ? (d++, deltaTerm) : -1;
    const df = (fromBase >= 0 ? base!.df[fromBase]! : 0) + (fromDelta >= 0 ? deltaDf[fromDelta]! : 0);
    if (df <= 0) continue;
    const newTerm = merged.length;
    if (fromBase >= 0) newTermOfBase[fromBase] = newTerm;
    if (fromDelta >= 0) newTermOfDelta[fromDelta] = newTerm;
    merged.push({ base: fromBase, delta: fromDelta, bytes: fromBase >= 0 ? baseBytes! : deltaBytes[fromDelta]!, df });
  }

  // The resident sections, built here (a few MB at 100k documents).
  const terms = merged.length;
  const termStart = new Uint32Array(terms + 1);
  const df = new Int32Array(terms);
  const postStart = new Uint32Array(terms + 1);
  for (let t = 0; t < terms; t++) {
    const term = merged[t]!;
    termStart[t + 1] = termStart[t]! + term.bytes.length;
    df[t] = term.df;
    postStart[t + 1] = postStart[t]! + term.df;
    if (due(t)) await pause();
  }
  const pairs = postStart[terms]!;
  const idStart = new Uint32Array(documents + 1);
  const docStart = new Uint32Array(documents + 1);
  const metaStart = new Uint32Array(documents + 1);
  const norms = new Float32Array(documents);
  const deltaIdBytes: Uint8Array[] = [];
  const deltaMetaBytes: Uint8Array[] = [];
  for (let doc = 0; doc < delta.ids.length; doc++) {
    deltaIdBytes.push(encoder.encode(delta.ids[doc]!));
    deltaMetaBytes.push(encoder.encode(JSON.stringify(delta.metas[doc])));
    if (due(doc)) await pause();
  }
  {
    let slot = 0;
    const add = (idLength: number, termCount: number, metaLength: number, norm: number) => {
      idStart[slot + 1] = idStart[slot]! + idLength;
      docStart[slot + 1] = docStart[slot]! + termCount;
      metaStart[slot + 1] = metaStart[slot]! + metaLength;
      norms[slot++] = norm;
    };
    const baseNorms = baseSegment?.norms();
    for (let s = 0; s < baseCount; s++) {
      if (due(s)) await pause();
      if (newSlotOfBase[s]! < 0) continue;
      add(baseSegment!.idBytes(s).length, baseSegment!.termCount(s), baseSegment!.metaBytes(s), baseNorms![s]!);
    }
    let at = 0;
    const unnormed = delta.terms.map((term) => term.startsWith(CONTEXT_FIELD) || term.startsWith(FILTER_FIELD));
    for (let doc = 0; doc < delta.ids.length; doc++) {
      let squares = 0;
      for (let i = 0; i < delta.lengths[doc]!; i++, at++) {
        if (!unnormed[delta.termIds[at]!]) squares += delta.weights[at]! * delta.weights[at]!;
      }
      add(deltaIdBytes[doc]!.length, delta.lengths[doc]!, deltaMetaBytes[doc]!.length, Math.sqrt(squares) || 1);
      if (due(doc)) await pause();
    }
  }
  if (docStart[documents] !== pairs) {
    throw new RangeError(`Segment ${path}: the documents hold ${docStart[documents]} terms, the postings ${pairs}`);
  }
  const idBytes = new Uint8Array(idStart[documents]!);
  {
    let slot = 0;
    for (let s = 0; s < baseCount; s++) {
      if (newSlotOfBase[s]! >= 0) idBytes.set(baseSegment!.idBytes(s), idStart[slot++]!);
      if (due(s)) await pause();
    }
    for (const bytes of deltaIdBytes) idBytes.set(bytes, idStart[slot++]!);
  }
  // The id order: the base's, already sorted by hash (its live slots keep their order), merged with the delta's.
  const deltaHash = new Uint32Array(delta.ids.length);
  for (let doc = 0; doc < delta.ids.length; doc++) {
    deltaHash[doc] = hash(deltaIdBytes[doc]!);
    if (due(doc)) await pause();
  }
  const deltaIdOrder = await sortInSlices(
    Uint32Array.from({ length: delta.ids.length }, (_, i) => i),
    (a, b) => deltaHash[a]! - deltaHash[b]! || a - b,
    pause,
  );
  const idOrder = new Uint32Array(documents);
  {
    const baseOrder = baseSegment?.idOrder();
    let at = 0, d = 0;
    for (let i = 0; i < (baseOrder?.order.length ?? 0); i++) {
      const old = baseOrder!.order[i]!;
      if (newSlotOfBase[old]! < 0) continue;
      const h = baseOrder!.hash[old]!;
      while (d < deltaIdOrder.length && deltaHash[deltaIdOrder[d]!]! < h) idOrder[at++] = baseLive + deltaIdOrder[d++]!;
      idOrder[at++] = newSlotOfBase[old]!;
      if (due(i)) await pause();
    }
    while (d < deltaIdOrder.length) idOrder[at++] = baseLive + deltaIdOrder[d++]!;
  }
  const termBytes = new Uint8Array(termStart[terms]!);
  for (let t = 0; t < terms; t++) {
    termBytes.set(merged[t]!.bytes, termStart[t]!);
    if (due(t)) await pause();
  }
  const metaBytes = metaStart[documents]!;
  for (const [what, value] of [["postings", pairs], ["metadata bytes", metaBytes], ["id bytes", idBytes.length]]) {
    if ((value as number) * 8 > MAX_U32) {
      throw new RangeError(`Segment ${path}: ${value} ${what} are too many for one file`);
    }
  }

  const file = await Deno.open(path, { write: true, create: true, truncate: true });
  try {
    // The placeholder header is written as it is; its counts and zeros (bytes 8–63) count in the CRC, its magic
    // and CRC field are written at the end.
    const counts = new Uint32Array([documents, terms, pairs, termBytes.length, idBytes.length, metaBytes]);
    const headerTail = new Uint8Array(HEADER_BYTES - 8);
    headerTail.set(new Uint8Array(counts.buffer), 0);
    const placeholder = new Uint8Array(HEADER_BYTES);
    placeholder.set(headerTail, 8);
    for (let done = 0; done < placeholder.length;) done += await file.write(placeholder.subarray(done));
    const out = new Output(file, pause);
    out.crc = crc32(headerTail);
    for (
      const section of [termBytes, termStart, df, postStart, idBytes, idStart, idOrder, docStart, metaStart, norms]
    ) {
      await (section instanceof Uint8Array ? out.bytes(section) : out.typed(section));
      await out.padding();
    }
    await writePostings(out, merged, base, newSlotOfBase, deltaPostStart, deltaSlots, deltaWeights);
    await out.padding();
    await writeDocTerms(out, base, newSlotOfBase, newTermOfBase, delta, newTermOfDelta);
    await out.padding();
    await writeMetas(out, base, newSlotOfBase, deltaMetaBytes);
    await out.padding();
    await out.flush();
    const header = new Uint8Array(HEADER_BYTES);
    header.set(MAGIC, 0);
    new DataView(header.buffer).setUint32(4, out.crc, true);
    header.set(headerTail, 8);
    await file.seek(0, Deno.SeekMode.Start);
    let done = 0;
    while (done < header.length) done += await file.write(header.subarray(done));
    await file.sync();
    return { documents, terms, bytes: HEADER_BYTES + out.written };
  } finally {
    file.close();
  }
}

async function writePostings(
  out: Output,
  merged: ReadonlyArray<{ base: number; delta: number; df: number }>,
  base: SegmentInput["base"],
  newSlotOfBase: Int32Array,
  deltaPostStart: Int32Array,
  deltaSlots: Int32Array,
  deltaWeights: Float32Array,
): Promise<void> {
  // One buffer for every term's postings, as large as the longest list.
  let longest = 0;
  for (const term of merged) longest = Math.max(longest, term.df);
  const slotBuffer = new Int32Array(longest), weightBuffer = new Float32Array(longest);
  for (const term of merged) {
    const slots = slotBuffer.subarray(0, term.df), weights = weightBuffer.subarray(0, term.df);
    let at = 0;
    if (term.base >= 0) {
      const postings = base!.segment.postings(term.base);
      for (let i = postings.from; i < postings.to; i++) {
        const slot = postings.slots[i]!;
        if (!base!.alive[slot]) continue;
        if (at === term.df) {
          throw new RangeError(`Segment ${base!.segment.path}: term ${term.base} has more live postings than its df`);
        }
        slots[at] = newSlotOfBase[slot]!;
        weights[at++] = postings.weights[i]!;
      }
    }
    if (term.delta >= 0) {
      for (let i = deltaPostStart[term.delta]!; i < deltaPostStart[term.delta + 1]!; i++) {
        slots[at] = deltaSlots[i]!;
        weights[at++] = deltaWeights[i]!;
      }
    }
    if (at !== term.df) throw new RangeError(`A merged term has ${at} postings, not its df ${term.df}`);
    await out.typed(slots);
    await out.typed(weights);
  }
}

async function writeDocTerms(
  out: Output,
  base: SegmentInput["base"],
  newSlotOfBase: Int32Array,
  newTermOfBase: Int32Array,
  delta: IndexSnapshot,
  newTermOfDelta: Int32Array,
): Promise<void> {
  let buffer = new Int32Array(256);
  const write = async (termIds: Int32Array, weights: Float32Array, map: Int32Array) => {
    if (termIds.length > buffer.length) buffer = new Int32Array(termIds.length * 2);
    const remapped = buffer.subarray(0, termIds.length);
    for (let i = 0; i < termIds.length; i++) remapped[i] = map[termIds[i]!]!;
    await out.typed(remapped);
    await out.typed(weights);
  };
  const segment = base?.segment;
  if (segment) {
    for (const [from, to] of segment.slices(SLICE_BYTES)) {
      const terms = segment.docTermsOfRange(from, to);
      for (let slot = from; slot < to; slot++) {
        if (newSlotOfBase[slot]! < 0) continue;
        const { termIds, weights } = terms(slot);
        await write(termIds, weights, newTermOfBase);
      }
    }
  }
  let at = 0;
  for (let doc = 0; doc < delta.ids.length; doc++) {
    const count = delta.lengths[doc]!;
    await write(delta.termIds.subarray(at, at + count), delta.weights.subarray(at, at + count), newTermOfDelta);
    at += count;
  }
}

async function writeMetas(
  out: Output,
  base: SegmentInput["base"],
  newSlotOfBase: Int32Array,
  deltaMetaBytes: readonly Uint8Array[],
): Promise<void> {
  const segment = base?.segment;
  if (segment) {
    for (const [from, to] of segment.slices(SLICE_BYTES, "metas")) {
      const range = segment.metasOfRange(from, to);
      for (let slot = from; slot < to; slot++) {
        if (newSlotOfBase[slot]! >= 0) {
          await out.bytes(range.bytes.subarray(range.offset(slot), range.offset(slot + 1)));
        }
      }
    }
  }
  for (const bytes of deltaMetaBytes) await out.bytes(bytes);
}

/**
 * Sorts `items` by `compare` (a total order) with `pause()` awaited between slices: runs of 4,096 sorted in place,
 * then merged pairwise, about 32,768 items between pauses.
 */
async function sortInSlices(
  items: Uint32Array,
  compare: (a: number, b: number) => number,
  pause: () => Promise<void>,
): Promise<Uint32Array> {
  const RUN = 4096;
  for (let i = 0; i < items.length; i += RUN) {
    items.subarray(i, i + RUN).sort(compare);
    if (items.length > RUN) await pause();
  }
  let from: Uint32Array = items, into: Uint32Array = new Uint32Array(items.length);
  for (let width = RUN; width < items.length; width *= 2) {
    let work = 0;
    for (let low = 0; low < items.length; low += 2 * width) {
      const middle = Math.min(low + width, items.length), high = Math.min(low + 2 * width, items.length);
      let a = low, b = middle, at = low;
      while (a < middle && b < high) into[at++] = compare(from[a]!, from[b]!) <= 0 ? from[a++]! : from[b++]!;
      while (a < middle) into[at++] = from[a++]!;
      while (b < high) into[at++] = from[b++]!;
      work += high - low;
      if (work >= 8 * RUN) {
        work = 0;
        await pause();
      }
    }
    [from, into] = [into, from];
  }
  return from;
}
