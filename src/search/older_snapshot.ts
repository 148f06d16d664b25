/**
 * The snapshot formats a store wrote before segments — the binary `HVS2` and, before it, the record format (puts then
 * an end record) — read once more so a store written by an older homed opens: the store converts what this gives
 * into a segment at once. A file that is corrupt or not whole is said to be so, with why, for the store to set it
 * aside; it is never half used.
 *
 * @module
 */

import { InvertedIndex, type ScoringOptions } from "./inverted_index.ts";
import { readRecords } from "./record_file.ts";
import { decodeSnapshot, type IndexSnapshot, isBinarySnapshot, SnapshotError } from "./snapshot.ts";
import type { PutRecord, StoreRecord } from "./store_records.ts";

/**
 * An older snapshot's documents, or why the file cannot be used (`corrupt`: a phrase that follows "is").
 *
 * @example
 * ```ts
 * const bytes = await Deno.readFile("/var/lib/homed/vector/knowledge/snap-2.bin");
 * const older = decodeOlderSnapshot(bytes);
 * if ("corrupt" in older) console.error(`snap-2.bin is ${older.corrupt}`);
 * ```
 */
export function decodeOlderSnapshot(
  bytes: Uint8Array,
  scoring?: ScoringOptions,
): { snapshot: IndexSnapshot } | { corrupt: string } {
  if (isBinarySnapshot(bytes)) {
    try {
      const snapshot = decodeSnapshot(bytes);
      if (new Set(snapshot.ids).size !== snapshot.ids.length) {
        const twice = snapshot.ids.find((id, i) => snapshot.ids.indexOf(id) !== i);
        throw new RangeError(`The snapshot holds the id "${twice}" twice`);
      }
      return { snapshot };
    } catch (error) {
      if (!(error instanceof SnapshotError || error instanceof RangeError)) throw error;
      return { corrupt: error instanceof SnapshotError ? error.message : `inconsistent (${error.message})` };
    }
  }
  const { records, problem } = readRecords(bytes);
  const end = records.at(-1) as StoreRecord | undefined;
  const puts = records.slice(0, -1) as StoreRecord[];
  if (problem || end?.op !== "end" || end.count !== puts.length || puts.some((r) => r.op !== "put")) {
    return { corrupt: problem ? `${problem.kind} at byte ${problem.offset} (${problem.detail})` : "incomplete" };
  }
  const index = new InvertedIndex(scoring);
  for (const record of puts as PutRecord[]) index.put(record.id, new Map(record.t), record.m ?? {});
  return { snapshot: index.snapshot() };
}
