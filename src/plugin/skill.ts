/**
 * A skill as OpenClaw defines it, read from its SKILL.md fields: identity (name falls back to the folder; a skill
 * without a description is skipped), invocation flags (parsed leniently), the gates and installers of
 * `metadata.openclaw` (JSON5; the legacy keys `clawdbot`, `moltbot`, `clawdis` too), and warnings for Agent Skills spec
 * violations, which never reject a skill.
 *
 * @module
 */

import JSON5 from "json5";
import { basename } from "node:path";
import type { SkillFile } from "./frontmatter.ts";

/** An installer as a skill declares it: parsed and shown, never run. */
export interface InstallSpec {
  kind: "brew" | "node" | "go" | "uv" | "download";
  id?: string;
  label?: string;
  /** The formula, cask, package, module or URL. */
  target: string;
  bins: string[];
  os: string[];
}

/** The gates of `metadata.openclaw`. */
export interface SkillGates {
  always: boolean;
  os: string[];
  bins: string[];
  anyBins: string[];
  env: string[];
  config: string[];
  primaryEnv?: string;
  skillKey?: string;
  emoji?: string;
}

/** A readable skill. */
export interface Skill {
  name: string;
  description: string;
  /** The skill's folder and its SKILL.md. */
  dir: string;
  file: string;
  body: string;
  homepage?: string;
  userInvocable: boolean;
  disableModelInvocation: boolean;
  /** `command-dispatch: tool` with `command-tool`: `/name args` calls this tool directly. */
  commandTool?: string;
  /** `undefined` when the metadata holds no OpenClaw object: then the skill has no gates. */
  gates: SkillGates | undefined;
  install: InstallSpec[];
  /** Agent Skills spec violations and ignored metadata, for the status; they never reject a skill. */
  warnings: string[];
}

const METADATA_KEYS = ["openclaw", "clawdbot", "moltbot", "clawdis"];
const INSTALL_KINDS = new Set(["brew", "node", "go", "uv", "download"]);
const NAME = /^[a-z0-9]+(-[a-z0-9]+)*$/;

/**
 * A lenient boolean (`true`/`false`, `yes`/`no`, `on`/`off`, `1`/`0`, any case); `fallback` when it is none of these.
 *
 * @example
 * ```ts
 * lenientBoolean("Yes", false); // true
 * ```
 */
export function lenientBoolean(value: unknown, fallback: boolean): boolean {
  if (typeof value === "boolean") return value;
  const text = String(value ?? "").trim().toLowerCase();
  if (["true", "yes", "on", "1"].includes(text)) return true;
  if (["false", "no", "off", "0"].includes(text)) return false;
  return fallback;
}

/** A list written as an array or as a comma- or space-separated string. */
function list(value: unknown): string[] {
  if (Array.isArray(value)) return value.filter((item) => typeof item === "string" && item.trim()).map((s) => s.trim());
  if (typeof value === "string") return value.split(/[\s,]+/).filter(Boolean);
  return [];
}

function text(value: unknown): string | undefined {
  return typeof value === "string" && value.trim() !== "" ? value.trim() : undefined;
}

/** Values a shell or a path could misread: a leading `-` or `\`, or `..`. */
const UNSAFE = /^-|^\\|\.\./;

