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

/** The largest member a reader accepts (512 MiB): each is held in memory, and an archive is untrusted input. */
export const MAX_MEMBER_BYTES = 512 * 1024 * 1024;

/** The two zero blocks that end an archive. */
export const TAR_END: Uint8Array = new Uint8Array(BLOCK * 2);

/** Why an archive could not be read; `message` names the member and what is wrong with it. */
export class ArchiveError extends Error {
  override name = "ArchiveError";
}

/** Reads exact byte counts from a stream. */
class ExactReader {
  #reader: ReadableStreamDefaultReader<Uint8Array>;
  #buffer = new Uint8Array(0);
  constructor(stream: ReadableStream<Uint8Array>) {
    this.#reader = stream.getReader();
  }
  /** `count` bytes, or fewer only at the end of the stream. */
  async read(count: number): Promise<Uint8Array> {
    const parts: Uint8Array[] = [this.#buffer];
    let have = this.#buffer.length;
    while (have < count) {
      const { done, value } = await this.#reader.read();
      if (done) break;
      parts.push(value);
      have += value.length;
    }
    const all = parts.length === 1 ? parts[0]! : concat(parts, have);
    this.#buffer = all.slice(Math.min(count, all.length));
    return all.subarray(0, Math.min(count, all.length));
  }
  cancel(): Promise<void> {
    return this.#reader.cancel().catch(() => {});
  }
}

function concat(parts: Uint8Array[], length: number): Uint8Array {
  const out = new Uint8Array(length);
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

function field(block: Uint8Array, offset: number, width: number): string {
  const bytes = block.subarray(offset, offset + width);
  const end = bytes.indexOf(0);
  return decoder.decode(end === -1 ? bytes : bytes.subarray(0, end));
}

function number(block: Uint8Array, offset: number, width: number, what: string): number {
  const text = field(block, offset, width).trim();
  if (!/^[0-7]*$/.test(text)) throw new ArchiveError(`bad tar header: ${what} ${JSON.stringify(text)} is not octal`);
  return text ? parseInt(text, 8) : 0;
}

/**
 * The entries of a tar stream, in order. Throws {@link ArchiveError} on a bad checksum, a member that is neither a
 * file nor a folder, or an archive that ends before its end marker (truncated).
 *
 * @example
 * ```ts
 * const file = await Deno.open("homed.tar.gz");
 * for await (const entry of readTar(file.readable.pipeThrough(new DecompressionStream("gzip")))) {
 *   console.log(entry.path);
 * }
 * ```
 */
export async function* readTar(stream: ReadableStream<Uint8Array>): AsyncGenerator<TarEntry> {
  const reader = new ExactReader(stream);
  let paxPath: string | undefined;
  try {
    while (true) {
      const block = await reader.read(BLOCK);
      if (block.length < BLOCK) throw new ArchiveError("the archive ends early (no end marker): it is truncated");
      if (block.every((byte) => byte === 0)) return;
      const stored = number(block, 148, 8, "checksum");
      let sum = 0;
      for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 32 : block[i]!;
      const name = field(block, 0, 100);
      if (sum !== stored) throw new ArchiveError(`bad tar header checksum at ${JSON.stringify(name)}`);
      const prefix = field(block, 345, 155);
      const size = number(block, 124, 12, "size");
      const type = field(block, 156, 1) || "0";
      if (size > MAX_MEMBER_BYTES) {
        throw new ArchiveError(
          `${JSON.stringify(name)} says it holds ${size} bytes; members above ${MAX_MEMBER_BYTES} bytes are refused`,
        );
      }
      const data = await reader.read(size);
      if (data.length < size) throw new ArchiveError(`the archive ends inside ${JSON.stringify(name)}: truncated`);
      await reader.read((BLOCK - (size % BLOCK)) % BLOCK);
      if (type === "x") {
        const match = /(?:^|\n)\d+ path=([^\n]*)\n/.exec(decoder.decode(data));
        paxPath = match?.[1];
        continue;
      }
      const path = paxPath ?? (prefix ? `${prefix}/${name}` : name);
      paxPath = undefined;
      if (type !== "0" && type !== "5") {
        throw new ArchiveError(`${JSON.stringify(path)} is not a file or folder (tar type ${JSON.stringify(type)})`);
      }
      yield {
        path: path.replace(/\/+$/, ""),
        type: type === "5" ? "dir" : "file",
        mode: number(block, 100, 8, "mode"),
        mtime: number(block, 136, 12, "mtime"),
        data: data.slice(),
      };
    }
  } finally {
    await reader.cancel();
  }
}
