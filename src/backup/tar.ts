/**
 * A small POSIX tar (ustar, with pax headers for long names) writer and reader over web streams, so a backup is a
 * `.tar.gz` that `tar tzf` lists. Only regular files and folders: a backup holds nothing else, and a reader that meets
 * a link or device refuses it by name (an archive is untrusted input).
 *
 * @module
 */

const BLOCK = 512;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** One member of an archive. */
export interface TarEntry {
  /** Relative path with `/` separators. */
  path: string;
  /** `file` or `dir`. */
  type: "file" | "dir";
  /** Unix mode bits (permissions). */
  mode: number;
  /** Seconds since the epoch. */
  mtime: number;
  /** The bytes of a file (empty for a folder). */
  data: Uint8Array;
}

function octal(value: number, width: number): string {
  return value.toString(8).padStart(width - 1, "0") + "\0";
}

function header(name: string, type: string, size: number, mode: number, mtime: number): Uint8Array {
  const block = new Uint8Array(BLOCK);
  const put = (text: string, offset: number, width: number) => block.set(encoder.encode(text).slice(0, width), offset);
  put(name, 0, 100);
  put(octal(mode & 0o7777, 8), 100, 8);
  put(octal(0, 8), 108, 8);
  put(octal(0, 8), 116, 8);
  put(octal(size, 12), 124, 12);
  put(octal(Math.max(0, Math.floor(mtime)), 12), 136, 12);
  put(" ".repeat(8), 148, 8);
  put(type, 156, 1);
  put("ustar\0" + "00", 257, 8);
  let sum = 0;
  for (const byte of block) sum += byte;
  put(octal(sum, 7) + " ", 148, 8);
  return block;
}

function padding(size: number): Uint8Array {
  return new Uint8Array((BLOCK - (size % BLOCK)) % BLOCK);
}

/** A pax record `"<len> path=<value>\n"`, whose length counts itself. */
function paxRecord(key: string, value: string): Uint8Array {
  const body = encoder.encode(` ${key}=${value}\n`).length;
  // The length prefix counts its own digits: grow it until it is stable (at most once per added digit).
  let length = body + 1;
  while (String(length).length + body !== length) length = String(length).length + body;
  return encoder.encode(`${length} ${key}=${value}\n`);
}

/**
 * The blocks of one entry: a pax header first when the path does not fit ustar's 100 bytes.
 *
 * @example
 * ```ts
 * const data = new TextEncoder().encode('{"http": "qq:private:10001"}\n');
 * const blocks = tarBlocks({ path: "data/routes.json", type: "file", mode: 0o600, mtime: 0, data });
 * // [the 512-byte header, data, zeros up to the next 512-byte boundary]
 * ```
 */
export function tarBlocks(entry: TarEntry): Uint8Array[] {
  const name = entry.type === "dir" && !entry.path.endsWith("/") ? `${entry.path}/` : entry.path;
  const blocks: Uint8Array[] = [];
  if (encoder.encode(name).length > 100) {
    const record = paxRecord("path", name);
    blocks.push(header("PaxHeader", "x", record.length, 0o644, entry.mtime), record, padding(record.length));
  }
  const size = entry.type === "file" ? entry.data.length : 0;
  blocks.push(header(name.slice(0, 100), entry.type === "file" ? "0" : "5", size, entry.mode, entry.mtime));
  if (size) blocks.push(entry.data, padding(size));
  return blocks;
}

/** The largest member a reader accepts (512 MiB), as a backup holds no bigger file (it reads each one whole). */
export const MAX_MEMBER_BYTES = 512 * 1024 * 1024;

/** The largest pax header a reader accepts (64 KiB): it is read whole, and it only carries a path. */
export const MAX_PAX_BYTES = 64 * 1024;

/** How much a reader accepts after the end marker (1 MiB, all zeros): the padding other tar writers add. */
export const MAX_TRAILING_BYTES = 1024 * 1024;

/** The two zero blocks that end an archive. */
export const TAR_END: Uint8Array = new Uint8Array(BLOCK * 2);

/** Why an archive could not be read; `message` names the member and what is wrong with it. */
export class ArchiveError extends Error {
  override name = "ArchiveError";
}

/** One member of an archive as {@link readTarMembers} yields it: the header, and the bytes still to be read. */
export interface TarMember {
  /** Relative path with `/` separators, exactly as written (UTF-8). */
  path: string;
  /** `file` or `dir`. */
  type: "file" | "dir";
  /** Unix mode bits as written (a reader keeps only the permission bits). */
  mode: number;
  /** Seconds since the epoch. */
  mtime: number;
  /** The byte count the header declares (0 for a folder). */
  size: number;
  /**
   * The member's bytes, in chunks of at most 64 KiB as they arrive. Read them (or not) before asking for the next
   * member: what is left unread is skipped then. Ends early with {@link ArchiveError} when the archive does.
   */
  chunks(): AsyncGenerator<Uint8Array>;
}