function installSpecs(raw: unknown, warnings: string[]): InstallSpec[] {
  if (!Array.isArray(raw)) return [];
  const specs: InstallSpec[] = [];
  raw.forEach((entry, index) => {
    const spec = entry as Record<string, unknown>;
    const kind = text(spec?.kind) ?? text(spec?.type);
    if (!kind || !INSTALL_KINDS.has(kind)) {
      warnings.push(`install[${index}]: kind ${JSON.stringify(kind ?? null)} is not brew, node, go, uv or download`);
      return;
    }
    const target = kind === "brew"
      ? text(spec.formula) ?? text(spec.cask)
      : kind === "go"
      ? text(spec.module)
      : kind === "download"
      ? text(spec.url)
      : text(spec.package);
    if (!target || UNSAFE.test(target) || (kind === "download" && !/^https?:\/\//.test(target))) {
      warnings.push(`install[${index}] (${kind}): its ${kind === "download" ? "url" : "target"} is missing or unsafe`);
      return;
    }
    specs.push({
      kind: kind as InstallSpec["kind"],
      ...(text(spec.id) ? { id: text(spec.id)! } : {}),
      ...(text(spec.label) ? { label: text(spec.label)! } : {}),
      target,
      bins: list(spec.bins),
      os: list(spec.os),
    });
  });
  return specs;
}

/**
 * Reads a skill from its parsed SKILL.md and folder; a string says why it is skipped (no description).
 *
 * @example
 * ```ts
 * import { parseSkillFile } from "./frontmatter.ts";
 *
 * const path = "/srv/homed/plugins/weather/SKILL.md";
 * const skill = readSkill(parseSkillFile(await Deno.readTextFile(path)), "/srv/homed/plugins/weather", path);
 * if (typeof skill === "string") console.warn(skill); // why it is skipped
 * ```
 */
export function readSkill(file: SkillFile, dir: string, path: string): Skill | string {
  const { fields } = file;
  const folder = basename(dir);
  const name = text(fields.name) ?? folder;
  const description = text(fields.description);
  if (!description) return `${path}: no description (a skill needs one to be offered)`;
  const warnings: string[] = [];
  if (!NAME.test(name) || name.length > 64) warnings.push(`name "${name}" is not 1–64 of a-z, 0-9 and single hyphens`);
  if (name !== folder) warnings.push(`name "${name}" differs from its folder "${folder}"`);
  if (description.length > 1024) warnings.push(`the description has ${description.length} characters (spec: ≤ 1024)`);
  let gates: SkillGates | undefined;
  let install: InstallSpec[] = [];
  if (fields.metadata) {
    let metadata: unknown;
    try {
      metadata = JSON5.parse(fields.metadata);
    } catch (error) {
      warnings.push(`metadata is not JSON5 (${(error as Error).message}); the skill has no gates`);
    }
    const record = metadata as Record<string, unknown> | undefined;
    const key = METADATA_KEYS.find((k) => record?.[k] !== null && typeof record?.[k] === "object");
    if (record && key === undefined) {
      warnings.push(`metadata has no openclaw object (keys: ${Object.keys(record).join(", ") || "none"}); no gates`);
    }
    if (key) {
      const meta = record![key] as Record<string, unknown>;
      const requires = (meta.requires ?? {}) as Record<string, unknown>;
      const config = Array.isArray(requires.config)
        ? requires.config.filter((item) => {
          if (typeof item === "string") return true;
          warnings.push(`requires.config: ${JSON.stringify(item)} is not a dotted path; skipped`);
          return false;
        })
        : list(requires.config);
      gates = {
        always: lenientBoolean(meta.always, false),
        os: list(meta.os),
        bins: list(requires.bins),
        anyBins: list(requires.anyBins),
        env: list(requires.env),
        config: config as string[],
        ...(text(meta.primaryEnv) ? { primaryEnv: text(meta.primaryEnv)! } : {}),
        ...(text(meta.skillKey) ? { skillKey: text(meta.skillKey)! } : {}),
        ...(text(meta.emoji) ? { emoji: text(meta.emoji)! } : {}),
      };
      install = installSpecs(meta.install, warnings);
      fields.homepage ??= text(meta.homepage) ?? "";
    }
  }
  const dispatch = text(fields["command-dispatch"]);
  const commandTool = text(fields["command-tool"]);
  if (dispatch === "tool" && !commandTool) warnings.push("command-dispatch: tool without command-tool; ignored");
  return {
    name,
    description,
    dir,
    file: path,
    body: file.body,
    ...(text(fields.homepage) ? { homepage: text(fields.homepage)! } : {}),
    userInvocable: lenientBoolean(fields["user-invocable"], true),
    disableModelInvocation: lenientBoolean(fields["disable-model-invocation"], false),
    ...(dispatch === "tool" && commandTool ? { commandTool } : {}),
    gates,
    install,
    warnings,
  };
}
