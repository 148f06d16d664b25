/**
 * The answer homed gives without a model: a sure local intent under `agent.local_intents: prefer`, and when no model
 * answers, a local intent, a reminder's own text or the offline reply. Apart from `agent.ts` because it is the one
 * path of a turn that never reaches a provider.
 *
 * @module
 */

import type { InputEvent } from "../../io/event.ts";
import type { MessagePayload } from "../../io/message_payload.ts";
import type { LocalIntents, Understood } from "../../intents/local_intents.ts";
import { phrases, replyLanguage } from "../../intents/replies.ts";
import type { ChatMessage } from "../../provider/provider.ts";
import { isAvailabilityFailure } from "../../provider/circuit_breaker.ts";
import { type LlmFailureCode, ProviderError } from "../../provider/provider_error.ts";
import { escapeMarkers } from "../../text/untrusted.ts";
import type { ToolRegistry } from "../../tools/registry.ts";
import type { Persona } from "../personal.ts";
import type { TurnToolContext } from "./turn_types.ts";

/**
 * Whether a provider failure means "no model answers" (not "this request was wrong"): the circuit breaker's own
 * availability failures, or the chain's `unavailable` (every provider down or over budget). Local intents step in.
 */
export function modelGone(error: unknown): error is ProviderError {
  return isAvailabilityFailure(error) || (error instanceof ProviderError && error.code === "unavailable");
}

/** No model answers: the failure's code (or `unavailable` when none was asked) and its words. */
export interface ModelGone {
  code: LlmFailureCode;
  why: string;
}

/** What a turn answered without a model needs of it. */
export interface LocalTurnParts {
  event: InputEvent;
  message: MessagePayload;
  /** The turn's messages so far (the tagged user message). */
  turn: ChatMessage[];
  /** The words as the context keeps them (with what the attachments said). */
  text: string;
  context: TurnToolContext;
}

/** What {@link withoutModel} needs of the agent. */
export interface WithoutModelDeps {
  localIntents?: { intents: LocalIntents; mode: "prefer" | "fallback" | "off" } | undefined;
  tools: ToolRegistry;
  persona: Persona;
  /** The agent's counters, counted here. */
  counts: { localTurns: number; offlineReplies: number };
  /** A finished turn enters layer 1, and the after-turn hooks learn of it. */
  remember(event: InputEvent, turn: ChatMessage[], text: string, reply: string): void;
}

/**
 * The answer homed gives without a model, or undefined when the model should answer. With `down` (no model
 * answers): a reminder says its own text; a command the templates cover runs locally (unless `agent.local_intents:
 * off`); anything else fails at once with the same code, its message saying — in the persona's language — that the
 * model is not answering, why, and what still works: never silence, never a wait. Without `down`, only `prefer`
 * answers, and only what it is sure of. An answered exchange is remembered like any other.
 *
 * @throws {ProviderError} with `down.code` when nothing here can answer
 */
export async function withoutModel(
  deps: WithoutModelDeps,
  parts: LocalTurnParts,
  down: ModelGone | undefined,
): Promise<{ reply: string; rounds: number; localIntent?: string } | undefined> {
  const why = down?.why;
  const { event, message, turn, text } = parts;
  const local = deps.localIntents;
  const mode = local?.mode ?? "off";
  if (why === undefined && mode !== "prefer") return undefined;
  const scheduled = event.source.startsWith("timer:") ? event.payload.schedule_text : undefined;
  let understood: Understood | undefined;
  if (typeof scheduled !== "string" && local && mode !== "off") {
    understood = local.intents.understand(message.text, { open: why !== undefined });
  }
  // A model answers: `prefer` takes only what it is sure of (a reminder firing is the model's to act on).
  if (why === undefined && !understood?.sure) return undefined;
  let reply: string;
  let localIntent: string;
  if (understood && local) {
    // The plan came from the sender's own words alone: nothing else in the context can have steered it.
    const context = { ...parts.context, lowestTrustSeen: event.trust };
    const tools = deps.tools;
    reply = await local.intents.run(understood, {
      call: (tool, args) => tools.call(tool, JSON.stringify(args), context),
      sender: event.sender,
      trust: event.trust,
    });
    localIntent = `${understood.match.intent} (${understood.match.template})`;
    deps.counts.localTurns++;
  } else if (typeof scheduled === "string") {
    reply = phrases(replyLanguage(deps.persona.text, scheduled)).reminderFired(scheduled);
    localIntent = "reminder (no model answered)";
    deps.counts.offlineReplies++;
  } else {
    deps.counts.offlineReplies++;
    const say = phrases(replyLanguage(deps.persona.text, message.text));
    throw new ProviderError(down?.code ?? "unavailable", say.offline(why ?? ""));
  }
  turn.push({ role: "assistant", content: escapeMarkers(reply) });
  deps.remember(event, turn, text, reply);
  return { reply, rounds: 0, localIntent };
}
