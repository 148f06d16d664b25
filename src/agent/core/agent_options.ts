/**
 * The options of the agent, apart from `agent.ts` so the files a turn is split into can name what they take of them.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import type { Clock } from "../../clock.ts";
import type { ContextWindow } from "../../context/context_window.ts";
import type { LocalIntents } from "../../intents/local_intents.ts";
import type { IOManager } from "../../io/io_manager.ts";
import type { MediaService } from "../../media/media_service.ts";
import type { PromptContributor } from "../../prompt/contributor.ts";
import type { Provider } from "../../provider/provider.ts";
import type { ToolRegistry } from "../../tools/registry.ts";
import type { Persona } from "../personal.ts";
import type { TurnTraces } from "./turn_traces.ts";

/** Options of {@link Agent}. */
export interface AgentOptions {
  io: IOManager;
  provider: Provider;
  tools: ToolRegistry;
  persona: Persona;
  clock: Clock;
  logger: Logger;
  /** Most LLM rounds in one turn; the last one is sent without tools. */
  maxToolRounds: number;
  /**
   * Layer 1: the context, bounded by `memory.context_size` entries and `memory.context_tokens` (also the budget of
   * everything sent but the tool declarations); injected so it can be restored and its evictions kept.
   */
  context: ContextWindow;
  /** `llm.turn_timeout`: LLM time one turn may use, all rounds and retries together. */
  turnTimeoutMs?: number;
  /** At shutdown, how long the turn in flight may still take before it is cancelled. */
  shutdownGraceMs?: number;
  /** Keep `reasoning_content` in tool-call turns (DeepSeek thinking mode). */
  keepReasoning: boolean;
  /** Extra prompt parts (knowledge, memory …), in order. */
  promptContributors?: readonly PromptContributor[];
  /** Seeing and hearing: what attachments add to a message, and spoken replies. Without it attachments are listed. */
  media?: MediaService;
  /** The turn inspector's record of each turn's requests (`GET /api/turns`). */
  traces?: TurnTraces;
  /** `llm.max_tools`: most tools one request offers the model (128 by default, DeepSeek's and OpenAI's limit). */
  maxTools?: number;
  /**
   * Everyday commands without a model, and when (`agent.local_intents`): `prefer` — a sure match is answered locally
   * even with a model up; `fallback` — only when no model answers; `off` — never.
   */
  localIntents?: { intents: LocalIntents; mode: "prefer" | "fallback" | "off" };
  /**
   * Why no model can answer now (every provider's breaker open or over budget), or undefined when one may: then a
   * message is not sent to a model at all, and costs no deadline. Without it a model is always tried.
   */
  modelDown?: () => string | undefined;
  /** The household's time zone (`daemon.timezone`, else the system's), for the reference block's "Now". */
  timezone?: () => string;
  /**
   * Called on the heartbeat when no turn runs and none waits: the daemon collects garbage then
   * (`idle_collection.ts`), so its heap never swells between V8's own full collections.
   */
  whenIdle?: () => void;
}
