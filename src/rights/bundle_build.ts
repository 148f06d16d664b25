/**
 * Building the checkout's bundle when it is missing or stale, for the commands that run the daemon from a checkout:
 * `homed supervise` at its start, `homed service install` before it writes the unit. The build is `deno task
 * bundle`'s own (`scripts/build.ts bundle` on this Deno, with that task's rights), in a process of its own, so the
 * command that asks for it needs no right but to run this Deno. A build that fails or hangs never stops the house:
 * the daemon then runs from the sources, and the reason is said.
 *
 * @module
 */

import { join } from "node:path";
import { BUNDLE_SCRIPT, type DaemonEntry, daemonEntry, FILE_SYSTEM, type SourceReader } from "./daemon_entry.ts";

/**
 * How long a build may take before it is given up (and the sources run): a bundle takes ≈ 3 s on a laptop, some
 * 30 s on a Raspberry Pi; esbuild's download, when `deno task setup` was not run, more.
 */
export const BUNDLE_BUILD_TIMEOUT_MS = 180_000;

/** What a build says: whether it succeeded, and its output (the reason when it did not). */
export interface BuildResult {
  ok: boolean;
  out: string;
}

/**
 * `deno task bundle`'s command line for the checkout `root`, absolute so it needs no working folder of its own: the
 * checkout readable and writable (it writes `dist/` and, for the build's duration, `src/build_info.ts`), this Deno and
 * git runnable (`deno bundle`; the commit for the manifest).
 *
 * @example
 * ```ts
 * bundleBuildArgs("/srv/homed");
 * // ["run", "--no-prompt", "--allow-read=/srv/homed", …, "/srv/homed/scripts/build.ts", "bundle"]
 * ```
 */
export function bundleBuildArgs(root: string): string[] {
  return [
    "run",
    "--no-prompt",
    `--allow-read=${root}`,
    `--allow-write=${root}`,
    // As the task's: the variables the modules scripts/build.ts imports read when loaded, and the build's own.
    "--allow-env=DENORT_BIN,DENO_TLS_CA_STORE,LOG_TOKENS,LOG_STREAM,HOMED_CONFIG,HOMED_API_TOKEN,DEEPSEEK_API_KEY," +
    "ONEBOT_ACCESS_TOKEN",
    `--allow-run=${Deno.execPath()},git`,
    join(root, "scripts", "build.ts"),
    "bundle",
  ];
}

/**
 * Runs the bundle's build for `root` on this Deno; given up (SIGTERM) after `timeoutMs` or when `signal` aborts.
 * Never throws: a Deno that cannot be started is a failed build like any other.
 *
 * @example
 * ```ts
 * const built = await buildBundle("/srv/homed");
 * built.ok ? "built" : built.out; // the build's output says why it failed
 * ```
 */
export async function buildBundle(
  root: string,
  options: { timeoutMs?: number; signal?: AbortSignal } = {},
): Promise<BuildResult> {
  let child: Deno.ChildProcess;
  try {
    child = new Deno.Command(Deno.execPath(), {
      args: bundleBuildArgs(root),
      cwd: root,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
  } catch (error) {
    return { ok: false, out: `cannot start ${Deno.execPath()}: ${(error as Error).message}` };
  }
  let ended = "";
  const stop = (why: string) => {
    ended = why;
    try {
      child.kill("SIGTERM");
    } catch { /* already gone */ }
  };
  const timeoutMs = options.timeoutMs ?? BUNDLE_BUILD_TIMEOUT_MS;
  const timer = setTimeout(() => stop(`given up after ${Math.round(timeoutMs / 1000)} s`), timeoutMs);
  const abort = () => stop("stopped");
  options.signal?.addEventListener("abort", abort, { once: true });
  try {
    const output = await child.output();
    const decoder = new TextDecoder();
    const out = (decoder.decode(output.stdout) + decoder.decode(output.stderr)).trim();
    return { ok: output.success && !ended, out: ended ? `${ended}${out ? `; ${out}` : ""}` : out };
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener("abort", abort);
  }
}

/** The last non-empty line of a build's output, for a one-line reason. */
function lastLine(out: string): string {
  return out.split("\n").map((line) => line.trim()).filter(Boolean).at(-1) ?? "no output";
}

/**
 * The entry that runs the daemon, after building the bundle when it is missing or stale and `build` is on (once:
 * this does not loop). `say` gets the progress ("building the bundle …", how it went). A build that fails leaves the
 * sources, the reason naming the build's last line.
 *
 * @example
 * ```ts
 * import { sourceCheckout } from "./daemon_entry.ts";
 *
 * const entry = await preparedEntry(sourceCheckout(), { build: true, say: (line) => console.error(line) });
 * entry.reason; // "running the bundle /srv/homed/dist/homed.js (built from these sources)"
 * ```
 */
export async function preparedEntry(
  root: string | undefined,
  options: {
    build: boolean;
    say: (line: string) => void;
    signal?: AbortSignal;
    reader?: SourceReader;
    builder?: (root: string, signal?: AbortSignal) => Promise<BuildResult>;
  },
): Promise<DaemonEntry> {
  const reader = options.reader ?? FILE_SYSTEM;
  const entry = daemonEntry(root, reader);
  if (entry.kind !== "sources" || !options.build) return entry;
  const script = join(entry.root, BUNDLE_SCRIPT);
  options.say(`building the bundle ${script} (it is ${entry.bundle}) …`);
  const started = performance.now();
  const builder = options.builder ?? ((at, signal) => buildBundle(at, signal ? { signal } : {}));
  const built = await builder(entry.root, options.signal);
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  if (!built.ok) {
    const why = lastLine(built.out);
    options.say(`building the bundle failed after ${seconds} s: ${why}`);
    return {
      ...entry,
      reason: `running the sources: building ${script} failed (${why}) — \`deno task bundle\` shows the whole error`,
    };
  }
  const after = daemonEntry(entry.root, reader);
  options.say(`built ${script} in ${seconds} s`);
  return after;
}
