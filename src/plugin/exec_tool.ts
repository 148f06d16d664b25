/**
 * Exec tools: a plugin's program run with arguments filled from the call — argv only, never a shell. Each `{field}` in
 * an argument is replaced by that field of the call's arguments (text, number or boolean; a value starting with `-`
 * is refused, so an argument cannot turn into an option). The program runs with a scrubbed environment (`PATH`, a
 * UTF-8 locale, and the plugin's own `plugins.entries.<name>.env` / `apiKey`), under the call's deadline (its signal
 * kills it), with its output capped: beyond the cap it is stopped and the call fails saying so.
 *
 * @module
 */

import type { ExecHandler } from "./manifest.ts";

/**
 * The argv of one call, or a `TypeError` naming the field that cannot be used.
 *
 * @example
 * ```ts
 * fillArgv(["curl", "-s", "wttr.in/{city}?format=3"], { city: "Hangzhou" }); // ["curl", "-s", "wttr.in/Hangzhou?format=3"]
 * ```
 */
export function fillArgv(argv: readonly string[], args: Record<string, unknown>): string[] {
  return argv.map((part, index) =>
    index === 0 ? part : part.replace(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, field: string) => {
      const value = args[field];
      if (value === undefined) throw new TypeError(`argument "${field}" is missing`);
      if (typeof value !== "string" && typeof value !== "number" && typeof value !== "boolean") {
        throw new TypeError(`argument "${field}" must be text, a number or true/false, got ${JSON.stringify(value)}`);
      }
      const text = String(value);
      if (text.startsWith("-")) {
        throw new TypeError(`argument "${field}" may not start with "-", got ${JSON.stringify(text)}`);
      }
      if (text.includes("\0")) throw new TypeError(`argument "${field}" contains a NUL character`);
      return text;
    })
  );
}

/**
 * Runs the program; resolves to its standard output, or rejects naming the exit code and the end of its error output.
 *
 * @example
 * ```ts
 * await runExec({ argv: ["date"], maxOutputBytes: 65_536 }, {}, { PATH: "/usr/bin" }, AbortSignal.timeout(30_000));
 * // "Mon Nov 30 08:00:00 CST 2026\n"
 * ```
 */
export async function runExec(
  handler: ExecHandler,
  args: Record<string, unknown>,
  env: Record<string, string>,
  signal: AbortSignal,
): Promise<string> {
  const [program, ...rest] = fillArgv(handler.argv, args);
  const child = new Deno.Command(program!, {
    args: rest,
    env,
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    signal,
  }).spawn();
  const cap = handler.maxOutputBytes;
  let overflow = false;
  const collect = async (stream: ReadableStream<Uint8Array>, limit: number) => {
    const chunks: Uint8Array[] = [];
    let size = 0;
    for await (const chunk of stream) {
      if (size + chunk.length > limit) {
        chunks.push(chunk.subarray(0, limit - size));
        overflow = true;
        try {
          child.kill("SIGKILL");
        } catch { /* already gone */ }
        break;
      }
      chunks.push(chunk);
      size += chunk.length;
    }
    const out = new Uint8Array(chunks.reduce((sum, c) => sum + c.length, 0));
    let offset = 0;
    for (const c of chunks) {
      out.set(c, offset);
      offset += c.length;
    }
    return new TextDecoder().decode(out);
  };
  const [stdout, stderr, status] = await Promise.all([
    collect(child.stdout, cap),
    collect(child.stderr, cap),
    child.status,
  ]);
  if (overflow) throw new Error(`${program} wrote more than ${cap} bytes and was stopped`);
  if (signal.aborted) throw new Error(`${program} was stopped: ${String(signal.reason ?? "the call ended")}`);
  if (!status.success) {
    const tail = stderr.trim().split("\n").slice(-3).join(" / ");
    throw new Error(`${program} exited with code ${status.code}${tail ? `: ${tail}` : ""}`);
  }
  return stdout;
}
