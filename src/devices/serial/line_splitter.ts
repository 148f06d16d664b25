/**
 * Cutting a serial port's byte stream into lines: split on the port's delimiter (one to eight characters, which may
 * fall across two reads), a line longer than its limit cut there and marked while the rest up to the next delimiter is
 * dropped — so a peer that never sends the delimiter costs at most the limit in memory — and each line decoded as
 * UTF-8 with invalid bytes replaced and counted. A serial peer is a microcontroller or a console: nothing it sends
 * may crash homed or grow its memory.
 *
 * @module
 */

/** One line out of {@link LineSplitter.push}. */
export interface SplitLine {
  /** The line's text, without its delimiter (and without a trailing `\r` when the delimiter is `\n`). */
  text: string;
  /** The line was longer than the limit: `text` is its first bytes (up to a character boundary), the rest dropped. */
  cut: boolean;
  /** The line held bytes that are not UTF-8; each bad sequence became U+FFFD. */
  invalid: boolean;
}

/** Counters of a {@link LineSplitter}. */
export interface SplitCounts {
  /** Lines cut at the limit. */
  cut: number;
  /** Lines that held invalid UTF-8. */
  invalid: number;
  /** Bytes dropped after a cut, up to the next delimiter. */
  dropped: number;
}

const strict = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const lenient = new TextDecoder("utf-8", { ignoreBOM: true });

/** Splits a byte stream on a delimiter into bounded, decoded lines. */
export class LineSplitter {
  readonly #delimiter: Uint8Array;
  /** KMP failure table of the delimiter, so a multi-byte delimiter is found in one pass over each byte. */
  readonly #fail: Int32Array;
  readonly #max: number;
  /** A trailing `\r` is dropped when the delimiter is `\n`: serial consoles and Arduino `println` send CRLF. */
  readonly #stripCr: boolean;
  #buffer: Uint8Array;
  /** Bytes of the current line kept in the buffer. */
  #stored = 0;
  /** Bytes of the current line seen (the multi-byte path: the delimiter bytes matched so far included). */
  #seen = 0;
  /** Delimiter bytes matched at the end of what was seen. */
  #matched = 0;
  /** After a cut, bytes are dropped until the next delimiter. */
  #dropping = false;
  readonly counts: SplitCounts = { cut: 0, invalid: 0, dropped: 0 };

  /**
   * @example
   * ```ts
   * const splitter = new LineSplitter({ delimiter: "\n", maxLineBytes: 4_096 });
   * splitter.push(new TextEncoder().encode("temp=21.5\nhum")); // [{ text: "temp=21.5", cut: false, invalid: false }]
   * splitter.push(new TextEncoder().encode("=40\n")); // [{ text: "hum=40", cut: false, invalid: false }]
   * ```
   */
  constructor(options: { delimiter: string; maxLineBytes: number }) {
    this.#delimiter = new TextEncoder().encode(options.delimiter);
    if (this.#delimiter.length === 0) throw new RangeError("The line delimiter is empty: give one to eight characters");
    if (!Number.isInteger(options.maxLineBytes) || options.maxLineBytes < 1) {
      throw new RangeError(`The line limit must be a positive whole number of bytes, got ${options.maxLineBytes}`);
    }
    this.#max = options.maxLineBytes;
    this.#stripCr = options.delimiter === "\n";
    this.#fail = failureTable(this.#delimiter);
    // Grown on demand up to the limit (plus a delimiter's worth), so a generous limit costs nothing until used.
    this.#buffer = new Uint8Array(Math.min(this.#capacity, 4_096));
  }

  /** Most bytes held for one line: the limit, one byte to look past it, and a delimiter matched across the cut. */
  get #capacity(): number {
    return this.#max + this.#delimiter.length;
  }

