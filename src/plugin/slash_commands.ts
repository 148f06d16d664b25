/**
 * Slash commands of the user-invocable skills: `/name args` (a `_` in the name standing for `-`, any case) either
 * calls the skill's tool directly (`command-dispatch: tool`) or tells the turn which skill the user asked for.
 *
 * @module
 */

import type { PromptSection, ToolDispatch } from "../prompt/contributor.ts";
import type { SkillState } from "./skill_catalogue.ts";

/** A message that is a slash command: which skill, and the raw arguments. */
export interface SkillCommand {
  state: SkillState;
  args: string;
}

/**
 * `/name args` of an eligible, user-invocable skill among `skills`; `undefined` for any other text.
 *
 * @example
 * ```ts
 * import type { SkillState } from "./skill_catalogue.ts";
 *
 * declare const skills: SkillState[];
 * skillCommand("/release_notes v2.1", skills)?.args; // "v2.1", when release-notes is offered
 * ```
 */
export function skillCommand(text: string, skills: readonly SkillState[]): SkillCommand | undefined {
  const match = /^\/([a-z0-9][a-z0-9_-]{0,63})(?:\s+([\s\S]*))?$/i.exec(text.trim());
  if (!match) return undefined;
  const wanted = match[1]!.toLowerCase().replaceAll("_", "-");
  const state = skills.find((candidate) =>
    candidate.eligible && candidate.skill.userInvocable && candidate.skill.name.toLowerCase() === wanted
  );
  return state ? { state, args: (match[2] ?? "").trim() } : undefined;
}

/**
 * The direct tool call of a command whose skill has `command-dispatch: tool`.
 *
 * @example
 * ```ts
 * declare const command: SkillCommand;
 * commandDispatch(command); // { tool: "lights_set", args: { command: "kitchen off", … } }, or undefined
 * ```
 */
export function commandDispatch(command: SkillCommand | undefined): ToolDispatch | undefined {
  const tool = command?.state.skill.commandTool;
  if (!command || !tool) return undefined;
  return {
    tool,
    args: { command: command.args, commandName: command.state.skill.name, skillName: command.state.skill.name },
  };
}

/**
 * The reference that points the turn at the skill of any other command.
 *
 * @example
 * ```ts
 * declare const command: SkillCommand;
 * commandReference(command)?.title; // "Skill invoked by the user"
 * ```
 */
export function commandReference(command: SkillCommand | undefined): PromptSection | undefined {
  if (!command || command.state.skill.commandTool) return undefined;
  const { name } = command.state.skill;
  return {
    title: "Skill invoked by the user",
    body: `The user typed /${name}${command.args ? ` with the arguments: ${command.args}` : ""}. ` +
      `Read the skill with skill_read (name "${name}") and follow it.`,
  };
}
