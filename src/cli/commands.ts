/**
 * How the README tells users to run homed, so every message that names a command names the same one.
 *
 * @module
 */

/** The pinned Deno, as the README runs it on a machine with only Node. */
export const DENO_COMMAND = "npx -y deno@2.9.6";

/**
 * The README's command for a deno task, with `HOMED_CONFIG=…` in front when a config other than the default
 * `config/homed.yaml` must be named.
 *
 * @example
 * ```ts
 * taskCommand("start"); // "npx -y deno@2.9.6 task start"
 * taskCommand("doctor", "/etc/homed/homed.yaml"); // "HOMED_CONFIG=/etc/homed/homed.yaml npx -y deno@2.9.6 task doctor"
 * ```
 */
export function taskCommand(task: string, configPath?: string): string {
  return `${configPath ? `HOMED_CONFIG=${configPath} ` : ""}${DENO_COMMAND} task ${task}`;
}
