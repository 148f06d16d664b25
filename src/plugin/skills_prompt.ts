/**
 * The skills section of the system message, in OpenClaw's layout (`formatSkillsForPrompt`, `buildSkillsSection`): the
 * "Skills (mandatory)" instructions, then the `<available_skills>` XML block with `& < > " '` escaped, at most 150
 * skills and a character budget (`plugins.skills_prompt_chars`, 18,000 by default). Over budget, descriptions are
 * shortened and then dropped before any skill is, and a note says so. Skills with `disable-model-invocation` are left
 * out. The butler reads a skill with the `skill_read` tool rather than a file-system `read`. A skill's name, description
 * and location are the plugin's words, not homed's: each is kept on one line and its markers are escaped like message
 * text (`untrustedLine`; a location's control characters are shown as `\n`…), so a description spanning lines cannot
 * put a `## [homed] …` header, a `[via …]` tag or an `[end of homed reference]` line into the system message.
 *
 * @module
 */

import { escapeControl, escapeMarkers, untrustedLine } from "../text/untrusted.ts";
import type { Skill } from "./skill.ts";

/** Most skills listed, as OpenClaw. */
export const MAX_SKILLS_IN_PROMPT = 150;

const INSTRUCTIONS = [
  "Before replying: scan <available_skills> <description> entries.",
  "- If exactly one skill clearly applies: read it with `skill_read` (its <name>), then follow it.",
  "- If multiple could apply: choose the most specific one, then read/follow it.",
  "- If none clearly apply: do not read any skill.",
  "Constraints: never read more than one skill up front; only read after selecting.",
  "",
  "The following skills provide specialized instructions for specific tasks.",
  "Use the skill_read tool to load a skill's file when the task matches its description.",
  "When a skill file references a relative path, read it with skill_read and that path (it resolves against the skill directory).",
].join("\n");

/**
 * XML-escapes `& < > " '`.
 *
 * @example
 * ```ts
 * xmlEscape(`"a" & <b>`); // "&quot;a&quot; &amp; &lt;b&gt;"
 * ```
 */
export function xmlEscape(text: string): string {
  return text.replace(
    /[&<>"']/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&apos;" })[c]!,
  );
}

function entry(skill: Skill, description: string | undefined, location: string): string {
  return [
    "  <skill>",
    `    <name>${xmlEscape(untrustedLine(skill.name))}</name>`,
    ...(description === undefined ? [] : [`    <description>${xmlEscape(description)}</description>`]),
    `    <location>${xmlEscape(escapeMarkers(escapeControl(location)))}</location>`,
    "  </skill>",
  ].join("\n");
}

/**
 * The section's body for the eligible skills, within `budget` characters; `undefined` when none is offered.
 * `home`, when given, shortens locations under it to `~/…`.
 *
 * @example
 * ```ts
 * import type { Skill } from "./skill.ts";
 *
 * declare const weather: Skill;
 * skillsPromptBody([weather], { budget: 18_000 }); // "Before replying: …\n\n<available_skills>\n  <skill>…"
 * ```
 */
export function skillsPromptBody(
  skills: readonly Skill[],
  options: { budget: number; home?: string | undefined },
): string | undefined {
  const offered = skills.filter((skill) => !skill.disableModelInvocation).slice(0, MAX_SKILLS_IN_PROMPT);
  if (!offered.length) return undefined;
  const descriptions = new Map(offered.map((skill) => [skill, untrustedLine(skill.description)]));
  const location = (skill: Skill) =>
    options.home && skill.file.startsWith(`${options.home}/`)
      ? `~${skill.file.slice(options.home.length)}`
      : skill.file;
  const render = (cap: number | undefined, count: number, note: string) =>
    [
      INSTRUCTIONS,
      "",
      "<available_skills>",
      ...offered.slice(0, count).map((skill) =>
        entry(
          skill,
          cap === undefined ? descriptions.get(skill) : cap === 0 ? undefined : shorten(descriptions.get(skill)!, cap),
          location(skill),
        )
      ),
      "</available_skills>",
      ...(note ? [note] : []),
    ].join("\n");
  const full = render(undefined, offered.length, "");
  if (full.length <= options.budget) return full;
  for (const cap of [200, 100, 50, 0]) {
    const note = `(Descriptions ${cap ? `shortened to ${cap} characters` : "left out"} to fit the prompt budget.)`;
    const text = render(cap, offered.length, note);
    if (text.length <= options.budget) return text;
  }
  // Not even names and locations of all fit: as many skills as do.
  let count = offered.length - 1;
  const note = (n: number) => `(Only ${n} of ${offered.length} skills fit the prompt budget.)`;
  while (count > 0 && render(0, count, note(count)).length > options.budget) count--;
  return count ? render(0, count, note(count)) : undefined;
}

function shorten(text: string, cap: number): string {
  return text.length <= cap ? text : `${text.slice(0, cap - 1)}…`;
}
