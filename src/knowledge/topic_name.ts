/**
 * Topic names are folder names under `knowledge/`, chosen by the LLM or a user: they must never reach outside it.
 *
 * @module
 */

/** Longest topic name, in characters. */
export const MAX_TOPIC_CHARS = 64;
const ALLOWED = /^[\p{L}\p{N}][\p{L}\p{N}_-]*$/u;

/**
 * Why `name` is not a valid topic, or `undefined` when it is. Valid: 1–64 letters (any script), digits, `_` and
 * `-`, starting with a letter or digit.
 *
 * @example
 * ```ts
 * topicProblem("cooking"); // undefined
 * topicProblem("../etc"); // 'Topic name "../etc" is not allowed: it contains ".."'
 * topicProblem("a/b"); // 'Topic name "a/b" is not allowed: it contains a path separator'
 * ```
 */
export function topicProblem(name: unknown): string | undefined {
  if (typeof name !== "string") return `Topic name must be a string, got ${JSON.stringify(name)}`;
  const shown = JSON.stringify(name.length > 80 ? `${name.slice(0, 80)}…` : name);
  const reject = (why: string) => `Topic name ${shown} is not allowed: ${why}`;
  if (name === "") return reject("it is empty");
  if ([...name].length > MAX_TOPIC_CHARS) return reject(`it is longer than ${MAX_TOPIC_CHARS} characters`);
  if (name.startsWith("/") || /^[A-Za-z]:/.test(name)) return reject("it is an absolute path");
  if (name.includes("..")) return reject('it contains ".."');
  if (/[/\\]/.test(name)) return reject("it contains a path separator");
  if (name.startsWith(".")) return reject("it is a hidden name (starts with a dot)");
  // deno-lint-ignore no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(name)) return reject("it contains a control character");
  if (/\s/.test(name)) return reject("it contains white space");
  if (!ALLOWED.test(name)) {
    return reject("allowed are letters, digits, _ and -, starting with a letter or digit");
  }
  return undefined;
}
