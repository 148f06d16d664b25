/**
 * Framed records on disk: `[u32 length][u32 crc32][payload]`, little-endian. A record is written with one
 * `write` call, so it is acknowledged only once it is whole; reading stops at the first torn or corrupt record and
 * says where.
 *
 * @module
 */

import { crc32 } from "./crc32.ts";

const HEADER = 8;
/** Largest payload accepted; a length field above it means corruption, not a real record. */
export const MAX_RECORD_BYTES = 64 * 1024 * 1024;

/**
 * Frames one JSON payload.
 *
 * @example
 * ```ts
 * const file = await Deno.open("records.log", { create: true, append: true });
 * file.writeSync(frame({ op: "del", id: "a" }));
 * file.close();
 * ```
 */
export function frame(payload: unknown): Uint8Array {
  const body = new TextEncoder().encode(JSON.stringify(payload));
  const out = new Uint8Array(HEADER + body.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, body.length, true);
  view.setUint32(4, crc32(body), true);
  out.set(body, HEADER);
  return out;
}

/**
 * Frames several payloads into one buffer, for a single write.
 *
 * @example
 * ```ts
 * const file = await Deno.open("records.log", { create: true, append: true });
 * file.writeSync(frameAll([{ op: "del", id: "a" }, { op: "del", id: "b" }]));
 * file.close();
 * ```
 */
export function frameAll(payloads: readonly unknown[]): Uint8Array {
  const frames = payloads.map(frame);
  const out = new Uint8Array(frames.reduce((sum, f) => sum + f.length, 0));
  let offset = 0;
  for (const f of frames) {
    out.set(f, offset);
    offset += f.length;
  }
  return out;
}

/** What reading a record file found. */
export interface ReadResult {
  records: unknown[];
  /** Bytes of whole, valid records from the start. */
  validBytes: number;
  /** Total bytes in the file. */
  totalBytes: number;
  /** Why reading stopped early, if it did: `torn` (a partial last record) or `corrupt` (bad data before the end). */
  problem?: { kind: "torn" | "corrupt"; offset: number; detail: string };
}

/**
 * Reads every valid record of `bytes`.
 *
 * @example
 * ```ts
 * const { records, problem } = readRecords(await Deno.readFile("records.log"));
 * // records: the payloads, in order; problem: undefined, or where a torn or corrupt record starts
 * ```
 */
export function readRecords(bytes: Uint8Array): ReadResult {
  const records: unknown[] = [];
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const decoder = new TextDecoder("utf-8", { fatal: true });
  let offset = 0;
  while (offset < bytes.length) {
    const fail = (kind: "torn" | "corrupt", detail: string): ReadResult => ({
      records,
      validBytes: offset,
      totalBytes: bytes.length,
      problem: { kind, offset, detail },
    });
    if (bytes.length - offset < HEADER) return fail("torn", "partial record header at the end");
    const length = view.getUint32(offset, true);
    const checksum = view.getUint32(offset + 4, true);
    if (length > MAX_RECORD_BYTES) return fail("corrupt", `record length ${length} is impossible`);
    if (offset + HEADER + length > bytes.length) return fail("torn", "partial record at the end");
    const body = bytes.subarray(offset + HEADER, offset + HEADER + length);
    if (crc32(body) !== checksum) {
      const last = offset + HEADER + length === bytes.length;
      return fail(last ? "torn" : "corrupt", "checksum mismatch");
    }
    try {
      records.push(JSON.parse(decoder.decode(body)));
    } catch {
      return fail("corrupt", "payload is not JSON");
    }
    offset += HEADER + length;
  }
  return { records, validBytes: offset, totalBytes: bytes.length };
}
