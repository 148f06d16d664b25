/**
 * `homed help` and `homed version`: the usage text (also shown after a usage error) and the version line.
 *
 * @module
 */

import { COMMIT } from "../build_info.ts";
import { VERSION } from "../version.ts";

/** Every command with its options, and where the config is looked for. */
export const USAGE = `homed ${VERSION}: a 24/7 butler for one household

Usage: homed [--standard-layout] <command> [options]

Commands:
  run      Run the daemon (default)             [--config FILE]
  chat     Chat with a running daemon            [--config FILE] [--user NAME] [--message TEXT] [--url URL]
  mcp serve  homed as an MCP server on stdin/stdout  [--config FILE] [--url URL]
  weixin login  Log in to WeChat: show the QR code, wait for the scan, keep the token  [--config FILE]
  doctor   Check config, rights, data dir, LLM   [--config FILE]
  init     Ask for the LLM, key, LAN and time zone; write the config, persona and homed.env; run doctor
           [--config FILE (default config/homed.yaml)] [--force] [--provider deepseek|ollama|URL] [--model M] [--lan]
           [--port N] [--timezone ZONE]
  flags    Print the deno permission flags       [--config FILE] [--mode MODE] [--file ARCHIVE] [--unit-dir DIR]
  version  Print the version, commit and Deno version
  supervise  Run the daemon and restart it when it crashes (no systemd)  [--config FILE] [--pid-file FILE]
  service  install|uninstall|status|unit — the systemd unit     [--config FILE] [--unit-dir DIR]
  backup   [FILE|-|--file FILE] — data, knowledge, plugins, config and persona in one .tar.gz (default data/backups/)
  tracker  status|diff|commit|revert [PATH…] [--all] — what changed in knowledge, plugins, config, persona
  restore  FILE|-|--file FILE|--latest — check a backup whole, then put it in place (homed stopped; the old files are
           kept); --latest: the newest verified automatic backup in backup.dir

Config lookup: --config, then $HOMED_CONFIG, then config/homed.yaml (with --standard-layout:
/etc/homed/homed.yaml and data in /var/lib/homed), then the embedded defaults.`;

/**
 * `homed version`: homed's version, the commit it was built from, and the Deno, V8 and TypeScript it runs on.
 *
 * @example
 * ```ts
 * versionLine(); // "homed 0.1.0 (commit dev; deno 2.9.6, v8 15.0.245.2, typescript 6.0.3)"
 * ```
 */
export function versionLine(): string {
  const { deno, v8, typescript } = Deno.version;
  return `homed ${VERSION} (commit ${COMMIT}; deno ${deno}, v8 ${v8}, typescript ${typescript})`;
}
