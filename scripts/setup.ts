/**
 * The install step (`deno task setup`; `deno task test` runs it first, `.ci/run` too): fetches everything the tests
 * and the device builds need into Deno's cache, so that nothing downloads later.
 *
 * - the npm packages of `deno.lock` (`deno install --frozen`), into `DENO_DIR` and `node_modules/`;
 * - esbuild's binary for `deno bundle` — the npm package `@esbuild/<platform>` at the version this Deno pins for
 *   itself (Deno 2.9.6: 0.25.5) — by bundling one small module; `deno bundle` would otherwise fetch it on its first
 *   use, inside a test.
 *
 * Deno reaches the registry trusting the system's certificates as well as its own (`DENO_TLS_CA_STORE=mozilla,system`
 * unless set), so a machine behind a TLS-inspecting proxy whose CA is installed system-wide works.
 *
 * Run: deno task setup
 *
 * @module
 */

import { fileURLToPath } from "node:url";
import { denoRegistryEnv } from "./registry_env.ts";

const REPO = fileURLToPath(new URL("../", import.meta.url));

async function step(what: string, args: string[], stdout: "inherit" | "null" = "inherit"): Promise<void> {
  const started = performance.now();
  const { success, code } = await new Deno.Command(Deno.execPath(), {
    args,
    cwd: REPO,
    env: denoRegistryEnv(),
    stdin: "null",
    stdout,
    stderr: "inherit",
  }).output();
  if (!success) {
    console.error(`setup: ${what} failed (deno ${args.join(" ")} exited with code ${code})`);
    Deno.exit(1);
  }
  console.error(`setup: ${what} (${Math.round(performance.now() - started)} ms)`);
}

if (import.meta.main) {
  await step("npm packages of deno.lock installed", ["install", "--frozen", "--quiet"]);
  // The bundle itself goes to standard output, unwanted: only the fetch of esbuild counts.
  await step("esbuild for deno bundle cached", ["bundle", "--quiet", "--platform", "deno", "src/version.ts"], "null");
}
