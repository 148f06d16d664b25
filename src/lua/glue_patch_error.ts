/**
 * The one way patching `glue.wasm` fails: the binary is wasmoon's glue, but not the build the patch knows (a newer
 * wasmoon, a changed compiler), so the Lua VM cannot bound its C loops. Its own file so every step of the patch (the
 * reader, the search for the functions, the rewrite) can throw it.
 *
 * @module
 */

/** glue.wasm is not the binary this patch knows (another wasmoon): the Lua VM cannot bound its C loops. */
export class GluePatchError extends Error {
  /**
   * @example
   * ```ts
   * throw new GluePatchError("the binary has no global section");
   * // wasmoon's glue.wasm cannot be given step checks: the binary has no global section
   * ```
   */
  constructor(detail: string) {
    super(`wasmoon's glue.wasm cannot be given step checks: ${detail}`);
    this.name = "GluePatchError";
  }
}
