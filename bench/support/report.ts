import { cpus } from "node:os";

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
  const dirty =
    (await git("status", "--porcelain", "--untracked-files=no", "--", ".", ":(exclude)bench/*/results.json")) !== "";
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

/** Writes results as pretty JSON with a trailing newline. */
export async function writeResults(url: URL, results: Record<string, unknown>): Promise<void> {
  await Deno.writeTextFile(url, `${JSON.stringify(results, null, 2)}\n`);
}
