/**
 * The rights the skills in the plugin folders need for their gates to be checked: reading each `requires.bins` /
 * `anyBins` name in each PATH folder (that file only, not the folder), and the `requires.env` variables and PATH.
 * `homed flags` adds them, so a skill is judged on what is really there; a right homed was not started with is
 * reported by gating ("restart with the flags `homed flags` prints"), never granted silently.
 *
 * @module
 */

import { join } from "node:path";
import type { Config } from "../config/schema.ts";
import { discoverSkills } from "./discovery.ts";

/**
 * The extra read and env rights of the skills found under the config's plugin folders.
 *
 * @example
 * ```ts
 * import { loadConfig } from "../config/load.ts";
 *
 * const readEnv = (name: string) => Deno.env.get(name);
 * const { config } = await loadConfig({ flag: "/etc/homed/homed.yaml", readEnv, cwd: "/" });
 * await pluginRights(config, readEnv); // { read: ["/usr/local/bin/curl", "/usr/bin/curl", …], env: ["PATH"] }
 * ```
 */
export async function pluginRights(
  config: Config,
  readEnv: (name: string) => string | undefined,
): Promise<{ read: string[]; env: string[] }> {
  const { skills } = await discoverSkills([
    ...config.plugins.extra_dirs.map((dir) => ({ dir, source: "extra" })),
    { dir: config.paths.plugins, source: "plugins" },
  ]);
  const bins = new Set<string>();
  const env = new Set<string>();
  for (const { skill } of skills) {
    for (const bin of [...skill.gates?.bins ?? [], ...skill.gates?.anyBins ?? []]) {
      if (/^[\w.+-]+$/.test(bin)) bins.add(bin);
    }
    for (const name of skill.gates?.env ?? []) if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) env.add(name);
  }
  if (!bins.size && !env.size) return { read: [], env: [] };
  const path = (readEnv("PATH") ?? "").split(":").filter((dir) => dir.startsWith("/"));
  return {
    read: [...bins].flatMap((bin) => path.map((dir) => join(dir, bin))),
    env: ["PATH", ...env],
  };
}
