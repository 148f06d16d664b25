/**
 * Where silk-wasm's `silk.wasm` is: the one file outside homed's own folders that the SILK codec (QQ voice notes)
 * reads at run time, so the computed `--allow-read` names exactly it (never the whole npm cache).
 *
 * silk-wasm's emscripten glue takes Node's path under Deno: it reads the file with `fs.readFileSync`, beside its
 * entry module (`lib/index.cjs`), and does so again on every encode and decode, so the right is needed for as long
 * as homed runs, not only at start-up.
 *
 * @module
 */

import { fileURLToPath } from "node:url";

/**
 * The absolute path of silk-wasm's `silk.wasm`, beside the package's entry module.
 *
 * @example
 * ```ts
 * silkWasmPath(); // "/srv/homed/node_modules/.deno/silk-wasm@3.7.1/node_modules/silk-wasm/lib/silk.wasm"
 * ```
 */
export function silkWasmPath(): string {
  try {
    return fileURLToPath(new URL("./silk.wasm", import.meta.resolve("silk-wasm")));
  } catch {
    // The bundled homed.js has no package to resolve: the glue then looks beside the bundle (its `__filename`).
    return fileURLToPath(new URL("./silk.wasm", Deno.mainModule));
  }
}
