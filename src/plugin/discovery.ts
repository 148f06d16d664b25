/**
 * Finds skills the way OpenClaw walks a root (`src/agents/skills/local-loader.ts`): a root holding `SKILL.md` is one
 * skill; a root with `skills/*\/SKILL.md` is read from `skills/`; otherwise its child folders, sorted, skipping names
 * starting with `.` and `node_modules`, and for a child without `SKILL.md` one level deeper (grouped layouts). Finding a
 * `SKILL.md` stops the descent. Every folder and file must stay inside the root once symlinks are resolved (no
 * escape); `SKILL.md` files over the size cap are skipped; a root yields at most `maxCandidates` skills. Then skills are
 * merged by name, a later root winning (precedence: `plugins.extra_dirs` < `plugins/`).
 *
 * The same walk reads, for a root that asks for it, each child folder's `skill.json` (HomeAgent's manifest): the root's
 * folder list is read once and serves both, so skills and manifests are always found in the same state of the folders.
 *
 * @module
 */

import { join, resolve } from "node:path";
import { isInside } from "../fs/contained.ts";
import { FrontmatterError, parseSkillFile } from "./frontmatter.ts";
import { type Manifest, ManifestError, readManifest } from "./manifest.ts";
import { readSkill, type Skill } from "./skill.ts";
import { compareText } from "../text/compare_text.ts";

/** Caps, as OpenClaw's defaults. */
export interface DiscoveryLimits {
  maxSkillFileBytes: number;
  maxCandidatesPerRoot: number;
  maxSkillsPerSource: number;
}

/** OpenClaw's defaults (`workspace.ts`). */
export const DEFAULT_LIMITS: DiscoveryLimits = {
  maxSkillFileBytes: 256_000,
  maxCandidatesPerRoot: 300,
  maxSkillsPerSource: 200,
};

/** A root to scan, lowest precedence first. */
export interface SkillRoot {
  dir: string;
  /** Where it comes from (`plugins`, `extra_dirs[0]`, …), for the status. */
  source: string;
}

/** A root to scan; with `manifests`, its child folders' `skill.json` are read in the same walk. */
export interface DiscoveryRoot extends SkillRoot {
  manifests?: boolean;
}

/** A skill found, with where it came from. */
export interface FoundSkill {
  skill: Skill;
  source: string;
}

/** A `skill.json` found and checked: the plugin's folder and the root it came from. */
export interface FoundManifest {
  manifest: Manifest;
  dir: string;
  source: string;
}

/** The manifests a scan found, apart from the skills (their problems are reported after the skills'). */
export interface FoundManifests {
  /** By plugin name; a later root wins. */
  found: Map<string, FoundManifest>;
  problems: string[];
  /** The checker's problems of each `skill.json` that cannot be used, by its folder's name. */
  errors: Map<string, string[]>;
}

/** What a scan found: skills by name, one line per skipped folder or file, and the skill folders that failed to load. */
export interface Discovery {
  skills: FoundSkill[];
  problems: string[];
  /** Folders holding a SKILL.md that could not be used (unreadable frontmatter, no description, too large). */
  failed: Array<{ dir: string; problem: string }>;
  /** The `skill.json` of the roots that asked for them. */
  manifests: FoundManifests;
}

async function realPath(path: string): Promise<string | undefined> {
  try {
    return await Deno.realPath(path);
  } catch {
    return undefined;
  }
}

const inside = (child: string, parent: string) => child === parent || isInside(parent, child);

async function hasFile(path: string): Promise<boolean> {
  try {
    return (await Deno.stat(path)).isFile;
  } catch {
    return false;
  }
}

async function children(dir: string): Promise<string[]> {
  const names: string[] = [];
  try {
    for await (const entry of Deno.readDir(dir)) {
      if (entry.name.startsWith(".") || entry.name === "node_modules") continue;
      if (entry.isDirectory || entry.isSymlink) names.push(entry.name);
    }
  } catch { /* unreadable: nothing below */ }
  return names.sort();
}

/** The skill folders under one root (whose child folders are `rootChildren`), in OpenClaw's order. */
async function skillDirs(root: string, rootChildren: readonly string[]): Promise<string[]> {
  if (await hasFile(join(root, "SKILL.md"))) return [root];
  const skillsDir = join(root, "skills");
  const grouped = await Promise.all(
    (await children(skillsDir)).map((name) => hasFile(join(skillsDir, name, "SKILL.md"))),
  );
  const base = grouped.some(Boolean) ? skillsDir : root;
  const found: string[] = [];
  for (const name of base === root ? rootChildren : await children(base)) {
    const dir = join(base, name);
    if (await hasFile(join(dir, "SKILL.md"))) {
      found.push(dir);
      continue;
    }
    for (const inner of await children(dir)) {
      if (await hasFile(join(dir, inner, "SKILL.md"))) found.push(join(dir, inner));
    }
  }
  return found;
}

