/**
 * The daemon's agent step: the agent over the IO manager, provider, tools and context, with the `agent.*` and
 * `llm.*` settings it uses.
 *
 * @module
 */

import { collectIdleGarbage } from "./idle_collection.ts";
import type { Logger } from "@logtape/logtape";
import type { Clock } from "../clock.ts";
import type { Config } from "../config/schema.ts";
import type { ContextWindow } from "../context/context_window.ts";
import type { IOManager } from "../io/io_manager.ts";
import type { PromptContributor } from "../prompt/contributor.ts";
import type { Provider } from "../provider/provider.ts";
import type { ToolRegistry } from "../tools/registry.ts";
import { Agent } from "./core/agent.ts";
import type { MediaService } from "../media/media_service.ts";
import type { TurnTraces } from "./core/turn_traces.ts";
import type { Persona } from "./personal.ts";
import type { LocalIntents } from "../intents/local_intents.ts";

/** Options of {@link buildAgent}. */
export interface AgentSetupOptions {
  /** The `agent` and `llm` sections. */
  config: Pick<Config, "agent" | "llm">;
  io: IOManager;
  provider: Provider;
  tools: ToolRegistry;
  persona: Persona;
  context: ContextWindow;
  clock: Clock;
  /** The `agent` logger. */
  logger: Logger;
  /** How long the turn in flight may still take at shutdown. */
  shutdownGraceMs: number;
  /** What adds to the prompt (knowledge, plugins, memory), in order. */
  promptContributors: readonly PromptContributor[];
  /** Seeing and hearing (attachments, spoken replies). */
  media?: MediaService;
  /** The turn inspector's record. */
  traces?: TurnTraces;
  /** Everyday commands without a model; used as `agent.local_intents` says. */
  localIntents?: LocalIntents;
  /** Why no model can answer now, or undefined when one may (the provider chain's breakers and budget). */
  modelDown?: () => string | undefined;
  /** The household's time zone for the prompt's "Now". */
  timezone?: () => string;
}

/**
 * Makes the agent (the daemon starts it last but the forward client, once the listener is up).
 *
 * @example
 * ```ts
 * declare const options: AgentSetupOptions;
 * const agent = buildAgent(options);
 * agent.status();
 * ```
 */
export function buildAgent(options: AgentSetupOptions): Agent {
  const { agent, llm } = options.config;
  return new Agent({
    io: options.io,
    provider: options.provider,
    tools: options.tools,
    persona: options.persona,
    clock: options.clock,
    logger: options.logger,
    maxToolRounds: agent.max_tool_rounds,
    maxTools: llm.max_tools,
    context: options.context,
    turnTimeoutMs: llm.turn_timeout,
    shutdownGraceMs: options.shutdownGraceMs,
    keepReasoning: llm.thinking === true,
    promptContributors: options.promptContributors,
    ...(options.media ? { media: options.media } : {}),
    ...(options.traces ? { traces: options.traces } : {}),
    ...(options.localIntents ? { localIntents: { intents: options.localIntents, mode: agent.local_intents } } : {}),
    ...(options.modelDown ? { modelDown: options.modelDown } : {}),
    ...(options.timezone ? { timezone: options.timezone } : {}),
    whenIdle: collectIdleGarbage,
  });
}
