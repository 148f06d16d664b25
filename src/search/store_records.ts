/**
 * The records of a vector store's log (`wal-<g>.log`) and of its oldest snapshot format: a put carries the document's
 * terms with their frequencies, so replaying the log after a crash needs no tokenizer (and gives the terms of the
 * analyzer that wrote them).
 *
 * @module
 */

import type { DocMeta } from "./inverted_index.ts";

/** A put as stored: terms with frequencies, so recovery needs no tokenizer. */
export interface PutRecord {
  op: "put";
  id: string;
  t: Array<[string, number]>;
  m: DocMeta;
}

/** A deletion of a document. */
export interface DeleteRecord {
  op: "del";
  id: string;
}

/** The end of a snapshot in the record format: how many puts came before it. */
export interface EndRecord {
  op: "end";
  count: number;
}

/** Any record of the log or of a record-format snapshot. */
export type StoreRecord = PutRecord | DeleteRecord | EndRecord;
