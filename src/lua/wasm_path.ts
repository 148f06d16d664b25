/**
 * Where wasmoon's `glue.wasm` is: the one file outside homed's own folders that the Lua VM reads at run time, so the
 * computed `--allow-read` names exactly it (never the whole npm cache).
 *
 * @module
 */

import { createRequire } from "node:module";
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
  try {
    return fileURLToPath(new URL("./glue.wasm", import.meta.resolve("wasmoon")));
  } catch {
    // The bundled homed.js has no package to resolve: `deno task bundle` puts glue.wasm beside it.
    return fileURLToPath(new URL("./glue.wasm", Deno.mainModule));
  }
}

/**
 * In the single-file bundle (`deno task bundle`), wasmoon's emscripten glue runs as ES module code yet looks for
 * CommonJS's `__filename` and `require`; this gives it both, pointing at the bundle. A no-op where wasmoon is an npm
 * package (a checkout, a compiled binary).
 *
 * @example
 * ```ts
 * provideBundleGlobals();
 * const { LuaFactory } = await import("wasmoon");
 * ```
 */
export function provideBundleGlobals(): void {
  try {
    import.meta.resolve("wasmoon");
    return;
  } catch {
    const globals = globalThis as Record<string, unknown>;
    globals.__filename ??= fileURLToPath(Deno.mainModule);
    globals.require ??= createRequire(Deno.mainModule);
  }
}
