/**
 * Where a segment's sections lie: the header's size and magic, and from the header's six counts the byte offset of
 * every section (each padded to 4 bytes) and the file's end — the layout `segment.ts` describes. The reader and the
 * writer both take their offsets from here, so they cannot disagree.
 *
 * @module
 */

/** The first bytes of a segment file. */
export const SEGMENT_MAGIC = [0x48, 0x56, 0x53, 0x33]; // "HVS3"
/** The header's size: magic, CRC, six counts, zeros. */
export const SEGMENT_HEADER_BYTES = 64;

/** The counts in a segment's header. */
export interface Counts {
  documents: number;
  terms: number;
  pairs: number;
  termBytes: number;
  idBytes: number;
  metaBytes: number;
}

/** Where each section starts (byte offsets), and where the file ends. */
export interface Layout {
  termBytes: number;
  termStart: number;
  df: number;
  postStart: number;
  idBytes: number;
  idStart: number;
  idOrder: number;
  docStart: number;
  metaStart: number;
  norms: number;
  postings: number;
  docTerms: number;
  metas: number;
  end: number;
}

const pad = (bytes: number) => (bytes + 3) & ~3;

/**
 * The sections' offsets for the counts `c`.
 *
 * @example
 * ```ts
 * const layout = layoutOf({ documents: 1, terms: 1, pairs: 1, termBytes: 3, idBytes: 5, metaBytes: 2 });
 * layout.termBytes; // 64, right after the header
 * ```
 */
export function layoutOf(c: Counts): Layout {
  let at = SEGMENT_HEADER_BYTES;
  const next = (bytes: number) => {
    const start = at;
    at += pad(bytes);
    return start;
  };
  return {
    termBytes: next(c.termBytes),
    termStart: next(4 * (c.terms + 1)),
    df: next(4 * c.terms),
    postStart: next(4 * (c.terms + 1)),
    idBytes: next(c.idBytes),
    idStart: next(4 * (c.documents + 1)),
    idOrder: next(4 * c.documents),
    docStart: next(4 * (c.documents + 1)),
    metaStart: next(4 * (c.documents + 1)),
    norms: next(4 * c.documents),
    postings: next(8 * c.pairs),
    docTerms: next(8 * c.pairs),
    metas: next(c.metaBytes),
    get end() {
      return at;
    },
  };
}
