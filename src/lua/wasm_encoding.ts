/**
 * The small pieces of the WebAssembly binary format the glue patch writes with: the opcodes it emits or looks for,
 * LEB128 numbers, names, and byte lists joined. The patch edits a binary by hand (no toolchain at run time), so these
 * are spelled out here once.
 *
 * @module
 */

/** The value type `i32`. */
export const I32 = 0x7f;

/** The opcodes the patch emits or looks for. */
export const OP = {
  loop: 0x03,
  if: 0x04,
  end: 0x0b,
  call: 0x10,
  callIndirect: 0x11,
  localGet: 0x20,
  localSet: 0x21,
  globalGet: 0x23,
  globalSet: 0x24,
  i32Load: 0x28,
  i32Const: 0x41,
  i32GtS: 0x4a,
  i32LeS: 0x4c,
  i32Sub: 0x6b,
} as const;

/**
 * A LEB128-encoded unsigned integer.
 *
 * @example
 * ```ts
 * uleb(300); // [0xac, 0x02]
 * ```
 */
export function uleb(value: number): number[] {
  const out: number[] = [];
  do {
    let byte = value & 0x7f;
    value >>>= 7;
    if (value !== 0) byte |= 0x80;
    out.push(byte);
  } while (value !== 0);
  return out;
}

/**
 * A LEB128-encoded signed 32-bit integer.
 *
 * @example
 * ```ts
 * sleb(-1); // [0x7f]
 * ```
 */
export function sleb(value: number): number[] {
  const out: number[] = [];
  for (;;) {
    const byte = value & 0x7f;
    value >>= 7;
    if ((value === 0 && !(byte & 0x40)) || (value === -1 && byte & 0x40)) {
      out.push(byte);
      return out;
    }
    out.push(byte | 0x80);
  }
}

/**
 * A name as the binary format writes it: its UTF-8 length, then its bytes.
 *
 * @example
 * ```ts
 * name("ab"); // [2, 0x61, 0x62]
 * ```
 */
export function name(text: string): number[] {
  const bytes = new TextEncoder().encode(text);
  return [...uleb(bytes.length), ...bytes];
}

/**
 * Where `needle` starts in `haystack`.
 *
 * @example
 * ```ts
 * occurrences(new Uint8Array([1, 2, 1, 2]), [1, 2]); // [0, 2]
 * ```
 */
export function occurrences(haystack: Uint8Array, needle: ArrayLike<number>): number[] {
  const found: number[] = [];
  const first = needle[0]!;
  outer: for (let at = haystack.indexOf(first); at >= 0; at = haystack.indexOf(first, at + 1)) {
    for (let k = 1; k < needle.length; k++) if (haystack[at + k] !== needle[k]) continue outer;
    found.push(at);
  }
  return found;
}

/**
 * Appends every byte of `parts` to `out`.
 *
 * @example
 * ```ts
 * const out = [1];
 * append(out, [2], new Uint8Array([3]));
 * out; // [1, 2, 3]
 * ```
 */
export function append(out: number[], ...parts: ReadonlyArray<ArrayLike<number>>): void {
  for (const part of parts) for (let i = 0; i < part.length; i++) out.push(part[i]!);
}

/**
 * The parts one after another, in one new array.
 *
 * @example
 * ```ts
 * concat([new Uint8Array([1]), new Uint8Array([2, 3])]); // Uint8Array [1, 2, 3]
 * ```
 */
export function concat(parts: readonly Uint8Array[]): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}