  /**
   * Takes the next bytes read and returns the lines they completed, oldest first; empty lines (and lines of only
   * spaces) are left out.
   *
   * @example
   * ```ts
   * const splitter = new LineSplitter({ delimiter: ";", maxLineBytes: 4 });
   * splitter.push(new TextEncoder().encode("ok;toolong;")); // [{ text: "ok", … }, { text: "tool", cut: true, … }]
   * ```
   */
  push(chunk: Uint8Array): SplitLine[] {
    const lines: SplitLine[] = [];
    if (this.#delimiter.length === 1) this.#pushSingle(chunk, lines);
    else this.#pushMulti(chunk, lines);
    return lines;
  }

  /** Forgets a partial line (the port closed mid-line: its start was read, its end never will be). */
  reset(): void {
    this.#stored = 0;
    this.#seen = 0;
    this.#matched = 0;
    this.#dropping = false;
  }

  /** The common case, one delimiter byte: found with `indexOf`, copied a run at a time. */
  #pushSingle(chunk: Uint8Array, lines: SplitLine[]): void {
    const delimiter = this.#delimiter[0]!;
    let at = 0;
    while (at < chunk.length) {
      const found = chunk.indexOf(delimiter, at);
      const end = found === -1 ? chunk.length : found;
      this.#append(chunk, at, end, lines);
      if (found === -1) return;
      if (this.#dropping) this.#dropping = false;
      else this.#finish(this.#stored, lines);
      this.#stored = 0;
      at = found + 1;
    }
  }

  /** Adds `chunk[from, to)` to the current line; past the limit, cuts the line there and drops the rest. */
  #append(chunk: Uint8Array, from: number, to: number, lines: SplitLine[]): void {
    if (this.#dropping) {
      this.counts.dropped += to - from;
      return;
    }
    // One byte past the limit is kept, so the cut can tell whether it falls inside a character.
    const take = Math.min(to - from, this.#max + 1 - this.#stored);
    this.#ensure(this.#stored + take);
    this.#buffer.set(chunk.subarray(from, from + take), this.#stored);
    this.#stored += take;
    if (this.#stored > this.#max) {
      this.#cut(lines);
      this.counts.dropped += to - from - take;
    }
  }

  /** Any delimiter: a KMP match over each byte, so a delimiter split across two reads is still found. */
  #pushMulti(chunk: Uint8Array, lines: SplitLine[]): void {
    const delimiter = this.#delimiter;
    const length = delimiter.length;
    let matched = this.#matched;
    for (const byte of chunk) {
      while (matched > 0 && byte !== delimiter[matched]) matched = this.#fail[matched - 1]!;
      if (byte === delimiter[matched]) matched++;
      if (this.#dropping) this.counts.dropped++;
      else {
        // Never more than the capacity: a line is cut once its content (what is not a partial match) passes the limit.
        this.#ensure(this.#stored + 1);
        this.#buffer[this.#stored++] = byte;
        this.#seen++;
      }
      if (matched === length) {
        if (this.#dropping) {
          this.#dropping = false;
          this.counts.dropped -= length;
        } else this.#finish(this.#seen - length, lines);
        this.#stored = 0;
        this.#seen = 0;
        matched = 0;
      } else if (!this.#dropping && this.#seen - matched > this.#max) {
        // The bytes of a partial match are dropped with the rest; the match itself goes on, to end the dropping.
        this.#cut(lines);
        this.#seen = 0;
      }
    }
    this.#matched = matched;
  }

  /** Ends the current line as cut at the limit, backed off to the start of a character the limit splits. */
  #cut(lines: SplitLine[]): void {
    let end = this.#max;
    let back = end;
    while (back > 0 && end - back < 3 && isContinuation(this.#buffer[back]!)) back--;
    // Only a lead byte starts the character the limit splits; anything else is not UTF-8 and is cut where it falls.
    if (back < end && this.#buffer[back]! >= 0xc0) end = back;
    this.counts.dropped += this.#stored - end;
    this.counts.cut++;
    this.#emit(this.#buffer.subarray(0, end), true, lines);
    this.#stored = 0;
    this.#dropping = true;
  }

  #finish(length: number, lines: SplitLine[]): void {
    let end = length;
    if (this.#stripCr && end > 0 && this.#buffer[end - 1] === 0x0d) end--;
    this.#emit(this.#buffer.subarray(0, end), false, lines);
  }

  #emit(bytes: Uint8Array, cut: boolean, lines: SplitLine[]): void {
    let text: string;
    let invalid = false;
    try {
      text = strict.decode(bytes);
    } catch {
      invalid = true;
      text = lenient.decode(bytes);
    }
    if (text.trim() === "") return;
    if (invalid) this.counts.invalid++;
    lines.push({ text, cut, invalid });
  }

  #ensure(size: number): void {
    if (size <= this.#buffer.length) return;
    const grown = new Uint8Array(Math.min(this.#capacity, Math.max(size, this.#buffer.length * 2)));
    grown.set(this.#buffer.subarray(0, this.#stored));
    this.#buffer = grown;
  }
}

function isContinuation(byte: number): boolean {
  return (byte & 0xc0) === 0x80;
}

/** `fail[i]`: the length of the longest proper prefix of `pattern[0..i]` that is also its suffix. */
function failureTable(pattern: Uint8Array): Int32Array {
  const fail = new Int32Array(pattern.length);
  let k = 0;
  for (let i = 1; i < pattern.length; i++) {
    while (k > 0 && pattern[i] !== pattern[k]) k = fail[k - 1]!;
    if (pattern[i] === pattern[k]) k++;
    fail[i] = k;
  }
  return fail;
}
