/**
 * `homed doctor` as a child process with its own computed rights, for `homed init` to run right after writing the
 * config (init itself may only write the config's folder).
 *
 * @module
 */

import { type Layout, loadConfig, safeEnvReader } from "../config/load.ts";
import { selfCommand } from "../rights/self_command.ts";
import { envFilePath, parseEnvFile } from "../config/env_file.ts";

/** How long doctor may take (its LLM check alone waits up to 15 s). */
const DOCTOR_DEADLINE_MS = 30_000;

/**
 * Runs doctor on `configPath`; resolves to whether every check passed and what it printed.
 *
 * @example
 * ```ts
 * const { ok, output } = await doctorCommand("/etc/homed/homed.yaml", "repo");
 * ```
 */
export async function doctorCommand(configPath: string, layout: Layout): Promise<{ ok: boolean; output: string }> {
  // The config's secrets may live only in homed.env (init just wrote them): read it as the child's --env-file will.
  let fromFile: Record<string, string> = {};
  try {
    fromFile = parseEnvFile(await Deno.readTextFile(envFilePath(configPath)));
  } catch { /* no env file: the environment alone */ }
  const env = safeEnvReader(new Set());
  const loaded = await loadConfig({
    flag: configPath,
    readEnv: (name) => env(name) ?? fromFile[name],
    cwd: Deno.cwd(),
  });
  const tail = [...(layout === "standard" ? ["--standard-layout"] : []), "doctor", "--config", configPath];
  const [program, args] = selfCommand(loaded, "doctor", tail);
  const child = new Deno.Command(program, {
    args,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(DOCTOR_DEADLINE_MS),
  }).spawn();
  const { code, stdout, stderr } = await child.output();
  const output = new TextDecoder().decode(stdout) + new TextDecoder().decode(stderr);
  return {
    ok: code === 0,
    output: code === 143 || code === 137 ? `${output}doctor did not finish within 30 s` : output,
  };
}
