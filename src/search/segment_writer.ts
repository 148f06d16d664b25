/**
 * Writes a segment (see `segment.ts` for the layout) by merging the live documents of the segment in use with the
 * documents written since, term by term, without holding either in memory as a whole: the old segment's postings
 * are read one term at a time, its document terms and metadata in slices of 256 KiB, and the new file is written
 * through a 256 KiB buffer with `pause()` awaited after each so a large index never holds the event loop for long.
 *
 * @module
 */

import { crc32 } from "./crc32.ts";
import { Output, SLICE_BYTES } from "./segment_output.ts";
import { type DeltaPostings, type MergedTerm, planSegment, type SegmentInput } from "./segment_plan.ts";
import { SEGMENT_HEADER_BYTES, SEGMENT_MAGIC } from "./segment_layout.ts";
import type { IndexSnapshot } from "./snapshot.ts";

export type { SegmentInput } from "./segment_plan.ts";

const MAGIC = SEGMENT_MAGIC;
const HEADER_BYTES = SEGMENT_HEADER_BYTES;

/** What was written. */
export interface SegmentWritten {
  documents: number;
  terms: number;
  bytes: number;
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
  const plan = await planSegment(path, input, pause);
  const { documents, terms, pairs, metaBytes, newSlotOfBase, sections } = plan;
  const [termBytes, , , , idBytes] = sections;
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
    for (const section of sections) {
      await (section instanceof Uint8Array ? out.bytes(section) : out.typed(section));
      await out.padding();
    }
    await writePostings(out, plan.merged, input.base, newSlotOfBase, plan.deltaPostings);
    await out.padding();
    await writeDocTerms(out, input.base, newSlotOfBase, plan.newTermOfBase, input.delta, plan.newTermOfDelta);
    await out.padding();
    await writeMetas(out, input.base, newSlotOfBase, plan.deltaMetaBytes);
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

/** The postings section: per term, the base's live postings (renumbered) then the delta's, slots then weights. */
async function writePostings(
  out: Output,
  merged: readonly MergedTerm[],
  base: SegmentInput["base"],
  newSlotOfBase: Int32Array,
  delta: DeltaPostings,
): Promise<void> {
  const { postStart: deltaPostStart, slots: deltaSlots, weights: deltaWeights } = delta;
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

/** The document terms section: per live document, its term ids (renumbered) then their weights. */
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
    for (let slot = 0; slot < segment.documents; slot++) {
      if (newSlotOfBase[slot]! < 0) continue;
      const { termIds, weights } = segment.docTerms(slot);
      await write(termIds, weights, newTermOfBase);
    }
  }
  let at = 0;
  for (let doc = 0; doc < delta.ids.length; doc++) {
    const count = delta.lengths[doc]!;
    await write(delta.termIds.subarray(at, at + count), delta.weights.subarray(at, at + count), newTermOfDelta);
    at += count;
  }
}

/** The metadata section: each live document's JSON, the base's read in slices, then the delta's. */
async function writeMetas(
  out: Output,
  base: SegmentInput["base"],
  newSlotOfBase: Int32Array,
  deltaMetaBytes: readonly Uint8Array[],
): Promise<void> {
  const segment = base?.segment;
  if (segment) {
    for (const [from, to] of segment.metaSlices(SLICE_BYTES)) {
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
