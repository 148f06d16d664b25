/**
 * Plugins in the running daemon, first part: OpenClaw skills. At start (and on `reload()`) the skill roots are scanned,
 * each skill gated, and the result kept as one immutable snapshot: the system message's skills section and the
 * `skill_read` tool read that snapshot, so a reload swaps everything at once (the prompt's skills section is stable
 * between reloads, which keeps the provider's prefix cache). `GET /api/plugins` lists every skill found, eligible or
 * not, with the reasons, its installers (shown, never run) and its warnings.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import { resolve } from "node:path";
import type { Dispatch, PromptContributor, PromptInput, PromptSection } from "../prompt/contributor.ts";
import type { Service } from "../service/service.ts";
import type { Tool } from "../tools/tool.ts";
import { DEFAULT_LIMITS, discoverSkills, type SkillRoot } from "./discovery.ts";
import { type GateContext, gateSkill } from "./gating.ts";
import type { Skill } from "./skill.ts";
import { skillsPromptBody } from "./skills_prompt.ts";

/** Options of {@link PluginService}. */
export interface PluginServiceOptions {
  /** Lowest precedence first: `plugins.extra_dirs`, then `paths.plugins`. */
  roots: SkillRoot[];
  gate: GateContext;
  /** `plugins.skills_prompt_chars`. */
  promptChars: number;
  logger: Logger;
  /** Shortens skill locations in the prompt to `~/…`. */
  home?: string | undefined;
}

/** One skill as the snapshot holds it. */
export interface SkillState {
  skill: Skill;
  source: string;
  eligible: boolean;
  reasons: string[];
}

interface Snapshot {
  skills: SkillState[];
  problems: string[];
  prompt: string | undefined;
  loadedAt: number;
}

/** Largest file `skill_read` returns. */
const MAX_READ_BYTES = DEFAULT_LIMITS.maxSkillFileBytes;

/** The `plugins` service. */
export class PluginService implements Service, PromptContributor {
  readonly name = "plugins";
  #options: PluginServiceOptions;
  #snapshot: Snapshot = { skills: [], problems: [], prompt: undefined, loadedAt: 0 };
  #reloading: Promise<Snapshot> | undefined;
  #reloads = 0;

  /**
   * @example
   * ```ts
   * const plugins = await services.start(new PluginService({ roots, gate, promptChars: 18_000, logger }));
   * ```
   */
  constructor(options: PluginServiceOptions) {
    this.#options = options;
  }

  async start(): Promise<void> {
    await this.reload();
  }

