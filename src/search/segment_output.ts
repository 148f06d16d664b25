/**
 * The file a segment is written through: a 256 KiB buffer, its CRC-32 kept as it goes (the header's checksum covers
 * everything after it), the sections padded to 4 bytes, and `pause()` awaited after each flush so writing a large
 * index never holds the event loop for long.
 *
 * @module
 */

import { crc32 } from "./crc32.ts";

/** Bytes written between two pauses (and read at a time from the old segment). */
export const SLICE_BYTES = 256 << 10;

/**
 * A file written through a buffer, its CRC-32 kept as it goes.
 *
 * @example
 * ```ts
 * const file = await Deno.open("/tmp/seg-1.bin.tmp", { write: true, create: true, truncate: true });
 * const out = new Output(file, () => Promise.resolve());
 * await out.typed(new Uint32Array([1, 2, 3]));
 * await out.flush();
 * out.crc; // the CRC-32 of the 12 bytes written
 * file.close();
 * ```
 */
export class Output {
  #file: Deno.FsFile;
  #buffer = new Uint8Array(SLICE_BYTES);
  #used = 0;
  #pause: () => Promise<void>;
  /** The CRC-32 of what was flushed so far (the header's checksum starts it). */
  crc = 0;
  /** Bytes flushed so far. */
  written = 0;

  constructor(file: Deno.FsFile, pause: () => Promise<void>) {
    this.#file = file;
    this.#pause = pause;
  }

  /** Appends `bytes`, flushing each time the buffer fills. */
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

  /** Appends a typed array's bytes (little-endian, as the platforms homed runs on store them). */
  async typed(array: Int32Array | Uint32Array | Float32Array): Promise<void> {
    await this.bytes(new Uint8Array(array.buffer, array.byteOffset, array.byteLength));
  }

  /** Zeros up to the next multiple of 4 bytes: every section starts aligned. */
  async padding(): Promise<void> {
    const extra = ((this.written + this.#used + 3) & ~3) - (this.written + this.#used);
    if (extra) await this.bytes(new Uint8Array(extra));
  }

  /** Writes the buffer out, adds it to the CRC, then pauses. */
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
