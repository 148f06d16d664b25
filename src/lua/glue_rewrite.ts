/**
 * Writing the patched glue: the additions (a type `(i32) → i32` for the hook when the binary has none, two mutable i32
 * globals — the steps left and the hook's table slot — and their exports), the step check put at the head of every
 * loop of the rewritten functions (and at `match`'s entry), the counting-only step in `memcmp`'s loops, and the
 * binary put back together: every section as it was but those four (types, globals, exports, code), every body as it
 * was but the rewritten ones.
 *
 * @module
 */

import { type Body, type GlueModule, sameType, sectionOf, WASM_HEAD } from "./glue_module.ts";
import type { GlueTargets } from "./glue_targets.ts";
import { append, concat, I32, name, OP, sleb, uleb } from "./wasm_encoding.ts";
import { instructions, Reader } from "./wasm_reader.ts";

/** The names the two added globals are exported under. */
export interface StepGlobalNames {
  /** The steps left before the next host call. */
  steps: string;
  /** The function table slot of the host's step hook. */
  hook: string;
}

/** Where the additions landed: the two globals' indexes and the hook's type index. */
interface StepGlobals {
  steps: number;
  hook: number;
  hookType: number;
}

/**
 * `module` with step checks in `targets` and the two globals exported as `names`.
 *
 * @example
 * ```ts
 * import { readGlue } from "./glue_module.ts";
 * import { findTargets } from "./glue_targets.ts";
 * import { luaWasmPath } from "./wasm_path.ts";
 *
 * const glue = readGlue(await Deno.readFile(luaWasmPath()))!;
 * const patched = rewriteGlue(glue, findTargets(glue), { steps: "homed_steps", hook: "homed_step_hook" });
 * ```
 */
export function rewriteGlue(module: GlueModule, targets: GlueTargets, names: StepGlobalNames): Uint8Array<ArrayBuffer> {
  const { typeSection, globalSection, exportSection, globals } = additions(module, names);
  const { match, callers, memcmp, rep, move } = targets;
  const rewritten = new Map<number, Uint8Array>([
    [match.index, rewriteBody(match, "match", globals)],
    ...[...callers, rep, move].map((body) => [body.index, rewriteBody(body, "state", globals)] as [number, Uint8Array]),
    [memcmp.index, rewriteBody(memcmp, "count", globals)],
  ]);
  // The code section: the original bytes, with the rewritten bodies in place of theirs.
  const { bodies, code } = module;
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
  const parts: Uint8Array[] = [new Uint8Array(WASM_HEAD)];
  for (const { id, body } of module.sections) {
    const bytes = replaced.get(id) ?? body;
    parts.push(new Uint8Array([id, ...uleb(bytes.length)]), bytes);
  }
  return concat(parts);
}

/** The additions: a type (i32) → i32 for the hook, two globals, their exports; the new type, global and export sections. */
function additions(module: GlueModule, names: StepGlobalNames): {
  typeSection: number[];
  globalSection: number[];
  exportSection: number[];
  globals: StepGlobals;
} {
  const { types, importedGlobals } = module;
  const section = (id: number) => sectionOf(module, id);
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
  append(exportSection, name(names.steps), [0x03, ...uleb(steps)], name(names.hook), [0x03, ...uleb(hook)]);
  return { typeSection, globalSection, exportSection, globals: { steps, hook, hookType } };
}

/** `steps -= 1; if (steps <= 0) steps = hook(local L)`. */
function check({ steps, hook, hookType }: StepGlobals, state: number): number[] {
  return [
    ...[OP.globalGet, ...uleb(steps), OP.i32Const, 1, OP.i32Sub, OP.globalSet, ...uleb(steps)],
    ...[OP.globalGet, ...uleb(steps), OP.i32Const, 0, OP.i32LeS, OP.if, 0x40],
    ...[OP.localGet, ...uleb(state), OP.globalGet, ...uleb(hook), OP.callIndirect, ...uleb(hookType), 0x00],
    ...[OP.globalSet, ...uleb(steps), OP.end],
  ];
}

/** `if (steps > 0) steps -= 1`. */
function count({ steps }: StepGlobals): number[] {
  return [
    ...[OP.globalGet, ...uleb(steps), OP.i32Const, 0, OP.i32GtS, OP.if, 0x40],
    ...[OP.globalGet, ...uleb(steps), OP.i32Const, 1, OP.i32Sub, OP.globalSet, ...uleb(steps), OP.end],
  ];
}

/**
 * One body with its steps: `match` saves the thread (`ms->L`) and checks at entry and in every loop, a `state`
 * function saves its first argument and checks in every loop, a `count` function only counts in every loop. The
 * result has its size first, as the code section holds it.
 */
function rewriteBody(body: Body, kind: "match" | "state" | "count", globals: StepGlobals): Uint8Array {
  const state = body.type.params.length + body.locals;
  const locals = new Reader(body.bytes);
  const groups = locals.u32();
  const out: number[] = [];
  if (kind === "count") append(out, body.bytes.subarray(0, body.code));
  else append(out, uleb(groups + 1), body.bytes.subarray(locals.at, body.code), [1, I32]);
  // The thread, kept in a local of its own: the code may reuse the argument's local for something else.
  if (kind === "match") {
    append(out, [OP.localGet, 0, OP.i32Load, 2, 12, OP.localSet, ...uleb(state)], check(globals, state));
  } else if (kind === "state") append(out, [OP.localGet, 0, OP.localSet, ...uleb(state)]);
  const step = kind === "count" ? count(globals) : check(globals, state);
  let copied = body.code;
  instructions(body.bytes, body.code, (op, next) => {
    if (op !== OP.loop) return;
    append(out, body.bytes.subarray(copied, next), step);
    copied = next;
  });
  append(out, body.bytes.subarray(copied));
  return concat([new Uint8Array(uleb(out.length)), new Uint8Array(out)]);
}
