/**
 * `homed supervise [--pid-file FILE]`: runs the daemon as a child and starts it again when it crashes, for machines
 * without systemd; exits with the code the supervisor ends with.
 *
 * @module
 */

import { join } from "node:path";
import { setupLogging, stopLogging } from "../log/logging.ts";
import { superviseDaemon } from "../supervise/supervise_command.ts";
import type { CommandLine } from "./command_line.ts";
import { loadCommandConfig } from "./command_config.ts";
import { reportFailure } from "./output.ts";
import { checkRights } from "./rights_check.ts";

/**
 * Supervises the daemon of this config until it is told to stop; the pid file defaults to `<data dir>/homed.pid`.
 *
 * @example
 * ```ts
 * import { parseCommandLine } from "./command_line.ts";
 *
 * await superviseCli(parseCommandLine(["supervise", "--config", "/etc/homed/homed.yaml"]));
 * ```
 */
export async function superviseCli(line: CommandLine): Promise<void> {
  const { options, layout } = line;
  const { loaded, denied } = await loadCommandConfig(options.config, layout);
  checkRights(loaded, "supervise", denied);
  setupLogging({ level: loaded.config.log.level, format: loaded.config.log.format, secrets: [] });
  const code = await reportFailure("supervise: ", async () => {
    try {
      return await superviseDaemon({
        loaded,
        layout,
        config: options.config,
        pidFile: options["pid-file"] ?? join(loaded.config.daemon.data_dir, "homed.pid"),
      });
    } finally {
      // Before homed exits, failed or not, so the log is flushed and closed.
      stopLogging();
    }
  });
  return Deno.exit(code);
}
