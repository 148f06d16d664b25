import { cpus } from "node:os";
import { basename, dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * What every benchmark records beside its numbers: commit, Deno version, CPU.
 *
 * @module
 */

/** The machine and code a figure was measured on. */
export interface BenchEnvironment {
  commit: string;
  deno: string;
  cpu: string;
}

/**
 * Reads the commit (with `+dirty` when the tree has changes), Deno's version and the CPU model (Deno denies
 * `/proc/cpuinfo` to anything short of --allow-all, so the model comes from `node:os` with --allow-sys=cpus).
 *
 * @example
 * ```ts
 * const env = await environment(); // { commit: "4dfcd0a…", deno: "2.9.6", cpu: "Intel(R) Xeon(R) …" }
 * ```
 */
export async function environment(): Promise<BenchEnvironment> {
  const git = async (...args: string[]) => {
    try {
      const out = await new Deno.Command("git", { args, stdout: "piped", stderr: "null" }).output();
      return out.success ? new TextDecoder().decode(out.stdout).trim() : "";
    } catch {
      return "";
    }
  };
  const commit = (await git("rev-parse", "HEAD")) || "unknown";
  const dirty = (await git(
    "status",
    "--porcelain",
    "--untracked-files=no",
    "--",
    ".",
    ...RECORDED.map((name) => `:(exclude)bench/*/${name}`),
  )) !== "";
  let cpu = "unknown";
  try {
    const list = cpus();
    cpu = `${list[0]?.model ?? "unknown"} (${list.length} cores)`;
  } catch { /* no --allow-sys=cpus */ }
  return { commit: dirty ? `${commit}+dirty` : commit, deno: Deno.version.deno, cpu };
}

/**
 * The p-th percentile (nearest rank) of `values`.
 *
 * @example
 * ```ts
 * percentile([1, 2, 3, 4], 50); // 2
 * ```
 */
export function percentile(values: readonly number[], p: number): number {
  if (!values.length) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/** Result files that `--record` updates in place (committed); they do not make the tree count as changed. */
const RECORDED = [
  "results.json",
  "speed.json",
  "run.json",
  "conversation_fields.json",
  "recall_conversation.json",
  "recall_locomo.json",
  "recall_chinese.json",
  "results-sources.json",
  "stemmers.json",
  "replay.json",
  "scale.json",
  "oversize.json",
  "latency.json",
  "serial.json",
  "vad.json",
  "mqtt.json",
  "ha_burst.json",
  "call.json",
  "daemon_env.json",
  "telegram_wire.json",
];

/** True when the run was asked to update the committed results (`--record`). */
export const RECORD = Deno.args.includes("--record");

/**
 * Writes results as pretty JSON. A plain run writes under the untracked `bench/out/` (so a `git pull` never
 * conflicts with local figures); `--record` updates the committed file at `url`, for the figures a closing note
 * quotes. Returns the path written.
 *
 * @example
 * ```ts
 * // In bench/turn_overhead/main.ts, without --record: resolves to "/…/bench/out/turn_overhead/results.json"
 * await writeResults(new URL("./results.json", import.meta.url), { p50_ms: 1 });
 * ```
 */
export async function writeResults(url: URL, results: Record<string, unknown>): Promise<string> {
  const committed = fileURLToPath(url);
  const path = RECORD
    ? committed
    : join(fileURLToPath(new URL("../out/", import.meta.url)), basename(dirname(committed)), basename(committed));
  await Deno.mkdir(dirname(path), { recursive: true });
  await Deno.writeTextFile(path, `${JSON.stringify(results, null, 2)}\n`);
  console.log(
    `wrote ${relative(Deno.cwd(), path)}${RECORD ? " (recorded)" : " (pass --record to update the committed figures)"}`,
  );
  return path;
}

/**
 * The resident memory of process `pid`, in MB with one decimal (`ps -o rss=`).
 *
 * @example
 * ```ts
 * await rssMb(Deno.pid); // 42.7
 * ```
 */
export async function rssMb(pid: number): Promise<number> {
  const out = await new Deno.Command("ps", { args: ["-o", "rss=", "-p", String(pid)], stdout: "piped" }).output();
  return Math.round(Number(new TextDecoder().decode(out.stdout).trim()) / 1024 * 10) / 10;
}
