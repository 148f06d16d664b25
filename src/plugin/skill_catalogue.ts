/**
 * The skill catalogue: one scan of the skill roots (OpenClaw plugin folders' `skills[]` below them), each skill gated,
 * and the result as one immutable snapshot — the skills with their verdicts, the problems, the prompt's skills section
 * — that a reload swaps at once. A skill whose new version cannot be read keeps serving in the version it had.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import { resolve } from "node:path";
import { isInside } from "../fs/contained.ts";
import { compareText } from "../text/compare_text.ts";
import { discoverSkills, type FoundManifests, type SkillRoot } from "./discovery.ts";
import { type GateContext, gateSkill } from "./gating.ts";
import type { Skill } from "./skill.ts";
import { skillsPromptBody } from "./skills_prompt.ts";

/** One skill as the snapshot holds it. */
export interface SkillState {
  skill: Skill;
  source: string;
  eligible: boolean;
  reasons: string[];
}

/** What one scan found, as the prompt, the tools and `GET /api/plugins` read it until the next. */
export interface SkillSnapshot {
  skills: SkillState[];
  problems: string[];
  /** The body of the system message's skills section; `undefined` when no skill is offered. */
  prompt: string | undefined;
  loadedAt: number;
}

/** The snapshot before the first scan. */
export const EMPTY_SNAPSHOT: SkillSnapshot = { skills: [], problems: [], prompt: undefined, loadedAt: 0 };

/** What a scan needs. */
export interface CatalogueOptions {
  /** Lowest precedence first. */
  roots: readonly SkillRoot[];
  gate: GateContext;
  /** The prompt's skills section's budget, in characters. */
  promptChars: number;
  /** Shortens skill locations in the prompt to `~/…`. */
  home?: string | undefined;
  logger: Logger;
  /**
   * Loads the `skill.json` plugins the same walk found (given the eligible skills) and returns its problems; without
   * it the walk does not read manifests.
   */
  loadManifests?: ((found: FoundManifests, eligible: readonly Skill[]) => Promise<string[]>) | undefined;
}

/** The folder names under `dir`, sorted; none when it cannot be read. */
async function folderNames(dir: string): Promise<string[]> {
  const names: string[] = [];
  try {
    for await (const entry of Deno.readDir(dir)) if (entry.isDirectory) names.push(entry.name);
  } catch {
    return [];
  }
  return names.sort();
}

/**
 * OpenClaw plugin folders (`openclaw.plugin.json`): their `skills[]` folders are read as skill roots, below every
 * other root; their code cannot run in homed, and saying so is part of the report.
 *
 * @example
 * ```ts
 * const { roots, problems } = await openclawPluginRoots([{ dir: "/srv/homed/plugins", source: "paths.plugins" }]);
 * roots.map((root) => root.source); // ["openclaw plugin voice-call", …]
 * ```
 */
export async function openclawPluginRoots(
  roots: readonly SkillRoot[],
): Promise<{ roots: SkillRoot[]; problems: string[] }> {
  const found: SkillRoot[] = [];
  const problems: string[] = [];
  for (const root of roots) {
    for (const name of await folderNames(root.dir)) {
      const dir = resolve(root.dir, name);
      let manifest: { id?: unknown; skills?: unknown };
      try {
        manifest = JSON.parse(await Deno.readTextFile(`${dir}/openclaw.plugin.json`));
      } catch (error) {
        if (!(error instanceof Deno.errors.NotFound)) {
          problems.push(`${dir}/openclaw.plugin.json: not readable JSON (${(error as Error).message})`);
        }
        continue;
      }
      const id = typeof manifest.id === "string" ? manifest.id : name;
      const skills = Array.isArray(manifest.skills) ? manifest.skills.filter((s) => typeof s === "string") : [];
      for (const skillDir of skills as string[]) {
        const target = resolve(dir, skillDir);
        if (!isInside(dir, target)) {
          problems.push(
            `${dir}/openclaw.plugin.json: skills entry ${JSON.stringify(skillDir)} leads outside the plugin`,
          );
          continue;
        }
        found.push({ dir: target, source: `openclaw plugin ${id}` });
      }
      problems.push(
        `${id} (${dir}): an OpenClaw plugin; its code (JavaScript/TypeScript) cannot run in homed — ` +
          `${
            skills.length
              ? `only its ${skills.length} skill folder(s) are read`
              : "it declares no skills[], so nothing of it is used"
          }`,
      );
    }
  }
  return { roots: found, problems };
}

/**
 * Scans and gates the skills (and, with `loadManifests`, loads the manifests found in the same walk) and returns the
 * new snapshot; `previous` gives the versions kept when a new one cannot be read. The problems are logged.
 *
 * @example
 * ```ts
 * import { getLogger } from "@logtape/logtape";
 *
 * const snapshot = await scanCatalogue({
 *   roots: [{ dir: "/srv/homed/plugins", source: "paths.plugins" }],
 *   gate: { os: "linux", path: ["/usr/bin"], env: () => undefined, entry: () => undefined, config: () => false },
 *   promptChars: 18_000,
 *   logger: getLogger(["homed", "plugins"]),
 * }, EMPTY_SNAPSHOT);
 * snapshot.skills.filter((state) => state.eligible).length; // the skills offered
 * ```
 */
export async function scanCatalogue(options: CatalogueOptions, previous: SkillSnapshot): Promise<SkillSnapshot> {
  const { gate, logger, loadManifests } = options;
  const openclaw = await openclawPluginRoots(options.roots);
  const roots = options.roots.map((root) => ({ ...root, manifests: Boolean(loadManifests) }));
  const { skills, problems, failed, manifests } = await discoverSkills([...openclaw.roots, ...roots]);
  problems.unshift(...openclaw.problems);
  const states: SkillState[] = skills.map(({ skill, source }) => ({ skill, source, ...gateSkill(skill, gate) }));
  for (const { dir, problem } of failed) {
    const kept = previous.skills.find((state) => state.skill.dir === dir);
    if (!kept || states.some((state) => state.skill.name === kept.skill.name)) continue;
    states.push(kept);
    problems.push(`${kept.skill.name}: its new version cannot be used (${problem}); the previous version stays`);
  }
  states.sort((a, b) => compareText(a.skill.name, b.skill.name));
  const eligible = states.filter((state) => state.eligible).map((state) => state.skill);
  if (loadManifests) problems.push(...await loadManifests(manifests, eligible));
  for (const problem of problems) logger.warning("Plugins: {problem}", { problem });
  logger.info("Plugins: {eligible} of {count} skills offered ({names})", {
    eligible: eligible.length,
    count: states.length,
    names: eligible.map((skill) => skill.name).join(", ") || "none",
  });
  return {
    skills: states,
    problems,
    prompt: skillsPromptBody(eligible, { budget: options.promptChars, home: options.home }),
    loadedAt: Date.now(),
  };
}
