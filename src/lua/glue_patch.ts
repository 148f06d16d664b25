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
 * The steps are in files of their own: reading the binary (`glue_module.ts`, on `wasm_reader.ts`), finding the
 * functions (`glue_targets.ts`) and writing the patched binary (`glue_rewrite.ts`, with `wasm_encoding.ts`).
 *
 * @module
 */

import { readGlue } from "./glue_module.ts";
import { rewriteGlue } from "./glue_rewrite.ts";
import { findTargets } from "./glue_targets.ts";

export { GluePatchError } from "./glue_patch_error.ts";

/** The exported global holding the steps left before the next host call. */
export const STEPS_GLOBAL = "homed_steps";
/** The exported global holding the function table slot of the host's `(state: i32) → i32` step hook. */
export const HOOK_GLOBAL = "homed_step_hook";

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
  const glue = readGlue(wasm);
  if (!glue) return undefined;
  return rewriteGlue(glue, findTargets(glue), { steps: STEPS_GLOBAL, hook: HOOK_GLOBAL });
}
