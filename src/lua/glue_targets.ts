/**
 * Finding the functions the glue patch rewrites, by what they do rather than by name (the binary has none): `match`
 * refers to the C string "pattern too complex"; its three callers (`str_find_aux`, `gmatch_aux`, `str_gsub`) call it;
 * `memcmp` is the one callee of `match` taking three i32 values that calls nothing and loops; `str_rep` and `tmove`
 * refer to "resulting string too large" and "too many elements to move". Anything but exactly the expected candidates
 * is a {@link GluePatchError}: a patch in the wrong place would be worse than none.
 *
 * @module
 */

import { type Body, type GlueModule, sameType, sectionOf } from "./glue_module.ts";
import { GluePatchError } from "./glue_patch_error.ts";
import { I32, occurrences, OP, sleb, uleb } from "./wasm_encoding.ts";
import { instructions, Reader } from "./wasm_reader.ts";

/** The functions the patch rewrites. */
export interface GlueTargets {
  /** lstrlib.c's `match`: the recursive pattern matcher. */
  match: Body;
  /** `str_find_aux`, `gmatch_aux` and `str_gsub`. */
  callers: Body[];
  /** The `memcmp` `match` calls (back references, the plain search). */
  memcmp: Body;
  /** `str_rep`. */
  rep: Body;
  /** `tmove` (`table.move`). */
  move: Body;
}

/** What one body does, as far as the search asks: whom it calls, which i32 constants it has, how many loops. */
interface Scan {
  calls: Set<number>;
  constants: Set<number>;
  loops: number;
}

/**
 * The functions of `module` the patch rewrites.
 *
 * @example
 * ```ts
 * import { readGlue } from "./glue_module.ts";
 * import { luaWasmPath } from "./wasm_path.ts";
 *
 * const targets = findTargets(readGlue(await Deno.readFile(luaWasmPath()))!);
 * targets.callers.length; // 3
 * ```
 */
export function findTargets(module: GlueModule): GlueTargets {
  const finder = new FunctionFinder(module);
  const match = finder.referring("pattern too complex", [I32, I32, I32]);
  const callers = finder.holding([OP.call, ...uleb(match.index)]).filter((body) =>
    body !== match && finder.scanOf(body).calls.has(match.index)
  );
  if (callers.length !== 3 || callers.some((body) => body.type.params[0] !== I32)) {
    throw new GluePatchError(`the callers of match are not str_find_aux, gmatch_aux and str_gsub`);
  }
  const memcmp = only(
    "memcmp",
    [...finder.scanOf(match).calls].map((index) => finder.bodyOf(index)).filter((body): body is Body =>
      body !== undefined && body !== match && sameType(body.type, [I32, I32, I32], [I32]) &&
      finder.scanOf(body).calls.size === 0 && finder.scanOf(body).loops > 0
    ),
  );
  const rep = finder.referring("resulting string too large", [I32]);
  const move = finder.referring("too many elements to move", [I32]);
  return { match, callers, memcmp, rep, move };
}

/** The single body in `found`, or an error naming `what` and how many there were. */
function only(what: string, found: Body[]): Body {
  if (found.length !== 1) throw new GluePatchError(`${found.length} candidates for ${what}, expected one`);
  return found[0]!;
}

/** The search over one module's bodies, each body decoded at most once. */
class FunctionFinder {
  #module: GlueModule;
  #scanned = new Map<number, Scan>();

  constructor(module: GlueModule) {
    this.#module = module;
  }

  /** The body of the function with absolute index `index` (undefined for an imported one). */
  bodyOf(index: number): Body | undefined {
    return this.#module.bodies[index - this.#module.importedFunctions];
  }

  /** The addresses of a C string constant, from the active data segments. */
  #addressesOf(text: string): number[] {
    const needle = new TextEncoder().encode(`${text}\0`);
    const found: number[] = [];
    for (let r = new Reader(sectionOf(this.#module, 11)), n = r.u32(), i = 0; i < n; i++) {
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
  }

  /** What `body` calls, its i32 constants and its loops. */
  scanOf(body: Body): Scan {
    return this.#scanned.get(body.index) ?? this.#scanned.set(body.index, scan(body)).get(body.index)!;
  }

  /** Bodies holding `bytes` somewhere (a cheap filter before decoding them). */
  holding(bytes: number[]): Body[] {
    const { bodies, code } = this.#module;
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
  }

  /** The one function of type `params` → i32 that refers to the C string `text`. */
  referring(text: string, params: number[]): Body {
    const addresses = this.#addressesOf(text);
    const candidates = new Set(addresses.flatMap((address) => this.holding([OP.i32Const, ...sleb(address)])));
    return only(
      `the function that refers to "${text}"`,
      [...candidates].filter((body) =>
        addresses.some((address) => this.scanOf(body).constants.has(address)) && sameType(body.type, params, [I32])
      ),
    );
  }
}

/** Decodes `body` for what the search asks. */
function scan(body: Body): Scan {
  const calls = new Set<number>();
  const constants = new Set<number>();
  let loops = 0;
  instructions(body.bytes, body.code, (op, _next, immediate) => {
    if (op === OP.call) calls.add(immediate);
    else if (op === OP.i32Const) constants.add(immediate);
    else if (op === OP.loop) loops++;
  });
  return { calls, constants, loops };
}
