/**
 * `homed`: the entry point. It hands the command line to `cli/dispatch.ts`, with the module in `cli/` that runs each
 * command: `run` (default), `supervise`, `service`, `backup`, `restore`, `tracker`, `flags`, `chat`, `doctor`, `init`,
 * `mcp serve` and `weixin login` (`help` and `version` are answered there).
 *
 * @module
 */

import { type Commands, dispatch } from "./cli/dispatch.ts";
import { safeEnvReader } from "./config/load.ts";
import { initTarget } from "./flags.ts";

export { versionLine } from "./cli/help.ts";

/** Where `homed init` writes, which `homed flags --mode init` computes the rights for too. */
const initConfig = (flag: string | undefined) =>
  initTarget({ flag, cwd: Deno.cwd(), readEnv: safeEnvReader(new Set()) });

// Each command's module is loaded when that command runs: the daemon's start-up does not pay for the CLI clients,
// nor a client for the daemon.
const COMMANDS: Commands = new Map([
  ["run", async (line) => (await import("./cli/run.ts")).runCli(line)],
  ["supervise", async (line) => (await import("./cli/supervise.ts")).superviseCli(line)],
  ["service", async (line) => (await import("./cli/service.ts")).serviceCli(line)],
  ["backup", async (line) => (await import("./cli/backup_command.ts")).archiveCli(line, "backup")],
  ["restore", async (line) => (await import("./cli/backup_command.ts")).archiveCli(line, "restore")],
  ["tracker", async (line) => (await import("./cli/tracker_command.ts")).trackerCli(line)],
  ["flags", async (line) => (await import("./cli/flags.ts")).flagsCli(line, initConfig)],
  ["chat", async (line) => (await import("./cli/chat.ts")).chatCli(line)],
  ["doctor", async (line) => (await import("./cli/doctor.ts")).doctorCli(line)],
  ["init", async (line) => (await import("./cli/init.ts")).initCli(line, initConfig)],
  ["mcp", async (line) => (await import("./cli/mcp_command.ts")).mcpCli(line)],
  ["weixin", async (line) => (await import("./cli/weixin_login_command.ts")).weixinCli(line)],
]);

if (import.meta.main) await dispatch(Deno.args, COMMANDS);
