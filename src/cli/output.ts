/**
 * How a command ends on the terminal: results on standard output, a failure as one `homed: …` line on standard error
 * with the exit code its kind maps to. `exitCodeOf` is the one place that says which errors are usage errors.
 *
 * @module
 */

import { UsageError } from "./usage_error.ts";

/** A command ran and failed. */
export const EXIT_FAILED = 1;
/** Nothing ran: the command line, the config or homed's rights were wrong. */
export const EXIT_REFUSED = 2;

const encoder = new TextEncoder();

/**
 * Writes `text` to standard output as it is (synchronously, so it is out before any exit).
 *
 * @example
 * ```ts
 * print("Committed 2 changes.\n");
 * ```
 */
export function print(text: string): void {
  Deno.stdout.writeSync(encoder.encode(text));
}

/**
 * Ends homed: `homed: <message>` on standard error, then exit with `code`.
 *
 * @example
 * ```ts
 * fail("/srv/homed/config/homed.yaml already exists; pass --force to overwrite it", EXIT_FAILED);
 * ```
 */
export function fail(message: string, code: number): never {
  Deno.stderr.writeSync(encoder.encode(`homed: ${message}\n`));
  return Deno.exit(code);
}

/**
 * The exit code a command's error ends homed with: a {@link UsageError} is refused (2); anything else, a built-in
 * `TypeError` included, is a failure (1).
 *
 * @example
 * ```ts
 * import { UsageError } from "./usage_error.ts";
 *
 * exitCodeOf(new UsageError("restore: name the archive")); // 2
 * exitCodeOf(new TypeError("Cannot read properties of undefined")); // 1
 * ```
 */
export function exitCodeOf(error: unknown): number {
  return error instanceof UsageError ? EXIT_REFUSED : EXIT_FAILED;
}

/**
 * Runs a command's work; if it throws, ends homed with `homed: <prefix><message>` and the error's exit code
 * ({@link exitCodeOf}).
 *
 * @example
 * ```ts
 * const text = await reportFailure("tracker: ", () => Promise.resolve("No changes.\n"));
 * ```
 */
export async function reportFailure<T>(prefix: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    return fail(`${prefix}${error instanceof Error ? error.message : String(error)}`, exitCodeOf(error));
  }
}