/** The most a member's chunk holds: what is read from the stream at a time, never a whole member. */
const CHUNK = 64 * 1024;

/** Reads a stream in pieces of at most a given size, or exactly a given size. */
class ByteReader {
  #reader: ReadableStreamDefaultReader<Uint8Array>;
  #buffer: Uint8Array = new Uint8Array(0);
  constructor(stream: ReadableStream<Uint8Array>) {
    this.#reader = stream.getReader();
  }
  /** Between 1 and `max` bytes, or none at the end of the stream. */
  async some(max: number): Promise<Uint8Array> {
    while (this.#buffer.length === 0) {
      const { done, value } = await this.#reader.read();
      if (done) return this.#buffer;
      this.#buffer = value;
    }
    const out = this.#buffer.subarray(0, max);
    this.#buffer = this.#buffer.subarray(out.length);
    return out;
  }
  /** `count` bytes (a copy), or fewer only at the end of the stream. */
  async exact(count: number): Promise<Uint8Array> {
    const out = new Uint8Array(count);
    let have = 0;
    while (have < count) {
      const piece = await this.some(count - have);
      if (piece.length === 0) return out.subarray(0, have);
      out.set(piece, have);
      have += piece.length;
    }
    return out;
  }
  /** Skips `count` bytes; returns how many there were. */
  async skip(count: number): Promise<number> {
    let skipped = 0;
    while (skipped < count) {
      const piece = await this.some(Math.min(CHUNK, count - skipped));
      if (piece.length === 0) break;
      skipped += piece.length;
    }
    return skipped;
  }
  cancel(): Promise<void> {
    return this.#reader.cancel().catch(() => {});
  }
}

const strictDecoder = new TextDecoder("utf-8", { fatal: true });

function field(block: Uint8Array, offset: number, width: number): string {
  return decoder.decode(rawField(block, offset, width));
}

function rawField(block: Uint8Array, offset: number, width: number): Uint8Array {
  const bytes = block.subarray(offset, offset + width);
  const end = bytes.indexOf(0);
  return end === -1 ? bytes : bytes.subarray(0, end);
}

/** A member's name as written, refused when it is not UTF-8 (a name is never silently changed). */
function nameOf(bytes: Uint8Array): string {
  try {
    return strictDecoder.decode(bytes);
  } catch {
    throw new ArchiveError(`member name ${JSON.stringify(decoder.decode(bytes))} is not valid UTF-8`);
  }
}

function number(block: Uint8Array, offset: number, width: number, what: string): number {
  const text = field(block, offset, width).trim();
  if (!/^[0-7]*$/.test(text)) throw new ArchiveError(`bad tar header: ${what} ${JSON.stringify(text)} is not octal`);
  return text ? parseInt(text, 8) : 0;
}

/**
 * The `path` of a pax extended header: records are `"<length> <key>=<value>\n"`, the length counting the whole record,
 * so a value may hold any byte, a line break included.
 */
function paxPath(data: Uint8Array): string | undefined {
  let path: string | undefined;
  let at = 0;
  while (at < data.length) {
    const space = data.indexOf(0x20, at);
    const length = space === -1 ? NaN : Number(decoder.decode(data.subarray(at, space)));
    if (!Number.isInteger(length) || length <= space - at + 1 || at + length > data.length) {
      throw new ArchiveError(`bad pax header: a record at byte ${at} has no valid length`);
    }
    const record = data.subarray(space + 1, at + length);
    const equals = record.indexOf(0x3d);
    if (equals === -1 || record.at(-1) !== 0x0a) {
      throw new ArchiveError(`bad pax header: the record at byte ${at} is not "key=value" and a line break`);
    }
    const key = decoder.decode(record.subarray(0, equals));
    if (key === "path") path = nameOf(record.subarray(equals + 1, -1));
    // A size there would replace the header's, which this reader trusts (members stay under 512 MiB).
    if (key === "size") throw new ArchiveError("bad pax header: it sets a member's size, which homed does not read");
    at += length;
  }
  return path;
}

/**
 * The members of a tar stream, in order, each with its bytes as a stream ({@link TarMember.chunks}): nothing holds a
 * whole member. After the end marker the rest of the stream is read to its end (at most {@link MAX_TRAILING_BYTES}
 * of zeros), so a compressed stream's own end check (gzip's trailer) runs before the last member is confirmed.
 * Throws {@link ArchiveError} on a bad checksum, a member that is neither a file nor a folder, a name that is not
 * UTF-8, or an archive that ends before its end marker (truncated); errors of the stream itself pass through.
 *
 * @example
 * ```ts
 * const file = await Deno.open("homed.tar.gz");
 * for await (const member of readTarMembers(file.readable.pipeThrough(new DecompressionStream("gzip")))) {
 *   let bytes = 0;
 *   for await (const chunk of member.chunks()) bytes += chunk.length;
 *   console.log(member.path, bytes);
 * }
 * ```
 */
