/**
 * Whether a skill is offered, in OpenClaw's order (`shouldIncludeSkill`): disabled by its config entry → `os` (which
 * `always` does not override) → `always` → `requires.bins` (every one an executable on PATH) → `requires.anyBins` (at
 * least one) → `requires.env` (set, or given by the entry's `env`, or by its `apiKey` as the `primaryEnv`) →
 * `requires.config` (dotted paths of homed's config that are truthy). The reasons say what excluded the skill or what
 * satisfied its gates.
 *
 * @module
 */

import { join } from "node:path";
import type { Skill } from "./skill.ts";

/** A skill's config entry (`plugins.entries.<skillKey ?? name>`). */
export interface SkillEntry {
  enabled?: boolean | undefined;
  env?: Record<string, string> | undefined;
  apiKey?: string | undefined;
}

/** What gating looks at. */
export interface GateContext {
  /** `process.platform` spelling: `linux`, `darwin`, `win32`. */
  os: string;
  /** The PATH folders to look for binaries in. */
  path: readonly string[];
  /** Reads an environment variable of homed (undefined when unset or not readable). */
  env: (name: string) => string | undefined;
  entry: (key: string) => SkillEntry | undefined;
  /** Whether a dotted path of homed's config is truthy. */
  config: (dotted: string) => boolean;
}

/** Gating's outcome. */
export interface GateResult {
  eligible: boolean;
  reasons: string[];
}

/**
 * `Deno.build.os` in OpenClaw's `process.platform` spelling.
 *
 * @example
 * ```ts
 * platformOf("windows"); // "win32"
 * ```
 */
export function platformOf(os: string): string {
  return os === "windows" ? "win32" : os;
}

/** Where `name` is an executable file in `path`; a folder homed may not read is reported by the thrown error. */
function findBin(name: string, path: readonly string[]): string | undefined {
  if (/[/\\]/.test(name)) return undefined;
  for (const dir of path) {
    const candidate = join(dir, name);
    try {
      const info = Deno.statSync(candidate);
      if (info.isFile && ((info.mode ?? 0o111) & 0o111) !== 0) return candidate;
    } catch (error) {
      if (error instanceof Deno.errors.NotCapable) {
        throw new Error(
          `cannot look for ${name}: homed may not read ${candidate} (restart homed with the flags \`homed flags\` prints)`,
        );
      }
    }
  }
  return undefined;
}

/**
 * Gates a skill.
 *
 * @example
 * ```ts
 * import type { Skill } from "./skill.ts";
 *
 * declare const weather: Skill; // its metadata: { openclaw: { requires: { bins: ["curl"] } } }
 * const context: GateContext = {
 *   os: "linux",
 *   path: ["/usr/bin"],
 *   env: () => undefined,
 *   entry: () => undefined,
 *   config: () => false,
 * };
 * gateSkill(weather, context); // { eligible: true, reasons: ["requires.bins: curl at /usr/bin/curl"] }
 * ```
 */
export function gateSkill(skill: Skill, context: GateContext): GateResult {
  const key = skill.gates?.skillKey ?? skill.name;
  const entry = context.entry(key);
  if (entry?.enabled === false) return { eligible: false, reasons: [`disabled by plugins.entries.${key}.enabled`] };
  const gates = skill.gates;
  if (!gates) return { eligible: true, reasons: ["no OpenClaw metadata: no gates"] };
  if (gates.os.length && !gates.os.includes(context.os)) {
    return { eligible: false, reasons: [`os: needs ${gates.os.join(" or ")}, this is ${context.os}`] };
  }
  if (gates.always) return { eligible: true, reasons: ["always: true"] };
  const reasons: string[] = [];
  const missing: string[] = [];
  try {
    for (const bin of gates.bins) {
      const found = findBin(bin, context.path);
      if (found) reasons.push(`requires.bins: ${bin} at ${found}`);
      else missing.push(`requires.bins: ${bin} is not on PATH`);
    }
    if (gates.anyBins.length) {
      const found = gates.anyBins.map((bin) => [bin, findBin(bin, context.path)] as const).find(([, at]) => at);
      if (found) reasons.push(`requires.anyBins: ${found[0]} at ${found[1]}`);
      else missing.push(`requires.anyBins: none of ${gates.anyBins.join(", ")} is on PATH`);
    }
  } catch (error) {
    return { eligible: false, reasons: [`requires.bins: ${(error as Error).message}`] };
  }
  for (const name of gates.env) {
    if (context.env(name) !== undefined) reasons.push(`requires.env: ${name} is set`);
    else if (entry?.env?.[name] !== undefined) reasons.push(`requires.env: ${name} from plugins.entries.${key}.env`);
    else if (entry?.apiKey && name === gates.primaryEnv) {
      reasons.push(`requires.env: ${name} from plugins.entries.${key}.apiKey`);
    } else missing.push(`requires.env: ${name} is not set (nor in plugins.entries.${key})`);
  }
  for (const dotted of gates.config) {
    if (context.config(dotted)) reasons.push(`requires.config: ${dotted} is on`);
    else missing.push(`requires.config: ${dotted} is not on in homed's config`);
  }
  if (missing.length) return { eligible: false, reasons: missing };
  return { eligible: true, reasons: reasons.length ? reasons : ["no requirements"] };
}
