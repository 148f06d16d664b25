/**
 * `homed <command>`: reads the command line, answers `help` and `version`, and runs the named command. This is the one
 * place a {@link UsageError} becomes exit code 2 with its message; any other error is left to the command (which
 * reports it with exit code 1) or stays uncaught (exit code 1, with its stack): a built-in `TypeError` is a bug,
 * never a usage error.
 *
 * @module
 */

import { type CommandLine, parseCommandLine } from "./command_line.ts";
import { USAGE, versionLine } from "./help.ts";
import { exitCodeOf, fail, print } from "./output.ts";
import { UsageError } from "./usage_error.ts";

/** The commands by name, each given the command line it was named on. */
export type Commands = ReadonlyMap<string, (line: CommandLine) => Promise<void>>;

/**
 * Runs the command `argv` names (`run` when none is) from `commands`; an unknown one is a usage error.
 *
 * @example
 * ```ts
 * const commands: Commands = new Map([["hello", () => Promise.resolve(console.log("Hello"))]]);
 * await dispatch(["hello"], commands);
 * ```
 */
export async function dispatch(argv: string[], commands: Commands): Promise<void> {
  try {
    const line = parseCommandLine(argv);
    if (line.options.help || line.command === "help") return print(`${USAGE}\n`);
    if (line.options.version || line.command === "version") return print(`${versionLine()}\n`);
    const command = commands.get(line.command);
    if (!command) throw new UsageError(`unknown command ${JSON.stringify(line.command)}\n\n${USAGE}`);
    await command(line);
  } catch (error) {
    if (error instanceof UsageError) fail(error.message, exitCodeOf(error));
    throw error;
  }
}
