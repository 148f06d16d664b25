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
 * await deno([...buildScriptArgs(out), "bundle", "--out", out]);
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