export async function* readTarMembers(stream: ReadableStream<Uint8Array>): AsyncGenerator<TarMember> {
  const reader = new ByteReader(stream);
  let pax: string | undefined;
  try {
    while (true) {
      const block = await reader.exact(BLOCK);
      if (block.length < BLOCK) throw new ArchiveError("the archive ends early (no end marker): it is truncated");
      if (block.every((byte) => byte === 0)) {
        // The end marker: the rest must be padding, and it is read to the end so the stream can check itself.
        let trailing = 0;
        while (true) {
          const piece = await reader.some(CHUNK);
          if (piece.length === 0) return;
          trailing += piece.length;
          if (trailing > MAX_TRAILING_BYTES || piece.some((byte) => byte !== 0)) {
            throw new ArchiveError("the archive goes on after its end marker");
          }
        }
      }
      const stored = number(block, 148, 8, "checksum");
      let sum = 0;
      for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 32 : block[i]!;
      const label = field(block, 0, 100);
      if (sum !== stored) throw new ArchiveError(`bad tar header checksum at ${JSON.stringify(label)}`);
      const size = number(block, 124, 12, "size");
      const type = field(block, 156, 1) || "0";
      if (size > MAX_MEMBER_BYTES) {
        throw new ArchiveError(
          `${JSON.stringify(label)} says it holds ${size} bytes; members above ${MAX_MEMBER_BYTES} bytes are refused`,
        );
      }
      const padding = (BLOCK - (size % BLOCK)) % BLOCK;
      if (type === "x") {
        if (size > MAX_PAX_BYTES) {
          throw new ArchiveError(`a pax header of ${size} bytes; at most ${MAX_PAX_BYTES} bytes are read`);
        }
        const data = await reader.exact(size);
        if (data.length < size) throw new ArchiveError("the archive ends inside a pax header: truncated");
        await reader.skip(padding);
        pax = paxPath(data);
        continue;
      }
      // ustar splits a long name into prefix and name; other formats keep other fields there.
      const ustar = field(block, 257, 6) === "ustar";
      const prefix = ustar ? rawField(block, 345, 155) : new Uint8Array();
      // The header's name only without a pax path: a writer cuts a long one at 100 bytes, perhaps inside a character.
      const name = () => nameOf(rawField(block, 0, 100));
      const path = pax ?? (prefix.length ? `${nameOf(prefix)}/${name()}` : name());
      pax = undefined;
      if (type !== "0" && type !== "5") {
        throw new ArchiveError(`${JSON.stringify(path)} is not a file or folder (tar type ${JSON.stringify(type)})`);
      }
      if (type === "5" && size > 0) {
        throw new ArchiveError(`folder ${JSON.stringify(path)} says it holds ${size} bytes`);
      }
      let left = size;
      const chunks = async function* (): AsyncGenerator<Uint8Array> {
        while (left > 0) {
          const piece = await reader.some(Math.min(CHUNK, left));
          if (piece.length === 0) throw new ArchiveError(`the archive ends inside ${JSON.stringify(path)}: truncated`);
          left -= piece.length;
          yield piece;
        }
      };
      yield {
        path: path.replace(/\/+$/, ""),
        type: type === "5" ? "dir" : "file",
        mode: number(block, 100, 8, "mode"),
        mtime: number(block, 136, 12, "mtime"),
        size,
        chunks,
      };
      if ((await reader.skip(left)) < left) {
        throw new ArchiveError(`the archive ends inside ${JSON.stringify(path)}: truncated`);
      }
      left = 0;
      await reader.skip(padding);
    }
  } finally {
    await reader.cancel();
  }
}

/**
 * The entries of a tar stream, in order, each read whole into {@link TarEntry.data} (for small archives: the release
 * archive, tests); see {@link readTarMembers} for what it checks and for reading members without holding them.
 *
 * @example
 * ```ts
 * const file = await Deno.open("homed.tar.gz");
 * for await (const entry of readTar(file.readable.pipeThrough(new DecompressionStream("gzip")))) {
 *   console.log(entry.path, entry.data.length);
 * }
 * ```
 */
export async function* readTar(stream: ReadableStream<Uint8Array>): AsyncGenerator<TarEntry> {
  for await (const member of readTarMembers(stream)) {
    yield {
      path: member.path,
      type: member.type,
      mode: member.mode,
      mtime: member.mtime,
      data: await memberBytes(member),
    };
  }
}

/**
 * A member's bytes read whole (its declared size): for a member known to be small, or one a caller capped first.
 *
 * @example
 * ```ts
 * const file = await Deno.open("homed.tar.gz");
 * for await (const member of readTarMembers(file.readable.pipeThrough(new DecompressionStream("gzip")))) {
 *   if (member.path === "homed-backup.json") console.log(new TextDecoder().decode(await memberBytes(member)));
 * }
 * ```
 */
export async function memberBytes(member: TarMember): Promise<Uint8Array> {
  const data = new Uint8Array(member.size);
  let at = 0;
  for await (const chunk of member.chunks()) {
    data.set(chunk, at);
    at += chunk.length;
  }
  return data;
}
