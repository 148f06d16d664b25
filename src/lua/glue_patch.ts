/**
 * Step checks inside Lua's long C loops. Lua's count hook runs between VM instructions, so one C call a script makes
 * — `string.find(string.rep("a", 480), ".-.-.-b")` backtracking for seconds, a plain `find` of a long needle,
 * `string.rep("", 1e12)`, `table.move({}, 1, 1e12, 1, {})` — would run past `lua.time_limit` untouched. This rewrites
 * wasmoon's `glue.wasm` (as it is instantiated, in memory; the file is not changed) so that those loops count their
 * steps in a global and, when the count runs out, call a host function that may raise a Lua error in the running
 * thread — as the matcher's own "pattern too complex" does.
 *
 * What is patched, found by what it does rather than by name (the binary has no names):
 *
 * - `match` (lstrlib.c: the recursive pattern matcher, with `max_expand`, `min_expand`, `matchbalance` and the
 *   character classes inlined into it): the one function that refers to the text "pattern too complex". A check at
 *   its entry and at the head of every loop; the thread is `ms->L` (offset 12 of its first argument, a `MatchState`).
 * - Its callers (`str_find_aux` with the plain search `lmemfind`, `gmatch_aux`, `str_gsub`), `str_rep` (refers to
 *   "resulting string too large") and `tmove` (refers to "too many elements to move"): a check at the head of every
 *   loop; the thread is their first argument, saved on entry (the compiled code reuses that local later).
 * - `memcmp` (the one callee of `match` taking three i32 values that calls nothing and loops: back references and the
 *   plain search compare with it): every loop iteration only counts a step, never below zero, so a long comparison
 *   brings the next check forward.
 *
 * Two mutable i32 globals are added and exported: {@link STEPS_GLOBAL} (steps left before the next call) and
 * {@link HOOK_GLOBAL} (the function table slot of the host function, `(state) → steps`, set by the host). A check is
 * `steps -= 1; if (steps <= 0) steps = hook(L)`; the hook returns the next budget, or raises a Lua error and does not
 * return. Until the host sets both globals the count starts at 2³¹ − 1, so nothing calls slot 0.
 *
 * @module
 */

/** The exported global holding the steps left before the next host call. */
export const STEPS_GLOBAL = "homed_steps";
/** The exported global holding the function table slot of the host's `(state: i32) → i32` step hook. */
export const HOOK_GLOBAL = "homed_step_hook";

/** glue.wasm is not the binary this patch knows (another wasmoon): the Lua VM cannot bound its C loops. */
export class GluePatchError extends Error {
  constructor(detail: string) {
    super(`wasmoon's glue.wasm cannot be given step checks: ${detail}`);
    this.name = "GluePatchError";
  }
}

