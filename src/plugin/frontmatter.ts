/**
 * SKILL.md frontmatter as OpenClaw reads it (`src/markdown/frontmatter.ts`): line endings normalised; the block
 * starts with `---` at byte 0 and ends at the first `\n---`; it is read by a line parser (`key: value`, indented
 * continuation lines, quotes stripped) and by YAML, and merged — YAML wins, except that a line-parsed value starting
 * with `{` or `[` wins (JSON or JSON5 written inline), and so does a line-parsed string where YAML made an object out of
 * an unquoted colon. Every value ends up a string: objects become JSON text.
 *
 * @module
 */

import { parse as parseYaml, YAMLError } from "yaml";

/** A parsed SKILL.md: its frontmatter fields (strings) and the markdown body after the block. */
export interface SkillFile {
  fields: Record<string, string>;
  body: string;
}

/** A SKILL.md whose frontmatter cannot be read; the message says where and why. */
export class FrontmatterError extends Error {
  /**
   * @example
   * ```ts
   * const error = new FrontmatterError("the frontmatter opened by --- on line 1 is never closed");
   * error.name; // "FrontmatterError"
   * ```
   */
  constructor(message: string) {
    super(message);
    this.name = "FrontmatterError";
  }
}

const LINE = /^([\w-]+):\s*(.*)$/;

function unquote(value: string): string {
  const trimmed = value.trim();
  if (trimmed.length >= 2 && (trimmed[0] === '"' || trimmed[0] === "'") && trimmed.at(-1) === trimmed[0]) {
    return trimmed.slice(1, -1);
  }
  return trimmed;
}

/** The line parser: `key: value`, continuation lines (indented) joined to the key above. */
function lineFields(block: string): Record<string, string> {
  const fields: Record<string, string> = {};
  let key: string | undefined;
  for (const line of block.split("\n")) {
    const match = LINE.exec(line);
    if (match && !/^\s/.test(line)) {
      key = match[1]!;
      fields[key] = match[2]!;
    } else if (key !== undefined && (/^\s/.test(line) || line === "")) {
      fields[key] = fields[key] === "" ? line.trim() : `${fields[key]}\n${line}`;
    }
  }
  for (const [name, value] of Object.entries(fields)) fields[name] = unquote(value);
  return fields;
}

/** A YAML value as OpenClaw keeps it: strings as they are, everything else as JSON text. */
function asText(value: unknown): string {
  if (typeof value === "string") return value;
  if (value === null || value === undefined) return "";
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}

/**
 * Parses a SKILL.md. A file without a frontmatter block has no fields (such a skill has no description and is
 * skipped by its loader); a block that is never closed, or that is not a mapping, is a {@link FrontmatterError}.
 *
 * @example
 * ```ts
 * const { fields, body } = parseSkillFile("---\nname: weather\ndescription: Forecasts\n---\n# Weather\n");
 * fields.name; // "weather"
 * ```
 */
export function parseSkillFile(text: string): SkillFile {
  const normalized = text.replace(/\r\n?/g, "\n");
  if (!normalized.startsWith("---")) return { fields: {}, body: normalized };
  const end = normalized.indexOf("\n---", 3);
  if (end === -1) {
    throw new FrontmatterError("the frontmatter opened by --- on line 1 is never closed by a line starting with ---");
  }
  const firstBreak = normalized.indexOf("\n");
  const block = normalized.slice(firstBreak + 1, end);
  const afterClose = normalized.indexOf("\n", end + 4);
  const body = afterClose === -1 ? "" : normalized.slice(afterClose + 1);
  const lines = lineFields(block);
  let yaml: Record<string, unknown> = {};
  try {
    const parsed: unknown = parseYaml(block);
    if (parsed !== null && typeof parsed === "object" && !Array.isArray(parsed)) {
      yaml = parsed as Record<string, unknown>;
    }
  } catch (error) {
    // YAML failed: the line parser's fields stand alone, as in OpenClaw. Anything else (a right homed lacks) is real.
    if (!(error instanceof YAMLError)) throw error;
  }
  const fields: Record<string, string> = {};
  for (const key of new Set([...Object.keys(yaml), ...Object.keys(lines)])) {
    const line = lines[key];
    const fromYaml = yaml[key];
    if (line !== undefined && (/^[{[]/.test(line.trim()) || fromYaml === undefined)) fields[key] = line.trim();
    else if (line !== undefined && typeof fromYaml === "object" && fromYaml !== null && /^[^\n]+$/.test(line)) {
      // "description: Use it: carefully" — YAML saw a nested mapping; the line parser saw what was meant.
      fields[key] = line;
    } else fields[key] = asText(fromYaml);
  }
  return { fields, body };
}
