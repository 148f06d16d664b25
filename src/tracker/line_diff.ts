/**
 * A unified diff of two texts (`diff -u` style hunks with three lines of context), for `homed tracker diff`.
 * Longest-common-subsequence on lines; beyond {@link MAX_DIFF_LINES} lines a side it says so instead of diffing.
 *
 * @module
 */

/** Texts longer than this (lines) are not diffed line by line. */
export const MAX_DIFF_LINES = 4_000;

type Op = { kind: " " | "-" | "+"; line: string; a: number; b: number };

function operations(a: string[], b: string[]): Op[] {
  const n = a.length, m = b.length;
  // lengths[i][j]: LCS of a[i..] and b[j..], in one flat array.
  const lengths = new Uint32Array((n + 1) * (m + 1));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lengths[i * (m + 1) + j] = a[i] === b[j]
        ? lengths[(i + 1) * (m + 1) + j + 1]! + 1
        : Math.max(lengths[(i + 1) * (m + 1) + j]!, lengths[i * (m + 1) + j + 1]!);
    }
  }
  const ops: Op[] = [];
  let i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] === b[j]) ops.push({ kind: " ", line: a[i]!, a: i++, b: j++ });
    else if (i < n && (j === m || lengths[(i + 1) * (m + 1) + j]! >= lengths[i * (m + 1) + j + 1]!)) {
      // Removals before additions, as diff -u prints them.
      ops.push({ kind: "-", line: a[i]!, a: i++, b: j });
    } else ops.push({ kind: "+", line: b[j]!, a: i, b: j++ });
  }
  return ops;
}

function splitLines(text: string): string[] {
  if (text === "") return [];
  const lines = text.split("\n");
  if (lines.at(-1) === "") lines.pop();
  return lines;
}

/** Options of {@link unifiedDiff}. */
export interface DiffOptions {
  /** Lines of context around each change (3). */
  context?: number;
  /** How a line of either text is shown (as it is); lines are compared as they are. */
  show?: (line: string) => string;
}

/**
 * The hunks that turn `before` into `after`, under `--- a/<name>` / `+++ b/<name>` headers; empty when equal.
 * `name` is printed as given.
 *
 * @example
 * ```ts
 * unifiedDiff("knowledge/tea/content.md", "a\nb\n", "a\nc\n");
 * // "--- a/knowledge/tea/content.md\n+++ b/knowledge/tea/content.md\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n"
 * ```
 */
export function unifiedDiff(name: string, before: string, after: string, options: DiffOptions = {}): string {
  const { context = 3, show = (line: string) => line } = options;
  if (before === after) return "";
  const a = splitLines(before), b = splitLines(after);
  const header = `--- a/${name}\n+++ b/${name}\n`;
  if (a.length > MAX_DIFF_LINES || b.length > MAX_DIFF_LINES) {
    return `${header}@@ ${a.length} → ${b.length} lines: too long to diff line by line @@\n`;
  }
  const ops = operations(a, b);
  const changed = ops.map((op, index) => op.kind !== " " ? index : -1).filter((index) => index >= 0);
  let out = header;
  let at = 0;
  while (at < changed.length) {
    const start = Math.max(0, changed[at]! - context);
    let end = Math.min(ops.length, changed[at]! + context + 1);
    while (at + 1 < changed.length && changed[at + 1]! - context <= end) {
      end = Math.min(ops.length, changed[++at]! + context + 1);
    }
    at++;
    const hunk = ops.slice(start, end);
    const first = hunk[0]!;
    const aCount = hunk.filter((op) => op.kind !== "+").length;
    const bCount = hunk.filter((op) => op.kind !== "-").length;
    out += `@@ -${aCount ? first.a + 1 : first.a},${aCount} +${bCount ? first.b + 1 : first.b},${bCount} @@\n`;
    out += hunk.map((op) => `${op.kind}${show(op.line)}\n`).join("");
  }
  if (!before.endsWith("\n") && before !== "") out += "\\ No newline at end of the old file\n";
  if (!after.endsWith("\n") && after !== "") out += "\\ No newline at end of the new file\n";
  return out;
}
