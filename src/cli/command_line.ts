/**
 * The command line, read: the layout (`--standard-layout` first), the command (`run` when none is named), a
 * command's leading word (`service install`, `backup FILE|-`, `restore FILE|-`), the options every command shares
 * one list of, and `tracker`'s action and paths. Anything it cannot read is a {@link UsageError} followed by the
 * usage text.
 *
 * @module
 */

import { parseArgs } from "node:util";
import type { Layout } from "../config/load.ts";
import { USAGE } from "./help.ts";
import { UsageError } from "./usage_error.ts";

/** The options, as given; each command reads the ones it takes. */
export interface CommandOptions {
  config?: string | undefined;
  user?: string | undefined;
  message?: string | undefined;
  url?: string | undefined;
  mode?: string | undefined;
  force?: boolean | undefined;
  "pid-file"?: string | undefined;
  "unit-dir"?: string | undefined;
  file?: string | undefined;
  provider?: string | undefined;
  model?: string | undefined;
  lan?: boolean | undefined;
  port?: string | undefined;
  timezone?: string | undefined;
  all?: boolean | undefined;
  /** `restore --latest`: the newest verified automatic backup in `backup.dir`. */
  latest?: boolean | undefined;
  help?: boolean | undefined;
  version?: boolean | undefined;
}

/** What {@link parseCommandLine} read. */
export interface CommandLine {
  layout: Layout;
  command: string;
  /** The word after `service` (its action) or after `backup`/`restore` (the archive, `-` for stdin/stdout); else "". */
  action: string;
  options: CommandOptions;
  /** `tracker`'s action and paths (no other command takes positionals). */
  positionals: string[];
}

/**
 * Where `homed init` writes its config for a `--config` (or none): `src/flags.ts` decides, a level above `cli/`, so
 * `main.ts` hands it to the commands that need it.
 */
export type InitTarget = (flag: string | undefined) => string;

/**
 * Reads `argv` (homed's arguments, without the program).
 *
 * @example
 * ```ts
 * const line = parseCommandLine(["service", "status", "--config", "/etc/homed/homed.yaml"]);
 * // { layout: "repo", command: "service", action: "status", options: { config: "/etc/homed/homed.yaml" }, positionals: [] }
 * ```
 */
export function parseCommandLine(argv: string[]): CommandLine {
  let layout: Layout = "repo";
  if (argv[0] === "--standard-layout") {
    layout = "standard";
    argv = argv.slice(1);
  }
  const command = argv[0] && !argv[0].startsWith("-") ? argv[0] : "run";
  let rest = argv[0] === command ? argv.slice(1) : argv;
  // `service` takes an action word first: homed service install|uninstall|status|unit (`mcp serve`, `weixin login`).
  let action = "";
  if ((command === "service" || command === "mcp" || command === "weixin") && rest[0] && !rest[0].startsWith("-")) {
    [action, rest] = [rest[0], rest.slice(1)];
  }
  // `backup` and `restore` take the archive first; `-` is standard output or input.
  if ((command === "backup" || command === "restore") && rest[0] && (rest[0] === "-" || !rest[0].startsWith("-"))) {
    [action, rest] = [rest[0], rest.slice(1)];
  }
  try {
    const { values, positionals } = parseArgs({
      args: rest,
      options: {
        config: { type: "string" },
        user: { type: "string" },
        message: { type: "string" },
        url: { type: "string" },
        mode: { type: "string" },
        force: { type: "boolean" },
        "pid-file": { type: "string" },
        "unit-dir": { type: "string" },
        file: { type: "string" },
        provider: { type: "string" },
        model: { type: "string" },
        lan: { type: "boolean" },
        port: { type: "string" },
        timezone: { type: "string" },
        all: { type: "boolean" },
        latest: { type: "boolean" },
        help: { type: "boolean", short: "h" },
        version: { type: "boolean" },
      },
      strict: true,
      // `tracker` takes an action word, then the paths it applies to.
      allowPositionals: command === "tracker",
    });
    return { layout, command, action, options: values, positionals };
  } catch (error) {
    throw new UsageError(`${(error as Error).message}\n\n${USAGE}`, { cause: error });
  }
}
