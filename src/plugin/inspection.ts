/**
 * The body of `GET /api/plugins`: every plugin found — each skill, eligible or not, with its reasons, installers
 * (shown, never run) and warnings; each `skill.json` plugin loaded, with its tools; and each manifest that cannot be
 * used, with its errors.
 *
 * @module
 */

import type { LoadedPlugin } from "./plugin_vm.ts";
import type { SkillState } from "./skill_catalogue.ts";

/**
 * One entry a plugin: skills first, then the manifests loaded, then the manifests that failed.
 *
 * @example
 * ```ts
 * pluginList([], new Map(), new Map([["lamp", ["version: must match pattern"]]]));
 * // [{ name: "lamp", kind: "manifest", eligible: false, errors: ["version: must match pattern"], … }]
 * ```
 */
export function pluginList(
  skills: readonly SkillState[],
  plugins: ReadonlyMap<string, LoadedPlugin>,
  errors: ReadonlyMap<string, readonly string[]>,
): Array<Record<string, unknown>> {
  const manifests = [...plugins.values()].map(({ manifest, source, dir, nativeServed }) => ({
    name: manifest.name,
    source,
    kind: manifest.native ? "native" : "manifest",
    path: `${dir}/skill.json`,
    description: manifest.description,
    version: manifest.version,
    eligible: true,
    reasons: [
      manifest.native
        ? nativeServed
          ? `its ${manifest.native} device is already on in homed's config`
          : `its device comes from the ${manifest.native} factory`
        : `${manifest.tools.length} tools from ${manifest.lua ? "Lua" : "no script"}`,
    ],
    tools: manifest.tools.map((tool) => tool.name),
    commands: [],
    install: [],
    errors: errors.get(manifest.name) ?? [],
  }));
  const failed = [...errors].filter(([name]) => !plugins.has(name)).map(([name, errors]) => ({
    name,
    source: "",
    kind: "manifest",
    eligible: false,
    reasons: ["its skill.json cannot be used"],
    tools: [],
    commands: [],
    install: [],
    errors,
  }));
  const found = skills.map(({ skill, source, eligible, reasons }) => ({
    name: skill.name,
    source,
    kind: "skill",
    path: skill.file,
    description: skill.description,
    eligible,
    reasons,
    tools: [],
    commands: skill.userInvocable ? [`/${skill.name}`] : [],
    install: skill.install,
    errors: skill.warnings,
  }));
  return [...found, ...manifests, ...failed];
}
