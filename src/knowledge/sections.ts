/**
 * A topic's `content.md` split into sections at its Markdown headings (outside fenced code), so search can point at
 * the part that answers.
 *
 * @module
 */

/** One section of a topic. */
export interface Section {
  /** Position in the file, from 0. */
  index: number;
  /** The heading text, or the topic name for text before the first heading. */
  heading: string;
  /** Heading and body, as written. */
  text: string;
}

/**
 * Splits Markdown into sections. Empty sections (a heading with nothing under it and no sub-heading text) are kept
 * only if they have a heading, so a file of headings still indexes.
 *
 * @example
 * ```ts
 * parseSections("# Cooking\n\n## Rice\n1 cup rice, 1.2 cups water", "cooking");
 * // [{ index: 0, heading: "Cooking", text: "# Cooking" },
 * //  { index: 1, heading: "Rice", text: "## Rice\n1 cup rice, 1.2 cups water" }]
 * ```
 */
export function parseSections(markdown: string, topic: string): Section[] {
  const sections: Section[] = [];
  let heading = topic;
  let lines: string[] = [];
  let fence: string | undefined;
  const flush = () => {
    const text = lines.join("\n").trim();
    if (text) sections.push({ index: sections.length, heading, text });
  };
  for (const line of markdown.replaceAll("\r\n", "\n").split("\n")) {
    const fenceMatch = /^\s*(```+|~~~+)/.exec(line);
    if (fenceMatch) fence = fence === undefined ? fenceMatch[1] : line.trim().startsWith(fence) ? undefined : fence;
    const headingMatch = fence === undefined ? /^(#{1,6})\s+(\S.*?)\s*#*\s*$/.exec(line) : null;
    if (headingMatch && !fenceMatch) {
      flush();
      heading = headingMatch[2]!;
      lines = [line];
    } else {
      lines.push(line);
    }
  }
  flush();
  return sections;
}
