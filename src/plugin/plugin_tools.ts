/**
 * The plugins' own tools: `plgreload` (the seed's name for "reload the plugins", owner only) and `skill_read`, which
 * gives an offered skill's SKILL.md or a text file of its folder — never a file outside it, by name or through a link.
 *
 * @module
 */

import { resolve } from "node:path";
import { isInside } from "../fs/contained.ts";
import type { Tool } from "../tools/tool.ts";
import { DEFAULT_LIMITS } from "./discovery.ts";
import type { SkillState } from "./skill_catalogue.ts";

/** Largest file `skill_read` returns. */
const MAX_READ_BYTES = DEFAULT_LIMITS.maxSkillFileBytes;

/** What a reload reports. */
export interface ReloadReport {
  skills: number;
  eligible: number;
  problems: string[];
}

/**
 * `plgreload`: reloads the plugins, for the owner only.
 *
 * @example
 * ```ts
 * const tool = plgreloadTool(() => Promise.resolve({ skills: 2, eligible: 2, problems: [] }));
 * tool.allow; // "owner"
 * ```
 */
export function plgreloadTool(reload: () => Promise<ReloadReport>): Tool {
  return {
    name: "plgreload",
    effect: "act",
    description:
      "Reload the plugins (skills) from their folders: new, changed and removed ones take effect from the next message. Only when the owner asks.",
    parameters: { type: "object", properties: {}, additionalProperties: false },
    allow: "owner",
    execute: async () => {
      const report = await reload();
      return `Reloaded: ${report.eligible} of ${report.skills} skills offered` +
        (report.problems.length ? `; problems: ${report.problems.join("; ")}` : "");
    },
  };
}

/**
 * `skill_read`: an offered skill's instructions, or a file of its folder; `skills` gives the current snapshot's.
 *
 * @example
 * ```ts
 * import type { SkillState } from "./skill_catalogue.ts";
 *
 * declare const skills: SkillState[];
 * const tool = skillReadTool(() => skills);
 * tool.name; // "skill_read"
 * ```
 */
export function skillReadTool(skills: () => readonly SkillState[]): Tool {
  return {
    name: "skill_read",
    effect: "read",
    description:
      "Read an available skill's instructions (its SKILL.md, with {baseDir} filled in) or, with path, a file of the skill's folder it refers to (references/x.md). Only skills listed in <available_skills>.",
    parameters: {
      type: "object",
      properties: {
        name: { type: "string", minLength: 1, maxLength: 64 },
        path: { type: "string", minLength: 1, maxLength: 300, description: "A file inside the skill's folder" },
      },
      required: ["name"],
      additionalProperties: false,
    },
    allow: "household",
    execute: (args) => readSkillFile(skills(), args.name as string, args.path as string | undefined),
  };
}

async function readSkillFile(skills: readonly SkillState[], name: string, path: string | undefined): Promise<string> {
  const eligible = skills.filter((state) => state.eligible);
  const state = eligible.find((candidate) => candidate.skill.name === name);
  if (!state) {
    throw new Error(
      `no available skill is named ${JSON.stringify(name)}; available: ${
        eligible.map((s) => s.skill.name).join(", ") || "none"
      }`,
    );
  }
  const { skill } = state;
  if (path === undefined || path === "SKILL.md") return skill.body.replaceAll("{baseDir}", skill.dir);
  // Outside by its name, or through a symlink once resolved: refused either way. A link that stays inside is read,
  // so `checkContained` (which refuses every link) is not the check here.
  const outside = new Error(`path ${JSON.stringify(path)} is outside the folder of the skill ${name}`);
  if (!isInside(skill.dir, resolve(skill.dir, path))) throw outside;
  let real: string;
  try {
    real = await Deno.realPath(resolve(skill.dir, path));
  } catch {
    throw new Error(`the skill ${name} has no file ${JSON.stringify(path)}`);
  }
  if (!isInside(skill.dir, real)) throw outside;
  const info = await Deno.stat(real);
  if (!info.isFile) throw new Error(`${JSON.stringify(path)} in the skill ${name} is not a file`);
  if (info.size > MAX_READ_BYTES) {
    throw new Error(
      `${JSON.stringify(path)} in the skill ${name} has ${info.size} bytes (at most ${MAX_READ_BYTES})`,
    );
  }
  const bytes = await Deno.readFile(real);
  if (bytes.includes(0)) throw new Error(`${JSON.stringify(path)} in the skill ${name} is not a text file`);
  return new TextDecoder().decode(bytes).replaceAll("{baseDir}", skill.dir);
}
