/**
 * Where wasmoon's `glue.wasm` is: the one file outside homed's own folders that the Lua VM reads at run time, so the
 * computed `--allow-read` names exactly it (never the whole npm cache).
 *
 * @module
 */

import { fileURLToPath } from "node:url";

/**
 * The absolute path of wasmoon's `glue.wasm`, beside the package's entry module.
 *
 * @example
 * ```ts
 * luaWasmPath(); // "/srv/homed/node_modules/.deno/wasmoon@1.16.0/node_modules/wasmoon/dist/glue.wasm"
 * ```
 */
export function luaWasmPath(): string {
  return fileURLToPath(new URL("./glue.wasm", import.meta.resolve("wasmoon")));
}
