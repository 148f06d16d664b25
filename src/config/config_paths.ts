/**
 * Where a config's paths point: the two layouts (the repository's, and the standard one of the compiled binary under
 * systemd, whose state lives in `/var/lib/homed`), and every relative path of a loaded config made absolute against
 * the config file's folder — so a config in `/etc/homed` is self-contained — or, for the embedded defaults, the
 * working directory.
 *
 * @module
 */

import { dirname, isAbsolute, join, resolve } from "node:path";
import type { Config } from "./schema.ts";

/**
 * Where homed looks when no config is named. `repo`: `config/homed.yaml` under the working directory (deno task).
 * `standard`: `/etc/homed/homed.yaml`, with data in `/var/lib/homed` (the compiled binary, systemd).
 */
export type Layout = "repo" | "standard";

/** The standard layout's places. */
export const STANDARD_LAYOUT = { configFile: "/etc/homed/homed.yaml", dataDir: "/var/lib/homed" } as const;

/**
 * Resolves `config`'s paths in place (with the standard layout's defaults for what the file, by its `explicitKeys`,
 * leaves unset) and returns the folder they were resolved against: the config file's (`file`), else the standard
 * layout's config folder, else `cwd`.
 *
 * @example
 * ```ts
 * import { configSchema } from "./schema.ts";
 *
 * const config = configSchema.parse({});
 * placePaths(config, { file: "/etc/homed/homed.yaml", layout: "repo", cwd: "/", explicitKeys: new Set() });
 * // "/etc/homed"; config.daemon.data_dir is now "/etc/homed/data"
 * ```
 */
export function placePaths(
  config: Config,
  where: { file: string | undefined; layout: Layout | undefined; cwd: string; explicitKeys: ReadonlySet<string> },
): string {
  const { explicitKeys } = where;
  const standard = where.layout === "standard";
  const baseDir = where.file ? dirname(where.file) : standard ? dirname(STANDARD_LAYOUT.configFile) : where.cwd;
  if (standard) {
    // State and what the butler learns or is given live in /var/lib/homed; /etc/homed holds only what people edit.
    if (!explicitKeys.has("daemon.data_dir")) config.daemon.data_dir = STANDARD_LAYOUT.dataDir;
    if (!explicitKeys.has("paths.knowledge")) config.paths.knowledge = join(STANDARD_LAYOUT.dataDir, "knowledge");
    if (!explicitKeys.has("paths.plugins")) config.paths.plugins = join(STANDARD_LAYOUT.dataDir, "plugins");
  }
  const absolute = (path: string) => isAbsolute(path) ? path : resolve(baseDir, path);
  config.daemon.data_dir = absolute(config.daemon.data_dir);
  config.paths.personal = absolute(config.paths.personal);
  config.paths.knowledge = absolute(config.paths.knowledge);
  config.paths.plugins = absolute(config.paths.plugins);
  config.paths.intents = absolute(config.paths.intents);
  // `builtin:<name>` is an embedded adapter, not a path.
  if (config.llm.adapter !== "" && !config.llm.adapter.startsWith("builtin:")) {
    config.llm.adapter = absolute(config.llm.adapter);
  }
  for (const fallback of config.llm.fallbacks) {
    if (fallback.adapter !== "" && !fallback.adapter.startsWith("builtin:")) {
      fallback.adapter = absolute(fallback.adapter);
    }
  }
  config.plugins.extra_dirs = config.plugins.extra_dirs.map(absolute);
  // Automatic backups: in the data dir unless a folder (ideally on another disk) is named.
  config.backup.dir = config.backup.dir === "" ? join(config.daemon.data_dir, "backups") : absolute(config.backup.dir);
  const overlay = config.tracker.overlay;
  if (overlay) {
    config.tracker.overlay = {
      mount: absolute(overlay.mount),
      upper: absolute(overlay.upper),
      lower: overlay.lower.map(absolute),
    };
  }
  return baseDir;
}
