/**
 * What a compaction's new segment will hold, worked out before a byte of it is written: which of the base segment's
 * slots are still live and where they go, the newer documents' postings term by term, the merged term dictionary
 * (terms no live document uses dropped), and the resident sections — term and id bytes, starts, norms and the id
 * hash order. Every loop over documents or terms yields every 8,192 of them: at 100k documents these steps, run in
 * one go, held the event loop for ≈ 0.2 s (a large delta: ≈ 0.9 s).
 *
 * @module
 */

import { CONTEXT_FIELD } from "./inverted_index.ts";
import { FILTER_FIELD } from "./ranking.ts";
import type { Segment } from "./segment.ts";
import { compareBytes, hashBytes } from "./segment_bytes.ts";
import type { IndexSnapshot } from "./snapshot.ts";
import { sortInSlices } from "./sort_in_slices.ts";

/** The largest u32: the format's counts and offsets are u32. */
const MAX_U32 = 0xffffffff;
/** Documents or terms handled between two pauses in the steps before writing (a power of two). */
const SLICE_ITEMS = 8192;

/** What a compaction writes: the segment in use with its state at the snapshot point, and the newer documents. */
export interface SegmentInput {
  base?: { segment: Segment; alive: Uint8Array; df: Int32Array } | undefined;
  /** The documents written since `base`, as {@link InvertedIndex.snapshot} gives them (none of them in `base`). */
  delta: IndexSnapshot;
}

/** One term of the new segment: where it comes from (a base or delta term id, or -1), its bytes and its df. */
export interface MergedTerm {
  base: number;
  delta: number;
  bytes: Uint8Array;
  df: number;
}

/** The delta's postings grouped by term: term `t`'s are `[postStart[t], postStart[t + 1])` of slots and weights. */
export interface DeltaPostings {
  postStart: Int32Array;
  slots: Int32Array;
  weights: Float32Array;
}

/** The new segment, planned: its counts, the maps from old to new slots and terms, and the resident sections. */
export interface SegmentPlan {
  documents: number;
  terms: number;
  pairs: number;
  metaBytes: number;
  /** Base slot → new slot, -1 for a deleted one. */
  newSlotOfBase: Int32Array;
  /** Base term id → new term id, -1 for a dropped one. */
  newTermOfBase: Int32Array;
  /** Delta term id → new term id, -1 for a dropped one. */
  newTermOfDelta: Int32Array;
  merged: MergedTerm[];
  deltaPostings: DeltaPostings;
  /** Each delta document's metadata as JSON bytes. */
  deltaMetaBytes: Uint8Array[];
  /** The resident sections in the order the file holds them. */
  sections: [
    termBytes: Uint8Array,
    termStart: Uint32Array,
    df: Int32Array,
    postStart: Uint32Array,
    idBytes: Uint8Array,
    idStart: Uint32Array,
    idOrder: Uint32Array,
    docStart: Uint32Array,
    metaStart: Uint32Array,
    norms: Float32Array,
  ];
}

const encoder = new TextEncoder();

const compare = (a: Uint8Array, b: Uint8Array) => compareBytes(a, 0, a.length, b, 0, b.length);
const hash = (bytes: Uint8Array) => hashBytes(bytes, 0, bytes.length);
/** Whether the loop at item `i` pauses now. */
const due = (i: number) => (i & (SLICE_ITEMS - 1)) === SLICE_ITEMS - 1;

/**
 * Plans the merge of `input` into a new segment (to be written at `path`, named in errors): the base's live
 * documents in their order, then the delta's; terms no live document uses are dropped. Throws a `RangeError` when
 * the parts disagree or the result is too large for one file.
 *
 * @example
 * ```ts
 * import { InvertedIndex } from "./inverted_index.ts";
 *
 * const index = new InvertedIndex();
 * index.put("a", new Map([["客厅", 1]]), {});
 * const plan = await planSegment("/tmp/seg-1.bin", { delta: index.snapshot() }, () => Promise.resolve());
 * plan.documents; // 1
 * ```
 */
