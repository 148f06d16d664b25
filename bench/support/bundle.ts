/**
 * The bundle as the benchmarks run it: built as `deno task bundle` builds it (minified, `glue.wasm` beside it) into a
 * temporary folder, and started the way the supervisor and the service start it — `deno run --no-config` with the
 * flags the bundle's own `homed flags` prints for the config.
 *
 * @module
 */

import { join } from "node:path";
import { BUNDLE_DENO_FLAGS } from "../../src/rights/daemon_entry.ts";
import { buildScriptArgs } from "../../tests/support/build_script.ts";
import { childEnv, REPO } from "../../tests/support/homed_process.ts";

/**
 * Builds the bundle into a new folder under /tmp named `prefix…`; returns the path of its `homed.js`.
 *
 * @example
 * ```ts
 * import { join } from "node:path";
 *
 * const script = await buildBundle("homed-bench-bundle-");
 * await Deno.remove(join(script, ".."), { recursive: true });
 * ```
 */
export async function buildBundle(prefix: string): Promise<string> {
  const out = await Deno.makeTempDir({ dir: "/tmp", prefix });
  const built = await new Deno.Command(Deno.execPath(), {
    args: [...buildScriptArgs(out), "bundle", "--out", out],
    cwd: REPO,
    stdout: "null",
    stderr: "inherit",
  }).output();
  if (!built.success) throw new Error("deno task bundle failed");
  return join(out, "homed.js");
}

/**
 * The arguments of `deno` that run the bundle `script` as a daemon for the config `env` names: no config file, the
 * flags the bundle computes itself, then `run`.
 *
 * @example
 * ```ts
 * const args = await bundleRunArgs("/tmp/homed-bench-bundle-x/homed.js", { HOMED_CONFIG: "/tmp/home/homed.yaml" });
 * // ["run", "--no-config", "--no-prompt", "--allow-read=…", …, "/tmp/homed-bench-bundle-x/homed.js", "run"]
 * ```
 */
export async function bundleRunArgs(script: string, env: Record<string, string>): Promise<string[]> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", ...BUNDLE_DENO_FLAGS, "--no-prompt", "--allow-read", "--allow-env", script, "flags"],
    env: childEnv(env),
    clearEnv: true,
    stdout: "piped",
    stderr: "inherit",
  }).output();
  if (!out.success) throw new Error(`${script} flags failed (exit ${out.code})`);
  const flags = new TextDecoder().decode(out.stdout).trim().split(/\s+/);
  return ["run", ...BUNDLE_DENO_FLAGS, ...flags, script, "run"];
}
