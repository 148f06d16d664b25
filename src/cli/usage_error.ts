/**
 * `UsageError`: the command line asked for something homed cannot do as written — an unknown command, option or
 * action, a missing argument, a bad answer to a scripted `homed init`. It is its own class so that only these mean
 * "exit code 2": a built-in `TypeError` is a bug somewhere and is reported as one.
 *
 * @module
 */

/**
 * A problem with what was typed; its message says what and, where it helps, what to type instead.
 *
 * @example
 * ```ts
 * throw new UsageError('service: unknown action "instal"; allowed: install, uninstall, status, unit');
 * ```
 */
export class UsageError extends Error {
  override name = "UsageError";
}
