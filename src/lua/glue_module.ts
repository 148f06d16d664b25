/**
 * wasmoon's `glue.wasm` read into what the patch works on: its sections in order, the function types, how many
 * functions and globals are imported (defined ones are numbered after them), and every function body with its type
 * and local count. A binary that is not WebAssembly, or not wasmoon's glue (no `lua_resume` export), is not read
 * further; one that is, but lacks what the patch needs, is a {@link GluePatchError}.
 *
 * @module
 */

import { GluePatchError } from "./glue_patch_error.ts";
import { Reader } from "./wasm_reader.ts";

/** The first eight bytes of a WebAssembly binary: the magic and version 1. */
export const WASM_HEAD = [0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00];

/** A function type: its parameter and result value types. */
export interface FuncType {
  params: number[];
  results: number[];
}

/** One function body of the code section. */
export interface Body {
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

/** The glue binary, read. */
export interface GlueModule {
  /** Every section in order: its id and its body. */
  sections: Array<{ id: number; body: Uint8Array }>;
  types: FuncType[];
  importedFunctions: number;
  importedGlobals: number;
  /** The defined functions' bodies, in order. */
  bodies: Body[];
  /** The code section's body. */
  code: Uint8Array;
}

/**
 * Whether `type` takes exactly `params` and gives exactly `results`.
 *
 * @example
 * ```ts
 * sameType({ params: [0x7f], results: [0x7f] }, [0x7f], [0x7f]); // true
 * ```
 */
export function sameType(type: FuncType, params: number[], results: number[]): boolean {
  return type.params.length === params.length && type.params.every((p, i) => p === params[i]) &&
    type.results.length === results.length && type.results.every((p, i) => p === results[i]);
}

/**
 * The body of section `id`, or an empty vector (a count of 0) when the module has none.
 *
 * @example
 * ```ts
 * import type { GlueModule } from "./glue_module.ts";
 *
 * declare const module: GlueModule;
 * sectionOf(module, 7); // the export section
 * ```
 */
export function sectionOf(module: Pick<GlueModule, "sections">, id: number): Uint8Array {
  return module.sections.find((s) => s.id === id)?.body ?? new Uint8Array([0]);
}

/**
 * Reads `wasm`: `undefined` when it is not WebAssembly or not wasmoon's glue (it does not export `lua_resume`).
 *
 * @example
 * ```ts
 * import { luaWasmPath } from "./wasm_path.ts";
 *
 * const glue = readGlue(await Deno.readFile(luaWasmPath()))!;
 * glue.bodies.length; // the functions glue.wasm defines
 * ```
 */
export function readGlue(wasm: Uint8Array): GlueModule | undefined {
  if (wasm.length < 8 || WASM_HEAD.some((byte, i) => wasm[i] !== byte)) return undefined;
  const sections: Array<{ id: number; body: Uint8Array }> = [];
  for (const r = new Reader(wasm, 8); r.at < wasm.length;) {
    const id = r.byte();
    sections.push({ id, body: r.bytesOf(r.u32()) });
  }
  const section = (id: number) => sectionOf({ sections }, id);
  const types = readTypes(section(1));
  const { importedFunctions, importedGlobals } = countImports(section(2));
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
  const code = section(10);
  return {
    sections,
    types,
    importedFunctions,
    importedGlobals,
    bodies: readBodies(code, types, functionTypes, importedFunctions),
    code,
  };
}

/** The type section's function types. */
function readTypes(section: Uint8Array): FuncType[] {
  const types: FuncType[] = [];
  for (let r = new Reader(section), n = r.u32(), i = 0; i < n; i++) {
    if (r.byte() !== 0x60) throw new GluePatchError("a type that is not a function type");
    const params = [...r.bytesOf(r.u32())];
    const results = [...r.bytesOf(r.u32())];
    types.push({ params, results });
  }
  return types;
}

/** How many functions and globals the import section imports (tables and memories skipped). */
function countImports(section: Uint8Array): { importedFunctions: number; importedGlobals: number } {
  let importedFunctions = 0;
  let importedGlobals = 0;
  for (let r = new Reader(section), n = r.u32(), i = 0; i < n; i++) {
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
  return { importedFunctions, importedGlobals };
}

/** The code section's bodies, each with its type (from `functionTypes`) and absolute index. */
function readBodies(code: Uint8Array, types: FuncType[], functionTypes: number[], importedFunctions: number): Body[] {
  const bodies: Body[] = [];
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
  return bodies;
}
