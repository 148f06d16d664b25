/**
 * The parts of a homed installation — the data dir, knowledge, plugins, the config file and the persona — where they
 * live on this machine. Backup archives them; the change tracker watches all but the data dir.
 *
 * @module
 */

import type { LoadedConfig } from "./load.ts";

/** Where one part of a homed installation lives here. */
export interface HomePart {
  /** Its name (in a backup archive too) (`data`, `knowledge`, `plugins`, `config/homed.yaml`, `config/personal.md`). */
  name: string;
  /** The path on this machine. */
  path: string;
  /** A folder, or a single file. */
  kind: "dir" | "file";
}

/**
 * The parts of the homed installation `loaded` describes: what a backup holds and the change tracker watches.
 *
 * @example
 * ```ts
 * import { loadConfig } from "./load.ts";
 *
 * const loaded = await loadConfig({ readEnv: (name) => Deno.env.get(name), cwd: Deno.cwd() });
 * homeParts(loaded).map((root) => root.name);
 * // ["data", "knowledge", "plugins", "config/homed.yaml", "config/personal.md"] (no config/homed.yaml when
 * // homed runs on the embedded defaults)
 * ```
 */
export function homeParts(loaded: LoadedConfig): HomePart[] {
  const { config } = loaded;
  return [
    { name: "data", path: config.daemon.data_dir, kind: "dir" },
    { name: "knowledge", path: config.paths.knowledge, kind: "dir" },
    { name: "plugins", path: config.paths.plugins, kind: "dir" },
    ...(loaded.location.path ? [{ name: "config/homed.yaml", path: loaded.location.path, kind: "file" as const }] : []),
    { name: "config/personal.md", path: config.paths.personal, kind: "file" },
  ];
}