export async function planSegment(path: string, input: SegmentInput, pause: () => Promise<void>): Promise<SegmentPlan> {
  const { base, delta } = input;
  // Documents: the base's live ones in slot order, then the delta's.
  const baseCount = base?.segment.documents ?? 0;
  const newSlotOfBase = new Int32Array(baseCount).fill(-1);
  let documents = 0;
  for (let slot = 0; slot < baseCount; slot++) if (base!.alive[slot]) newSlotOfBase[slot] = documents++;
  const baseLive = documents;
  documents += delta.ids.length;

  const { deltaDf, postings: deltaPostings } = await postingsOfDelta(delta, baseLive, pause);
  const { merged, newTermOfBase, newTermOfDelta } = await mergeTerms(base, delta, deltaDf, pause);

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
  const docs = await documentSections(base, newSlotOfBase, delta, documents, pause);
  const { idStart, docStart, metaStart, norms, deltaIdBytes, deltaMetaBytes } = docs;
  if (docStart[documents] !== pairs) {
    throw new RangeError(`Segment ${path}: the documents hold ${docStart[documents]} terms, the postings ${pairs}`);
  }
  const idBytes = new Uint8Array(idStart[documents]!);
  {
    let slot = 0;
    for (let s = 0; s < baseCount; s++) {
      if (newSlotOfBase[s]! >= 0) idBytes.set(base!.segment.idBytes(s), idStart[slot++]!);
      if (due(s)) await pause();
    }
    for (const bytes of deltaIdBytes) idBytes.set(bytes, idStart[slot++]!);
  }
  const idOrder = await idOrderOf(base?.segment, newSlotOfBase, baseLive, deltaIdBytes, documents, pause);
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
  return {
    documents,
    terms,
    pairs,
    metaBytes,
    newSlotOfBase,
    newTermOfBase,
    newTermOfDelta,
    merged,
    deltaPostings,
    deltaMetaBytes,
    sections: [termBytes, termStart, df, postStart, idBytes, idStart, idOrder, docStart, metaStart, norms],
  };
}

/** The delta's postings, term by term; its documents take the slots from `baseLive` on. */
async function postingsOfDelta(
  delta: IndexSnapshot,
  baseLive: number,
  pause: () => Promise<void>,
): Promise<{ deltaDf: Int32Array; postings: DeltaPostings }> {
  const deltaTerms = delta.terms.length;
  const deltaDf = new Int32Array(deltaTerms);
  for (const termId of delta.termIds) deltaDf[termId]!++;
  const deltaPostStart = new Int32Array(deltaTerms + 1);
  for (let t = 0; t < deltaTerms; t++) deltaPostStart[t + 1] = deltaPostStart[t]! + deltaDf[t]!;
  const deltaSlots = new Int32Array(delta.termIds.length), deltaWeights = new Float32Array(delta.termIds.length);
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
  return { deltaDf, postings: { postStart: deltaPostStart, slots: deltaSlots, weights: deltaWeights } };
}

/** Terms: the base's (sorted) and the delta's (sorted here) merged; a term without live documents is dropped. */
async function mergeTerms(
  base: SegmentInput["base"],
  delta: IndexSnapshot,
  deltaDf: Int32Array,
  pause: () => Promise<void>,
): Promise<{ merged: MergedTerm[]; newTermOfBase: Int32Array; newTermOfDelta: Int32Array }> {
  const deltaTerms = delta.terms.length;
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
  const baseSegment = base?.segment;
  const baseTerms = baseSegment?.terms ?? 0;
  const newTermOfBase = new Int32Array(baseTerms).fill(-1);
  const newTermOfDelta = new Int32Array(deltaTerms).fill(-1);
  const merged: MergedTerm[] = [];
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
  return { merged, newTermOfBase, newTermOfDelta };
}

/** The per-document sections (id, term and metadata starts, norms), and the delta's ids and metadata as bytes. */
async function documentSections(
  base: SegmentInput["base"],
  newSlotOfBase: Int32Array,
  delta: IndexSnapshot,
  documents: number,
  pause: () => Promise<void>,
): Promise<{
  idStart: Uint32Array;
  docStart: Uint32Array;
  metaStart: Uint32Array;
  norms: Float32Array;
  deltaIdBytes: Uint8Array[];
  deltaMetaBytes: Uint8Array[];
}> {
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
  let slot = 0;
  const add = (idLength: number, termCount: number, metaLength: number, norm: number) => {
    idStart[slot + 1] = idStart[slot]! + idLength;
    docStart[slot + 1] = docStart[slot]! + termCount;
    metaStart[slot + 1] = metaStart[slot]! + metaLength;
    norms[slot++] = norm;
  };
  const baseSegment = base?.segment;
  const baseNorms = baseSegment?.norms();
  for (let s = 0; s < newSlotOfBase.length; s++) {
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
  return { idStart, docStart, metaStart, norms, deltaIdBytes, deltaMetaBytes };
}

/** The id order: the base's, already sorted by hash (its live slots keep their order), merged with the delta's. */
async function idOrderOf(
  baseSegment: Segment | undefined,
  newSlotOfBase: Int32Array,
  baseLive: number,
  deltaIdBytes: readonly Uint8Array[],
  documents: number,
  pause: () => Promise<void>,
): Promise<Uint32Array> {
  const deltaHash = new Uint32Array(deltaIdBytes.length);
  for (let doc = 0; doc < deltaIdBytes.length; doc++) {
    deltaHash[doc] = hash(deltaIdBytes[doc]!);
    if (due(doc)) await pause();
  }
  const deltaIdOrder = await sortInSlices(
    Uint32Array.from({ length: deltaIdBytes.length }, (_, i) => i),
    (a, b) => deltaHash[a]! - deltaHash[b]! || a - b,
    pause,
  );
  const idOrder = new Uint32Array(documents);
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
  return idOrder;
}
