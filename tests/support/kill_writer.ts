import assert from "node:assert/strict";

/**
 * Starts a writer script as `deno run` with access to `dir` only, its arguments `dir` and `start`; its stdout and
 * stderr piped, its stdin closed.
 *
 * @example
 * ```ts
 * const WRITER = new URL("./durable_writer.ts", import.meta.url).pathname;
 * const dir = await Deno.makeTempDir({ prefix: "homed-crash-" });
 * const child = spawnWriter(WRITER, dir, 0);
 * child.kill("SIGKILL");
 * await child.status;
 * ```
 */
export function spawnWriter(writer: string, dir: string, start: number): Deno.ChildProcess {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", "--no-prompt", `--allow-read=${dir}`, `--allow-write=${dir}`, writer, dir, String(start)],
    stdout: "piped",
    stderr: "piped",
    stdin: "null",
  }).spawn();
}

/**
 * Runs a writer script (it prints `ack <n>` after each durable write, from `start` on) with access to `dir` only,
 * kills it with SIGKILL after `killAfter` acknowledgements, and returns the last number it acknowledged — the crash
 * tests' way to stop a process mid-write.
 *
 * @example
 * ```ts
 * const WRITER = new URL("./memory_writer.ts", import.meta.url).pathname;
 * const dir = await Deno.makeTempDir({ prefix: "homed-crash-" });
 * const lastAcked = await runAndKill(WRITER, dir, 0, 7); // 6: it acknowledged 0 to 6, then died
 * ```
 */
export async function runAndKill(writer: string, dir: string, start: number, killAfter: number): Promise<number> {
  const child = spawnWriter(writer, dir, start);
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  let lastAcked = start - 1;
  let acks = 0;
  reading: for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value;
    for (let newline = buffer.indexOf("\n"); newline !== -1; newline = buffer.indexOf("\n")) {
      const match = /^ack (\d+)$/.exec(buffer.slice(0, newline));
      buffer = buffer.slice(newline + 1);
      if (!match) continue;
      lastAcked = Number(match[1]);
      if (++acks >= killAfter) {
        child.kill("SIGKILL");
        break reading;
      }
    }
  }
  await reader.cancel().catch(() => {});
  const status = await child.status;
  const stderr = new TextDecoder().decode(await new Response(child.stderr).arrayBuffer());
  assert.equal(status.signal, "SIGKILL", `the writer ended on its own: ${stderr}`);
  return lastAcked;
}
