/**
 * Opening a segment reads its resident sections — the term dictionary, the ids and their hash order, the per-document
 * starts and norms — and checks that they agree before any search trusts them: every start list rising from 0 to its
 * section's size, each term's posting count its document frequency, the terms in byte order, the id order a
 * permutation sorted by hash, and no id twice. A file that fails is a {@link SnapshotError} naming the byte.
 *
 * @module
 */

import { compareBytes, hashBytes } from "./segment_bytes.ts";
import type { Counts, Layout } from "./segment_layout.ts";
import { SnapshotError } from "./snapshot.ts";

const decoder = new TextDecoder("utf-8", { fatal: true });

/** The sections kept in memory. */
export interface Sections {
  termBytes: Uint8Array;
  termStart: Uint32Array;
  df: Int32Array;
  postStart: Uint32Array;
  idBytes: Uint8Array;
  idStart: Uint32Array;
  idOrder: Uint32Array;
  idHash: Uint32Array;
  docStart: Uint32Array;
  metaStart: Uint32Array;
  norms: Float32Array;
}

/**
 * Up to `length` bytes of `file` from `position` (fewer where the file ends), into `buffer` when given.
 *
 * @example
 * ```ts
 * const file = await Deno.open("/var/lib/homed/vector/knowledge/snap-3.bin");
 * const magic = await readAt(file, 0, 4);
 * file.close();
 * ```
 */
export async function readAt(
  file: Deno.FsFile,
  position: number,
  length: number,
  buffer?: Uint8Array,
): Promise<Uint8Array> {
  const into = buffer ? buffer.subarray(0, length) : new Uint8Array(length);
  await file.seek(position, Deno.SeekMode.Start);
  let done = 0;
  while (done < length) {
    const read = await file.read(into.subarray(done));
    if (read === null || read === 0) break;
    done += read;
  }
  return done === length ? into : into.subarray(0, done);
}

/**
 * Fills `into` from `position` of `file`, synchronously, or throws a {@link SnapshotError} naming where the file ended.
 * The reads of a segment kept resident and a search's postings use it: a year's sections, read 1 MB at a time on the
 * runtime's threads, now and then left 40 MB more resident in their allocator's arenas.
 *
 * @example
 * ```ts
 * const file = await Deno.open("/var/lib/homed/vector/knowledge/snap-3.bin");
 * const magic = new Uint8Array(4);
 * readFullySync(file, 0, magic);
 * file.close();
 * ```
 */
export function readFullySync(file: Deno.FsFile, position: number, into: Uint8Array): void {
  file.seekSync(position, Deno.SeekMode.Start);
  for (let done = 0; done < into.length;) {
    const read = file.readSync(into.subarray(done));
    if (read === null || read === 0) {
      throw new SnapshotError(position + done, `the file ended ${into.length - done} bytes early`);
    }
    done += read;
  }
}

/**
 * Reads and checks the resident sections, awaiting `pause()` every 16k terms or ids checked.
 *
 * @example
 * ```ts
 * import { layoutOf, type Counts } from "./segment_layout.ts";
 *
 * declare const file: Deno.FsFile;
 * declare const counts: Counts;
 * const sections = await readSections(file, counts, layoutOf(counts), () => Promise.resolve());
 * ```
 */
export async function readSections(
  file: Deno.FsFile,
  c: Counts,
  layout: Layout,
  pause: () => Promise<void>,
): Promise<Sections> {
  // The checks below walk every term and id: they yield every 16k of them (a compaction opens what it wrote).
  const due = (i: number) => (i & 16383) === 16383;
  const u32 = async (at: number, count: number) => new Uint32Array((await readAt(file, at, 4 * count)).buffer);
  const termBytes = await readAt(file, layout.termBytes, c.termBytes);
  const termStart = await u32(layout.termStart, c.terms + 1);
  const df = new Int32Array((await readAt(file, layout.df, 4 * c.terms)).buffer);
  const postStart = await u32(layout.postStart, c.terms + 1);
  const idBytes = await readAt(file, layout.idBytes, c.idBytes);
  const idStart = await u32(layout.idStart, c.documents + 1);
  const idOrder = await u32(layout.idOrder, c.documents);
  const docStart = await u32(layout.docStart, c.documents + 1);
  const metaStart = await u32(layout.metaStart, c.documents + 1);
  const norms = new Float32Array((await readAt(file, layout.norms, 4 * c.documents)).buffer);
  const rising = async (array: Uint32Array, last: number, what: string, at: number) => {
    if (array[0] !== 0 || array[array.length - 1] !== last) {
      throw new SnapshotError(at, `the ${what} do not run from 0 to ${last}`);
    }
    for (let i = 1; i < array.length; i++) {
      if (array[i]! < array[i - 1]!) throw new SnapshotError(at + 4 * i, `the ${what} go down at ${i}`);
      if (due(i)) await pause();
    }
  };
  await rising(termStart, c.termBytes, "term starts", layout.termStart);
  await rising(postStart, c.pairs, "posting starts", layout.postStart);
  await rising(idStart, c.idBytes, "id starts", layout.idStart);
  await rising(docStart, c.pairs, "document starts", layout.docStart);
  await rising(metaStart, c.metaBytes, "metadata starts", layout.metaStart);
  for (let t = 0; t < c.terms; t++) {
    if (due(t)) await pause();
    if (postStart[t + 1]! - postStart[t]! !== df[t]) {
      throw new SnapshotError(
        layout.df + 4 * t,
        `term ${t} has ${postStart[t + 1]! - postStart[t]!} postings, df ${df[t]}`,
      );
    }
    if (
      t > 0 &&
      compareBytes(termBytes, termStart[t - 1]!, termStart[t]!, termBytes, termStart[t]!, termStart[t + 1]!) >= 0
    ) {
      throw new SnapshotError(layout.termBytes + termStart[t]!, `the terms are not in order at ${t}`);
    }
  }
  const idHash = new Uint32Array(c.documents);
  for (let slot = 0; slot < c.documents; slot++) {
    idHash[slot] = hashBytes(idBytes, idStart[slot]!, idStart[slot + 1]!);
    if (due(slot)) await pause();
  }
  const seen = new Uint8Array(c.documents);
  const same = (a: number, b: number) =>
    compareBytes(idBytes, idStart[a]!, idStart[a + 1]!, idBytes, idStart[b]!, idStart[b + 1]!) === 0;
  for (let i = 0, runStart = 0; i < c.documents; i++) {
    if (due(i)) await pause();
    const slot = idOrder[i]!;
    if (slot >= c.documents || seen[slot]) {
      throw new SnapshotError(layout.idOrder + 4 * i, `the id order is not a permutation`);
    }
    seen[slot] = 1;
    if (i > 0 && idHash[idOrder[i - 1]!]! > idHash[slot]!) {
      throw new SnapshotError(layout.idOrder + 4 * i, `the id order is not sorted`);
    }
    if (i > 0 && idHash[idOrder[i - 1]!] !== idHash[slot]) runStart = i;
    // Ids of one hash (a run, rarely longer than one) are compared with each other.
    for (let j = runStart; j < i; j++) {
      if (same(idOrder[j]!, slot)) {
        const id = decoder.decode(idBytes.subarray(idStart[slot]!, idStart[slot + 1]!));
        throw new SnapshotError(layout.idBytes + idStart[slot]!, `the segment holds the id "${id}" twice`);
      }
    }
  }
  return {
    termBytes,
    termStart,
    df,
    postStart,
    idBytes,
    idStart,
    idOrder,
    idHash,
    docStart,
    metaStart,
    norms,
  };
}