const I32 = 0x7f;
const OP = {
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

/** A LEB128-encoded unsigned integer. */
function uleb(value: number): number[] {
  const out: number[] = [];
  do {
    let byte = value & 0x7f;
    value >>>= 7;
    if (value !== 0) byte |= 0x80;
    out.push(byte);
  } while (value !== 0);
  return out;
}

/** A LEB128-encoded signed 32-bit integer. */
function sleb(value: number): number[] {
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

/** A name as the binary format writes it. */
function name(text: string): number[] {
  const bytes = new TextEncoder().encode(text);
  return [...uleb(bytes.length), ...bytes];
}

class Reader {
  constructor(readonly bytes: Uint8Array, public at = 0) {}

  byte(): number {
    if (this.at >= this.bytes.length) throw new GluePatchError("the binary ends early");
    return this.bytes[this.at++]!;
  }

  u32(): number {
    return this.#leb128(false);
  }

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

  bytesOf(length: number): Uint8Array {
    const slice = this.bytes.subarray(this.at, this.at + length);
    this.at += length;
    return slice;
  }
}

interface FuncType {
  params: number[];
  results: number[];
}

interface Body {
  /** Absolute function index. */
  index: number;
  /** Where the body (its size first) starts and ends in the code section. */
  start: number;
  end: number;
  type: FuncType;
  /** The body without its size: local declarations, then code. */
  bytes: Uint8Array;
  /** Where the code starts in `bytes` (after the local declarations). */
  code: number;
  /** Locals declared, parameters not counted. */
  locals: number;
}

/** Calls `visit` for each instruction of `code` (from `start`): its opcode, where it ends, an immediate. */
function instructions(
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

/**
 * `wasm` with step checks in Lua's long C loops (see the module documentation), or `undefined` when `wasm` is not
 * wasmoon's glue (it does not export `lua_resume`). Throws a {@link GluePatchError} when it is, but not the build
 * this knows.
 *
 * @example
 * ```ts
 * import { luaWasmPath } from "./wasm_path.ts";
 *
 * const patched = patchGlue(await Deno.readFile(luaWasmPath()))!;
 * const module = await WebAssembly.compile(patched);
 * WebAssembly.Module.exports(module).some((entry) => entry.name === STEPS_GLOBAL); // true
 * ```
 */
export function patchGlue(wasm: Uint8Array): Uint8Array<ArrayBuffer> | undefined {
  const head = [0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00];
  if (wasm.length < 8 || head.some((byte, i) => wasm[i] !== byte)) return undefined;
  const sections: Array<{ id: number; body: Uint8Array }> = [];
  for (const r = new Reader(wasm, 8); r.at < wasm.length;) {
    const id = r.byte();
    sections.push({ id, body: r.bytesOf(r.u32()) });
  }
  const section = (id: number) => sections.find((s) => s.id === id)?.body ?? new Uint8Array([0]);

  const types: FuncType[] = [];
  for (let r = new Reader(section(1)), n = r.u32(), i = 0; i < n; i++) {
    if (r.byte() !== 0x60) throw new GluePatchError("a type that is not a function type");
    const params = [...r.bytesOf(r.u32())];
    const results = [...r.bytesOf(r.u32())];
    types.push({ params, results });
  }
  let importedFunctions = 0;
  let importedGlobals = 0;
  for (let r = new Reader(section(2)), n = r.u32(), i = 0; i < n; i++) {
    r.bytesOf(r.u32());
    r.bytesOf(r.u32());
    const kind = r.byte();
    if (kind === 0) {
      r.u32();
      importedFunctions++;
    } else if (kind === 1 || kind === 2) {
      if (kind === 1) r.byte();
      const flags = r.byte();
      r.leb();
      if (flags & 1) r.leb();
    } else if (kind === 3) {
      r.byte();
      r.byte();
      importedGlobals++;
    } else {
      r.byte();
      r.u32();
    }
  }
  const exported = new Set<string>();
  for (let r = new Reader(section(7)), n = r.u32(), i = 0; i < n; i++) {
    exported.add(new TextDecoder().decode(r.bytesOf(r.u32())));
    r.byte();
    r.u32();
  }
  if (!exported.has("lua_resume")) return undefined;
  if (!sections.some((s) => s.id === 6)) throw new GluePatchError("the binary has no global section");

  const functionTypes: number[] = [];
  for (let r = new Reader(section(3)), n = r.u32(), i = 0; i < n; i++) functionTypes.push(r.u32());
  const bodies: Body[] = [];
  const code = section(10);
  for (let r = new Reader(code), n = r.u32(), i = 0; i < n; i++) {
    const start = r.at;
    const bytes = r.bytesOf(r.u32());
    const body = new Reader(bytes);
    let locals = 0;
    for (let groups = body.u32(), g = 0; g < groups; g++) {
      locals += body.u32();
      body.byte();
    }
    const type = types[functionTypes[i]!];
    if (!type) throw new GluePatchError(`function ${i} has no type`);
    bodies.push({ index: importedFunctions + i, start, end: r.at, type, bytes, code: body.at, locals });
  }
  const bodyOf = (index: number) => bodies[index - importedFunctions];

  // The addresses of C string constants, from the active data segments.
  const addressesOf = (text: string): number[] => {
    const needle = new TextEncoder().encode(`${text}\0`);
    const found: number[] = [];
    for (let r = new Reader(section(11)), n = r.u32(), i = 0; i < n; i++) {
      const flags = r.u32();
      let offset: number | undefined;
      if (flags === 0 || flags === 2) {
        if (flags === 2) r.u32();
        const op = r.byte();
        if (op === OP.i32Const) offset = r.s32();
        else r.leb();
        if (r.byte() !== OP.end) throw new GluePatchError("a data segment offset that is not a constant");
      }
      const data = r.bytesOf(r.u32());
      if (offset === undefined) continue;
      for (const at of occurrences(data, needle)) found.push(offset + at);
    }
    return found;
  };
  const sameType = (type: FuncType, params: number[], results: number[]) =>
    type.params.length === params.length && type.params.every((p, i) => p === params[i]) &&
    type.results.length === results.length && type.results.every((p, i) => p === results[i]);
  const scan = (body: Body) => {
    const calls = new Set<number>();
    const constants = new Set<number>();
    let loops = 0;
    instructions(body.bytes, body.code, (op, _next, immediate) => {
      if (op === OP.call) calls.add(immediate);
      else if (op === OP.i32Const) constants.add(immediate);
      else if (op === OP.loop) loops++;
    });
    return { calls, constants, loops };
  };
  const scanned = new Map<number, ReturnType<typeof scan>>();
  const scanOf = (body: Body) => scanned.get(body.index) ?? scanned.set(body.index, scan(body)).get(body.index)!;
  /** Bodies holding `bytes` somewhere (a cheap filter before decoding them). */
  const holding = (bytes: number[]): Body[] => {
    const found = new Set<Body>();
    for (const at of occurrences(code, bytes)) {
      let low = 0;
      let high = bodies.length - 1;
      while (low < high) {
        const middle = (low + high + 1) >> 1;
        if (bodies[middle]!.start <= at) low = middle;
        else high = middle - 1;
      }
      if (bodies[low] && at >= bodies[low]!.start) found.add(bodies[low]!);
    }
    return [...found];
  };
  const only = (what: string, found: Body[]): Body => {
    if (found.length !== 1) throw new GluePatchError(`${found.length} candidates for ${what}, expected one`);
    return found[0]!;
  };
  const referring = (text: string, params: number[]) => {
    const addresses = addressesOf(text);
    const candidates = new Set(addresses.flatMap((address) => holding([OP.i32Const, ...sleb(address)])));
    return only(
      `the function that refers to "${text}"`,
      [...candidates].filter((body) =>
        addresses.some((address) => scanOf(body).constants.has(address)) && sameType(body.type, params, [I32])
      ),
    );
  };

  const match = referring("pattern too complex", [I32, I32, I32]);
  const callers = holding([OP.call, ...uleb(match.index)]).filter((body) =>
    body !== match && scanOf(body).calls.has(match.index)
  );
  if (callers.length !== 3 || callers.some((body) => body.type.params[0] !== I32)) {
    throw new GluePatchError(`the callers of match are not str_find_aux, gmatch_aux and str_gsub`);
  }
  const memcmp = only(
    "memcmp",
    [...scanOf(match).calls].map(bodyOf).filter((body): body is Body =>
      body !== undefined && body !== match && sameType(body.type, [I32, I32, I32], [I32]) &&
      scanOf(body).calls.size === 0 && scanOf(body).loops > 0
    ),
  );
  const rep = referring("resulting string too large", [I32]);
  const move = referring("too many elements to move", [I32]);

  // The additions: a type (i32) → i32 for the hook, two globals, their exports.
  let hookType = types.findIndex((type) => sameType(type, [I32], [I32]));
  const typeSection: number[] = [];
  if (hookType >= 0) append(typeSection, section(1));
  else {
    hookType = types.length;
    const rest = new Reader(section(1));
    rest.u32();
    append(typeSection, uleb(types.length + 1), section(1).subarray(rest.at), [0x60, 1, I32, 1, I32]);
  }
  const globals = new Reader(section(6));
  const definedGlobals = globals.u32();
  const steps = importedGlobals + definedGlobals;
  const hook = steps + 1;
  const globalSection: number[] = [];
  append(globalSection, uleb(definedGlobals + 2), section(6).subarray(globals.at));
  append(globalSection, [I32, 1, OP.i32Const, ...sleb(0x7fffffff), OP.end], [I32, 1, OP.i32Const, 0, OP.end]);
  const exports = new Reader(section(7));
  const exportCount = exports.u32();
  const exportSection: number[] = [];
  append(exportSection, uleb(exportCount + 2), section(7).subarray(exports.at));
  append(exportSection, name(STEPS_GLOBAL), [0x03, ...uleb(steps)], name(HOOK_GLOBAL), [0x03, ...uleb(hook)]);

  /** `steps -= 1; if (steps <= 0) steps = hook(local L)`. */
  const check = (state: number) => [
    ...[OP.globalGet, ...uleb(steps), OP.i32Const, 1, OP.i32Sub, OP.globalSet, ...uleb(steps)],
    ...[OP.globalGet, ...uleb(steps), OP.i32Const, 0, OP.i32LeS, OP.if, 0x40],
    ...[OP.localGet, ...uleb(state), OP.globalGet, ...uleb(hook), OP.callIndirect, ...uleb(hookType), 0x00],
    ...[OP.globalSet, ...uleb(steps), OP.end],
  ];
  /** `if (steps > 0) steps -= 1`. */
  const count = [
    ...[OP.globalGet, ...uleb(steps), OP.i32Const, 0, OP.i32GtS, OP.if, 0x40],
    ...[OP.globalGet, ...uleb(steps), OP.i32Const, 1, OP.i32Sub, OP.globalSet, ...uleb(steps), OP.end],
  ];
  const rewrite = (body: Body, kind: "match" | "state" | "count"): Uint8Array => {
    const state = body.type.params.length + body.locals;
    const locals = new Reader(body.bytes);
    const groups = locals.u32();
    const out: number[] = [];
    if (kind === "count") append(out, body.bytes.subarray(0, body.code));
    else append(out, uleb(groups + 1), body.bytes.subarray(locals.at, body.code), [1, I32]);
    // The thread, kept in a local of its own: the code may reuse the argument's local for something else.
    if (kind === "match") append(out, [OP.localGet, 0, OP.i32Load, 2, 12, OP.localSet, ...uleb(state)], check(state));
    else if (kind === "state") append(out, [OP.localGet, 0, OP.localSet, ...uleb(state)]);
    let copied = body.code;
    instructions(body.bytes, body.code, (op, next) => {
      if (op !== OP.loop) return;
      append(out, body.bytes.subarray(copied, next), kind === "count" ? count : check(state));
      copied = next;
    });
    append(out, body.bytes.subarray(copied));
    return concat([new Uint8Array(uleb(out.length)), new Uint8Array(out)]);
  };
  const rewritten = new Map<number, Uint8Array>([
    [match.index, rewrite(match, "match")],
    ...[...callers, rep, move].map((body) => [body.index, rewrite(body, "state")] as [number, Uint8Array]),
    [memcmp.index, rewrite(memcmp, "count")],
  ]);
  // The code section: the original bytes, with the rewritten bodies in place of theirs.
  const codeSection: Uint8Array[] = [];
  let copied = 0;
  for (const body of bodies) {
    const replacement = rewritten.get(body.index);
    if (!replacement) continue;
    codeSection.push(code.subarray(copied, body.start), replacement);
    copied = body.end;
  }
  codeSection.push(code.subarray(copied));

  const replaced = new Map<number, Uint8Array>([
    [1, new Uint8Array(typeSection)],
    [6, new Uint8Array(globalSection)],
    [7, new Uint8Array(exportSection)],
    [10, concat(codeSection)],
  ]);
  const parts: Uint8Array[] = [new Uint8Array(head)];
  for (const { id, body } of sections) {
    const bytes = replaced.get(id) ?? body;
    parts.push(new Uint8Array([id, ...uleb(bytes.length)]), bytes);
  }
  return concat(parts);
}

/** Where `needle` starts in `haystack`. */
function occurrences(haystack: Uint8Array, needle: ArrayLike<number>): number[] {
  const found: number[] = [];
  const first = needle[0]!;
  outer: for (let at = haystack.indexOf(first); at >= 0; at = haystack.indexOf(first, at + 1)) {
    for (let k = 1; k < needle.length; k++) if (haystack[at + k] !== needle[k]) continue outer;
    found.push(at);
  }
  return found;
}

function append(out: number[], ...parts: ReadonlyArray<ArrayLike<number>>): void {
  for (const part of parts) for (let i = 0; i < part.length; i++) out.push(part[i]!);
}

function concat(parts: readonly Uint8Array[]): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}
