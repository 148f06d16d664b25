/**
 * The system message: `personal.md` byte for byte first, then labelled sections.
 *
 * @module
 */

/** One labelled block after the persona. */
export interface PromptSection {
  title: string;
  body: string;
}

/**
 * Builds the one system message. Empty sections are left out.
 *
 * @example
 * ```ts
 * buildSystemPrompt("# Alfred\n", [{ title: "Tools", body: "Use them." }]);
 * // "# Alfred\n\n\n## [homed] Tools\nUse them."
 * ```
 */
export function buildSystemPrompt(persona: string, sections: readonly PromptSection[]): string {
  const blocks = sections.filter((section) => section.body.trim() !== "")
    .map((section) => `## [homed] ${section.title}\n${section.body.trim()}`);
  return blocks.length ? `${persona}\n\n${blocks.join("\n\n")}` : persona;
}

/**
 * Tags a user message with where it came from and who said it.
 *
 * @example
 * ```ts
 * tagMessage("http", "alice", "Lights off"); // "[via http, from alice] Lights off"
 * ```
 */
export function tagMessage(source: string, sender: string, text: string): string {
  return `[via ${source}, from ${sender}] ${text}`;
}
