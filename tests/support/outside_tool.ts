/**
 * Tests that need something a bare machine may lack (a program such as `systemd-analyze`, the right to mount an
 * overlay) — ARCHITECTURE §8: outside CI such a test is *ignored* with the reason printed, so the runner counts it as
 * ignored rather than passed; under `CI=true` it always runs, and fails naming what is missing, because `.ci/run`
 * installs and grants everything the suite needs.
 *
 * @module
 */

/** Whether a test that needs an outside capability runs here, and why not. */
export interface OutsideNeed {
  /** What is needed, for messages ("systemd-analyze", "an overlay mount"). */
  readonly what: string;
  /** Why it cannot be had here, or `undefined` when it can. */
  readonly missing: string | undefined;
  /** The value for `Deno.test`'s `ignore`: true only outside CI and when missing. */
  readonly ignore: boolean;
  /** Throws (failing the test) when the capability is missing; call first thing in the test. */
  assertAvailable(): void;
}

/** Whether this run is CI's (`CI=true`), where every outside need must be met. */
export function underCi(): boolean {
  return Deno.env.get("CI") === "true";
}

/**
 * Probes a capability once (at module load, with top-level await) and describes whether tests needing it run.
 * `probe` returns why it is missing, or `undefined` when it is there.
 *
 * @example
 * ```ts
 * const systemd = await outsideNeed("systemd-analyze", () => programRuns("systemd-analyze", ["--version"]));
 * Deno.test({ name: "the unit passes systemd-analyze verify", ignore: systemd.ignore, fn: () => {
 *   systemd.assertAvailable();
 * } });
 * ```
 */
export async function outsideNeed(what: string, probe: () => Promise<string | undefined>): Promise<OutsideNeed> {
  let missing: string | undefined;
  try {
    missing = await probe();
  } catch (error) {
    missing = (error as Error).message;
  }
  const ignore = missing !== undefined && !underCi();
  if (ignore) console.log(`ignored: tests that need ${what} (${missing}); under CI=true they run and must pass`);
  return {
    what,
    missing,
    ignore,
    assertAvailable() {
      if (missing !== undefined) {
        throw new Error(`${what} is needed here and missing under CI=true: ${missing} (.ci/run must provide it)`);
      }
    },
  };
}

/**
 * Why `program args` cannot be run here (it is not on PATH, or it exits non-zero), or `undefined` when it runs.
 *
 * @example
 * ```ts
 * const why = await programRuns("systemd-analyze", ["--version"]); // undefined where systemd is installed
 * ```
 */
export async function programRuns(program: string, args: string[]): Promise<string | undefined> {
  try {
    const { code } = await new Deno.Command(program, { args, stdin: "null", stdout: "null", stderr: "null" }).output();
    return code === 0 ? undefined : `${program} ${args.join(" ")} exited with code ${code}`;
  } catch (error) {
    return `${program} cannot be run (${(error as Error).message})`;
  }
}
