/**
 * How tests and benchmarks run `scripts/build.ts` (what `deno task compile|bundle|release` run), writing into `out`
 * instead of `dist/`.
 */

import { join } from "node:path";
import { REPO } from "./homed_process.ts";

/**
 * `deno run` arguments up to the script: the repository and `out` readable and writable, Deno and git runnable.
 *
 * @example
 * ```ts
 * import { deno } from "./homed_process.ts";
 *
 * const out = await Deno.makeTempDir({ prefix: "homed-build-" });
 * const built = await deno([...buildScriptArgs(out), "bundle", "--out", out]);
 * built.code; // 0
 * ```
 */
export function buildScriptArgs(out: string): string[] {
  return [
    "run",
    "--no-prompt",
    `--allow-read=${REPO},${out}`,
    `--allow-write=${REPO},${out}`,
    "--allow-env",
    `--allow-run=${Deno.execPath()},git`,
    join(REPO, "scripts", "build.ts"),
  ];
}