/** Reads the `skill.json` of each child folder of a root into `into`; a folder without one is not a plugin. */
async function readManifests(
  root: SkillRoot,
  rootReal: string,
  rootChildren: readonly string[],
  into: FoundManifests,
): Promise<void> {
  for (const name of rootChildren) {
    const dir = `${rootReal}/${name}`;
    const path = `${dir}/skill.json`;
    let text: string;
    try {
      const real = await Deno.realPath(path);
      if (!isInside(dir, real)) {
        into.problems.push(`${path}: skipped, it leads outside ${root.dir}`);
        continue;
      }
      text = await Deno.readTextFile(real);
    } catch {
      continue; // no manifest here
    }
    try {
      const manifest = readManifest(text, dir, path);
      into.found.set(manifest.name, { manifest, dir, source: root.source });
    } catch (error) {
      if (!(error instanceof ManifestError)) throw error;
      into.problems.push(error.message);
      into.errors.set(name, error.problems);
    }
  }
}

/**
 * Scans `roots` (lowest precedence first) and returns the skills by name, sorted, with the problems met; the roots
 * marked `manifests` give their `skill.json` plugins too, from the same walk.
 *
 * @example
 * ```ts
 * const { skills, problems, manifests } = await discoverSkills([
 *   { dir: "/srv/homed/plugins", source: "plugins", manifests: true },
 * ]);
 * manifests.found.keys(); // the names of the skill.json plugins
 * ```
 */
export async function discoverSkills(
  roots: readonly DiscoveryRoot[],
  limits: DiscoveryLimits = DEFAULT_LIMITS,
): Promise<Discovery> {
  const byName = new Map<string, FoundSkill>();
  const problems: string[] = [];
  const failed: Discovery["failed"] = [];
  const manifests: FoundManifests = { found: new Map(), problems: [], errors: new Map() };
  for (const root of roots) {
    const rootReal = await realPath(resolve(root.dir));
    if (!rootReal) continue; // a root that does not exist (yet) holds no skills
    const rootChildren = await children(rootReal);
    if (root.manifests) await readManifests(root, rootReal, rootChildren, manifests);
    let dirs = await skillDirs(rootReal, rootChildren);
    if (dirs.length > limits.maxCandidatesPerRoot) {
      problems.push(
        `${root.dir}: ${dirs.length} skill folders; only the first ${limits.maxCandidatesPerRoot} are read`,
      );
      dirs = dirs.slice(0, limits.maxCandidatesPerRoot);
    }
    let loaded = 0;
    for (const dir of dirs) {
      const dirReal = await realPath(dir);
      const fileReal = await realPath(join(dir, "SKILL.md"));
      if (!dirReal || !fileReal || !inside(dirReal, rootReal) || !inside(fileReal, dirReal)) {
        problems.push(`${dir}: skipped, it leads outside ${root.dir} (symlink to ${fileReal ?? dirReal ?? "nowhere"})`);
        continue;
      }
      const size = (await Deno.stat(fileReal)).size;
      if (size > limits.maxSkillFileBytes) {
        problems.push(`${fileReal}: skipped, ${size} bytes (more than ${limits.maxSkillFileBytes})`);
        failed.push({ dir: dirReal, problem: `${size} bytes (more than ${limits.maxSkillFileBytes})` });
        continue;
      }
      if (loaded >= limits.maxSkillsPerSource) {
        problems.push(`${dir}: skipped, ${root.source} already gave ${limits.maxSkillsPerSource} skills`);
        continue;
      }
      let skill: Skill | string;
      try {
        skill = readSkill(parseSkillFile(await Deno.readTextFile(fileReal)), dirReal, fileReal);
      } catch (error) {
        if (!(error instanceof FrontmatterError)) throw error;
        problems.push(`${fileReal}: skipped, ${error.message}`);
        failed.push({ dir: dirReal, problem: error.message });
        continue;
      }
      if (typeof skill === "string") {
        problems.push(`${skill}; skipped`);
        failed.push({ dir: dirReal, problem: skill });
        continue;
      }
      const earlier = byName.get(skill.name);
      if (earlier) problems.push(`${skill.name}: ${fileReal} (${root.source}) replaces ${earlier.skill.file}`);
      byName.set(skill.name, { skill, source: root.source });
      loaded++;
    }
  }
  return {
    skills: [...byName.values()].sort((a, b) => compareText(a.skill.name, b.skill.name)),
    problems,
    failed,
    manifests,
  };
}