  /**
   * Scans and gates again and swaps the snapshot in one step; concurrent calls share one scan.
   *
   * @example
   * ```ts
   * const { skills, problems } = await plugins.reload();
   * ```
   */
  reload(): Promise<{ skills: number; eligible: number; problems: string[] }> {
    this.#reloading ??= this.#scan().finally(() => (this.#reloading = undefined));
    return this.#reloading.then((snapshot) => ({
      skills: snapshot.skills.length,
      eligible: snapshot.skills.filter((state) => state.eligible).length,
      problems: snapshot.problems,
    }));
  }

  async #scan(): Promise<Snapshot> {
    const { roots, gate, logger } = this.#options;
    const { skills, problems, failed } = await discoverSkills(roots);
    const states: SkillState[] = skills.map(({ skill, source }) => ({ skill, source, ...gateSkill(skill, gate) }));
    // A skill whose new version cannot be read keeps serving in the version it had.
    for (const { dir, problem } of failed) {
      const previous = this.#snapshot.skills.find((state) => state.skill.dir === dir);
      if (!previous || states.some((state) => state.skill.name === previous.skill.name)) continue;
      states.push(previous);
      problems.push(`${previous.skill.name}: its new version cannot be used (${problem}); the previous version stays`);
    }
    states.sort((a, b) => a.skill.name.localeCompare(b.skill.name));
    const eligible = states.filter((state) => state.eligible).map((state) => state.skill);
    const snapshot: Snapshot = {
      skills: states,
      problems,
      prompt: skillsPromptBody(eligible, { budget: this.#options.promptChars, home: this.#options.home }),
      loadedAt: Date.now(),
    };
    this.#snapshot = snapshot;
    this.#reloads++;
    for (const problem of problems) logger.warning("Plugins: {problem}", { problem });
    logger.info("Plugins: {eligible} of {count} skills offered ({names})", {
      eligible: eligible.length,
      count: states.length,
      names: eligible.map((skill) => skill.name).join(", ") || "none",
    });
    return snapshot;
  }

  /** The skills section of the system message (after the persona). */
  system(): PromptSection | undefined {
    const body = this.#snapshot.prompt;
    return body ? { title: "Skills (mandatory)", body } : undefined;
  }

  /** `/name args` of a user-invocable skill: which skill, and the raw arguments. */
  #command(text: string): { state: SkillState; args: string } | undefined {
    const match = /^\/([a-z0-9][a-z0-9_-]{0,63})(?:\s+([\s\S]*))?$/i.exec(text.trim());
    if (!match) return undefined;
    const wanted = match[1]!.toLowerCase().replaceAll("_", "-");
    const state = this.#snapshot.skills.find((candidate) =>
      candidate.eligible && candidate.skill.userInvocable && candidate.skill.name.toLowerCase() === wanted
    );
    return state ? { state, args: (match[2] ?? "").trim() } : undefined;
  }

  /** `/name args` of a skill with `command-dispatch: tool`: its tool, called directly. */
  dispatch(input: PromptInput): Dispatch | undefined {
    const command = this.#command(input.text);
    const tool = command?.state.skill.commandTool;
    if (!command || !tool) return undefined;
    return {
      tool,
      args: { command: command.args, commandName: command.state.skill.name, skillName: command.state.skill.name },
    };
  }

  /** `/name args` of any other user-invocable skill: the turn is told which skill the user asked for. */
  reference(input: PromptInput): PromptSection | undefined {
    const command = this.#command(input.text);
    if (!command || command.state.skill.commandTool) return undefined;
    const { name } = command.state.skill;
    return {
      title: "Skill invoked by the user",
      body: `The user typed /${name}${command.args ? ` with the arguments: ${command.args}` : ""}. ` +
        `Read the skill with skill_read (name "${name}") and follow it.`,
    };
  }

  /** Every skill found, for `GET /api/plugins`. */
  list(): Array<Record<string, unknown>> {
    return this.#snapshot.skills.map(({ skill, source, eligible, reasons }) => ({
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
  }

  /** What the last scan skipped, for `GET /api/plugins`. */
  problems(): string[] {
    return [...this.#snapshot.problems];
  }

  /** The tools: `skill_read`, and `plgreload` (owner only). */
  tools(): Tool[] {
    return [{
      name: "plgreload",
      description:
        "Reload the plugins (skills) from their folders: new, changed and removed ones take effect from the next message. Only when the owner asks.",
      parameters: { type: "object", properties: {}, additionalProperties: false },
      allow: "owner",
      execute: async () => {
        const report = await this.reload();
        return `Reloaded: ${report.eligible} of ${report.skills} skills offered` +
          (report.problems.length ? `; problems: ${report.problems.join("; ")}` : "");
      },
    }, {
      name: "skill_read",
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
      execute: (args) => this.#read(args.name as string, args.path as string | undefined),
    }];
  }

  async #read(name: string, path: string | undefined): Promise<string> {
    const eligible = this.#snapshot.skills.filter((state) => state.eligible);
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
    // Outside by its name, or through a symlink once resolved: refused either way.
    const outside = new Error(`path ${JSON.stringify(path)} is outside the folder of the skill ${name}`);
    if (!resolve(skill.dir, path).startsWith(`${skill.dir}/`)) throw outside;
    let real: string;
    try {
      real = await Deno.realPath(resolve(skill.dir, path));
    } catch {
      throw new Error(`the skill ${name} has no file ${JSON.stringify(path)}`);
    }
    if (!real.startsWith(`${skill.dir}/`)) throw outside;
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

  async stop(): Promise<void> {
    await this.#reloading?.catch(() => {});
  }

  status(): Record<string, unknown> {
    const skills = this.#snapshot.skills;
    return {
      skills: skills.length,
      eligible: skills.filter((state) => state.eligible).length,
      problems: this.#snapshot.problems.length,
      reloads: this.#reloads,
    };
  }
}
