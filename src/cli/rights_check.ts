/**
 * The rights check before a command: what the config needs that this process was not granted ends homed, refused,
 * with the flags to run it with instead (and why `deno task` cannot pass some paths).
 *
 * @module
 */

import type { LoadedConfig } from "../config/load.ts";
import {
  missingPermissions,
  type PermissionMode,
  requiredPermissions,
  unsplittablePaths,
} from "../rights/permissions.ts";
import { nameServerRights, readResolvConf } from "../config/name_servers.ts";
import { taskCommand } from "./commands.ts";
import { EXIT_REFUSED, fail } from "./output.ts";

/**
 * Exits, refused, unless homed has the `rights` (by default what `mode` needs for `loaded`) and may read the
 * variables in `denied`.
 *
 * @example
 * ```ts
 * import { loadConfig } from "../config/load.ts";
 *
 * const loaded = await loadConfig({ flag: "/etc/homed/homed.yaml", readEnv: (name) => Deno.env.get(name), cwd: "/" });
 * checkRights(loaded, "tracker", new Set());
 * ```
 */
export function checkRights(
  loaded: LoadedConfig,
  mode: PermissionMode,
  denied: Set<string>,
  rights = requiredPermissions(loaded, mode),
): void {
  const missing = missingPermissions(rights);
  for (const name of denied) {
    const line = `env access to ${name}`;
    if (!missing.includes(line)) missing.push(line);
  }
  // The name servers come from /etc/resolv.conf, which DHCP or a VPN may change after the flags were computed: a
  // household box must still start (pictures from QQ's hosts fail, saying why, until the flags are made again).
  const nameServers = new Set(nameServerRights(readResolvConf()).map((right) => `net access to ${right}`));
  const changed = missing.filter((line) => nameServers.has(line));
  if (changed.length) {
    console.error(
      `homed: warning: /etc/resolv.conf names name servers homed was not granted (${
        changed.map((line) => line.replace("net access to ", "")).join(", ")
      }): pictures and voice notes from host names cannot be fetched until homed runs with the flags ` +
        `\`homed flags\` prints now (re-run \`homed service install\` under systemd)`,
    );
  }
  reportMissing(missing.filter((line) => !nameServers.has(line)), mode, unsplittablePaths(rights));
}

/**
 * Exits, refused, if `missing` names any right, saying how to run `mode` with them; `spaced` are the paths that
 * cannot pass through `deno task`.
 *
 * @example
 * ```ts
 * reportMissing(["write access to /srv/homed/config"], "init", []);
 * ```
 */
export function reportMissing(missing: string[], mode: PermissionMode, spaced: string[]): void {
  if (!missing.length) return;
  fail(
    [
      `homed lacks rights its config needs: ${missing.join("; ")}.`,
      `Run it with the flags \`homed flags --mode ${mode}${
        mode === "backup" || mode === "restore" ? " --file ARCHIVE" : ""
      }\` prints (${taskCommand(mode === "run" ? "start" : mode)}`,
      "does this; with deno task, name the config through HOMED_CONFIG rather than --config).",
      spaced.length ? `Paths with spaces or commas cannot pass through deno task: ${spaced.join(", ")}.` : "",
    ].filter(Boolean).join("\n"),
    EXIT_REFUSED,
  );
}
