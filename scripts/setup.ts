/**
 * The install step (`deno task setup`; `deno task test` runs it first, `.ci/run` too): fetches everything the tests
 * and the device builds need into Deno's cache, so that nothing downloads later.
 *
 * - the npm packages of `deno.lock` (`deno install --frozen`), into `DENO_DIR` and `node_modules/`;
 * - the test tools of `tests/tools/deno.lock` (playwright-core, the MCP reference servers: run under Node by tests and
 *   benchmarks) into `tests/tools/node_modules/` — a config of their own, so the daemon's first start skips them;
 * - the npm packages test files import by full specifier (`npm:openai@…`, the stemmers of an eval), cached;
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

/** The files that import test-only npm packages by full specifier (the official `openai` client, stemmers). */
const TEST_ONLY_IMPORTERS = [
  "tests/e2e_openai_door_test.ts",
  "tests/e2e_cross_site_test.ts",
  "bench/retrieval/stemmers.ts",
];

async function step(
  what: string,
  args: string[],
  stdout: "inherit" | "null" = "inherit",
  folder = "",
): Promise<void> {
  const started = performance.now();
  const { success, code } = await new Deno.Command(Deno.execPath(), {
    args,
    cwd: `${REPO}${folder}`,
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
  // Tools only tests and benchmarks run under Node (Chromium's driver, the MCP reference servers) live in their own
  // config, so `deno task start` on a fresh machine never downloads them.
  await step(
    "test tools of tests/tools/deno.lock installed",
    ["install", "--frozen", "--quiet"],
    "inherit",
    "tests/tools",
  );
  // npm packages only tests and evals import, by full specifier (`npm:openai@…`): locked in tests/test.lock (the
  // daemon's deno.lock plus these), which the test and check tasks use, so the daemon's first start does not fetch
  // them; fetched here, so no test does.
  await step("test-only npm packages cached", [
    "cache",
    "--lock=tests/test.lock",
    "--frozen",
    "--quiet",
    ...TEST_ONLY_IMPORTERS,
  ]);
  // The bundle itself goes to standard output, unwanted: only the fetch of esbuild counts.
  await step("esbuild for deno bundle cached", ["bundle", "--quiet", "--platform", "deno", "src/version.ts"], "null");
}
