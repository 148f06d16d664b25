/**
 * The tracker's one error that is the asker's, not the tree's: a path in none of the tracked parts. Its own file so
 * the parts' lookup (`tracked_parts.ts`) and the CLI (which answers it with exit code 2) share it without the
 * tracker's whole class.
 *
 * @module
 */

/** A path that is in none of the tracked parts: the asker named the wrong thing (the CLI answers with exit code 2). */
export class UntrackedPath extends TypeError {
  /**
   * @example
   * ```ts
   * throw new UntrackedPath('path: "etc/passwd" is not in a tracked part (knowledge, plugins)');
   * ```
   */
  constructor(message: string) {
    super(message);
    this.name = "UntrackedPath";
  }
}
