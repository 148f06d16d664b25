/**
 * Reading a WebAssembly binary as the glue patch needs it: a cursor over bytes with LEB128 numbers, and a walk over a
 * function body's instructions that knows every instruction's immediates well enough to step over them (the patch
 * looks at calls, constants and loops, and must not mistake an immediate for an opcode). An instruction it does not
 * know is a {@link GluePatchError}: the binary is not the build the patch was written for.
 *
 * @module
 */

import { GluePatchError } from "./glue_patch_error.ts";
import { OP } from "./wasm_encoding.ts";

/**
 * A cursor over `bytes` from `at`.
 *
 * @example
 * ```ts
 * const r = new Reader(new Uint8Array([0xac, 0x02, 0x7f]));
 * r.u32(); // 300
 * r.s32(); // -1
 * ```
 */
export class Reader {
  constructor(readonly bytes: Uint8Array, public at = 0) {}

  /** The next byte. */
  byte(): number {
    if (this.at >= this.bytes.length) throw new GluePatchError("the binary ends early");
    return this.bytes[this.at++]!;
  }

  /** The next unsigned LEB128 number of at most 32 bits. */
  u32(): number {
    return this.#leb128(false);
  }

  /** The next signed LEB128 number of at most 32 bits. */
  s32(): number {
    return this.#leb128(true);
  }

  /** A LEB128 number of at most 32 bits, sign-extended when `signed`. */
  #leb128(signed: boolean): number {
    let result = 0;
    let shift = 0;
    let byte: number;
    do {
      byte = this.byte();
      result |= (byte & 0x7f) << shift;
      shift += 7;
    } while (byte & 0x80);
    if (!signed) return result >>> 0;
    if (shift < 32 && byte & 0x40) result |= -1 << shift;
    return result | 0;
  }

  /** Skips a LEB128 number of any width. */
  leb(): void {
    while (this.byte() & 0x80) { /* continuation */ }
  }

  /** The next `length` bytes (a view). */
  bytesOf(length: number): Uint8Array {
    const slice = this.bytes.subarray(this.at, this.at + length);
    this.at += length;
    return slice;
  }
}

/**
 * Calls `visit` for each instruction of `code` (from `start`): its opcode, where it ends, and its immediate (a call's
 * function, a constant's value, a local's or global's index; -1 for others).
 *
 * @example
 * ```ts
 * let loops = 0;
 * instructions(new Uint8Array([0x03, 0x40, 0x0b, 0x0b]), 0, (op) => {
 *   if (op === 0x03) loops++;
 * });
 * loops; // 1
 * ```
 */
export function instructions(
  code: Uint8Array,
  start: number,
  visit: (op: number, next: number, immediate: number) => void,
): void {
  const r = new Reader(code, start);
  while (r.at < code.length) {
    const op = r.byte();
    let immediate = -1;
    if (op === 0x02 || op === 0x03 || op === 0x04) {
      const type = code[r.at]!;
      if (type === 0x40 || (type >= 0x7b && type <= 0x7f) || type === 0x70 || type === 0x6f) r.at++;
      else r.leb();
    } else if (op === 0x0c || op === 0x0d || op === 0x10 || op === 0x12 || (op >= 0x20 && op <= 0x26) || op === 0xd2) {
      immediate = r.u32();
    } else if (op === 0x0e) {
      const count = r.u32();
      for (let i = 0; i <= count; i++) r.u32();
    } else if (op === 0x11 || op === 0x13) {
      immediate = r.u32();
      r.u32();
    } else if (op === 0x1c) {
      const count = r.u32();
      for (let i = 0; i < count; i++) r.byte();
    } else if (op >= 0x28 && op <= 0x3e) {
      const align = r.u32();
      if (align & 0x40) r.u32();
      r.leb();
    } else if (op === 0x3f || op === 0x40) r.u32();
    else if (op === OP.i32Const) immediate = r.s32();
    else if (op === 0x42) r.leb();
    else if (op === 0x43) r.at += 4;
    else if (op === 0x44) r.at += 8;
    else if (op === 0xd0) r.leb();
    else if (op === 0xfc) {
      const sub = r.u32();
      if (sub === 8) {
        r.u32();
        r.u32();
      } else if (sub === 9 || sub === 11 || (sub >= 13 && sub <= 17)) r.u32();
      else if (sub === 10 || sub === 12 || sub === 14) {
        r.u32();
        r.u32();
      } else if (sub > 7) throw new GluePatchError(`unknown instruction 0xfc ${sub}`);
    } else if (
      !(op <= 0x01 || op === 0x05 || op === OP.end || op === 0x0f || op === 0x1a || op === 0x1b || op === 0xd1 ||
        (op >= 0x45 && op <= 0xc4))
    ) {
      throw new GluePatchError(`unknown instruction 0x${op.toString(16)}`);
    }
    visit(op, r.at, immediate);
  }
}
