/**
 * A topic's `content.md` split into sections at its Markdown headings (outside fenced code), so search can point at
 * the part that answers; and the marker that tells what the butler learned itself (`knowledge_create`) from what
 * people wrote.
 *
 * The marker is an HTML comment line, `<!-- learned by homed 2026-12-01 -->`: invisible where Markdown is rendered,
 * kept by any editor, and written by homed directly above the heading of each section it adds. A marker marks the
 * section whose heading follows it (only blank lines between); one anywhere else marks the section it stands in — so
 * a marker moved under its heading by hand still counts. Deleting the line makes the section the household's own.
 *
 * @module
 */

/** One section of a topic. */
export interface Section {
  /** Position in the file, from 0. */
  index: number;
  /** The heading text, or the topic name for text before the first heading. */
  heading: string;
  /** Heading and body, as written, without learned markers. */
  text: string;
  /** The butler wrote it itself (`knowledge_create`): a learned marker goes with it. */
  learned: boolean;
}

const MARKER = /^\s*<!--\s*learned by homed\b[^\n]*?-->\s*$/i;
const FENCE = /^\s*(```+|~~~+)/;
const HEADING = /^(#{1,6})\s+(\S.*?)\s*#*\s*$/;

/**
 * The marker line for a section the butler learned on `date` (a local `YYYY-MM-DD`).
 *
 * @example
 * ```ts
 * learnedMarker("2026-12-01"); // "<!-- learned by homed 2026-12-01 -->"
 * ```
 */
export function learnedMarker(date: string): string {
  return `<!-- learned by homed ${date.replace(/-->|[\r\n]/g, "")} -->`;
}

/**
 * Whether a line is a learned marker (case and spacing aside).
 *
 * @example
 * ```ts
 * isLearnedMarker("<!-- learned by homed 2026-12-01 -->"); // true
 * isLearnedMarker("<!-- a note -->"); // false
 * ```
 */
export function isLearnedMarker(line: string): boolean {
  return MARKER.test(line);
}

/**
 * Puts the learned marker of `date` above every heading of `markdown` (outside fenced code) that has none yet, so
 * each section the butler adds — its sub-headings too — is marked.
 *
 * @example
 * ```ts
 * markLearned("## Rice\n\n1 cup rice, 1.2 cups water\n", "2026-12-01");
 * // "<!-- learned by homed 2026-12-01 -->\n## Rice\n\n1 cup rice, 1.2 cups water\n"
 * ```
 */
export function markLearned(markdown: string, date: string): string {
  const marker = learnedMarker(date);
  const out: string[] = [];
  let fence: string | undefined;
  for (const line of markdown.split("\n")) {
    const fenceMatch = FENCE.exec(line);
    if (fenceMatch) fence = fence === undefined ? fenceMatch[1] : line.trim().startsWith(fence) ? undefined : fence;
    const heading = fence === undefined && !fenceMatch && HEADING.test(line.replace(/\r$/, ""));
    if (heading && !isLearnedMarker(out.findLast((previous) => previous.trim() !== "") ?? "")) out.push(marker);
    out.push(line);
  }
  return out.join("\n");
}

/**
 * Splits Markdown into sections. Empty sections (a heading with nothing under it and no sub-heading text) are kept
 * only if they have a heading, so a file of headings still indexes. Learned markers are left out of the text and
 * set `learned` instead (see the module's description).
 *
 * @example
 * ```ts
 * parseSections("# Cooking\n\n<!-- learned by homed 2026-12-01 -->\n## Rice\n1 cup rice, 1.2 cups water", "cooking");
 * // [{ index: 0, heading: "Cooking", text: "# Cooking", learned: false },
 * //  { index: 1, heading: "Rice", text: "## Rice\n1 cup rice, 1.2 cups water", learned: true }]
 * ```
 */
export function parseSections(markdown: string, topic: string): Section[] {
  const sections: Section[] = [];
  let heading = topic;
  let lines: string[] = [];
  let learned = false;
  /** A marker seen and not yet placed: it goes to the next heading, or else to the section it stands in. */
  let pending = false;
  let fence: string | undefined;
  const flush = () => {
    const text = lines.join("\n").trim();
    if (text) sections.push({ index: sections.length, heading, text, learned });
  };
  for (const line of markdown.replaceAll("\r\n", "\n").split("\n")) {
    const fenceMatch = FENCE.exec(line);
    if (fenceMatch) fence = fence === undefined ? fenceMatch[1] : line.trim().startsWith(fence) ? undefined : fence;
    const outside = fence === undefined && !fenceMatch;
    if (outside && isLearnedMarker(line)) {
      pending = true;
      continue;
    }
    const headingMatch = outside ? HEADING.exec(line) : null;
    if (headingMatch) {
      flush();
      heading = headingMatch[2]!;
      lines = [line];
      learned = pending;
      pending = false;
      continue;
    }
    if (pending && line.trim() !== "") {
      learned = true;
      pending = false;
    }
    lines.push(line);
  }
  if (pending) learned = true;
  flush();
  return sections;
}
