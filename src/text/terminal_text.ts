/**
 * People's text — file names, link targets, file contents — printed on the owner's terminal by a command.
 *
 * @module
 */

import { escapeControl } from "./untrusted.ts";

/** Unicode's invisible direction marks and overrides, and its line and paragraph separators. */
const FORMATTING = /[\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/**
 * {@link escapeControl}, and the bidirectional overrides and marks and the Unicode line separators shown as `\u202e`…
 * too: a value printed on a terminal can neither move the cursor, clear the screen or set the title, nor start a
 * forged line, nor show its characters in another order than they are.
 *
 * @example
 * ```ts
 * escapeForTerminal("notes\u001b[2J\n  deleted  x\u202e.md"); // "notes\\u001b[2J\\n  deleted  x\\u202e.md"
 * ```
 */
export function escapeForTerminal(text: string): string {
  return escapeControl(text).replace(FORMATTING, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`);
}
