/**
 * The OpenAI door's `payload.model_call`: reading it, the stateless call it may ask for, and the check that a
 * requested `response_format` reached the model. Apart from `agent.ts` because it is the door's concern, not a turn's.
 *
 * @module
 */

import type { Clock } from "../../clock.ts";
import type { TurnResult } from "../../io/device.ts";
import type { InputEvent } from "../../io/event.ts";
import type { IOManager } from "../../io/io_manager.ts";
import type { ChatMessage, ChatResponse, Provider, ResponseFormat, Usage } from "../../provider/provider.ts";
import { ProviderError } from "../../provider/provider_error.ts";
import type { ToolSpec } from "../../tools/tool.ts";
import { TurnDeadline } from "./turn_deadline.ts";
import type { AnsweredTurn, TurnUsage } from "./turn_types.ts";

/** A stateless call's messages and tools, as the model gets them. */
export interface StatelessCall {
  messages: ChatMessage[];
  tools?: ToolSpec[];
}

/**
 * What a request/response channel (the OpenAI door) asks of a turn besides the words, as `payload.model_call`; the
 * agent reads it only from a channel that answers inline (`IOManager.answersInline`).
 */
export interface ModelCall {
  /** The answer's shape: sent with every request of the turn, and refused when the provider cannot send it. */
  responseFormat?: ResponseFormat;
  /**
   * A stateless call instead of a turn: these messages and tools go to the model as they are — no persona, context,
   * memory, homed tools or local intents — and nothing of it is remembered (the door's `homed-utility`).
   */
  stateless?: StatelessCall;
}

/** What {@link statelessCall} needs of the agent. */
export interface StatelessCallDeps {
  provider: Provider;
  io: IOManager;
  clock: Clock;
  /** `llm.turn_timeout`. */
  turnTimeoutMs?: number | undefined;
  /** The call's cancellation (the agent's turn signal: shutdown). */
  signal: AbortSignal;
  /** The result of a call that threw. */
  failed(event: InputEvent, channel: string, error: unknown): TurnResult;
}

/**
 * A stateless call ({@link ModelCall.stateless}): the caller's own messages and tools go to the model as they are,
 * under `llm.turn_timeout` — no persona, context, memory, homed tools or local intents — and nothing is remembered.
 * The answer (text or tool calls) comes back on the caller's own channel. Never throws.
 */
export async function statelessCall(
  deps: StatelessCallDeps,
  event: InputEvent,
  call: ModelCall & { stateless: StatelessCall },
  stream: boolean,
): Promise<TurnResult> {
  const { provider, io, clock } = deps;
  const deadline = new TurnDeadline(clock, deps.turnTimeoutMs ?? 90_000);
  const onDelta = (text: string) => io.report(event.source, { type: "delta", eventId: event.id, text });
  try {
    const request = {
      messages: call.stateless.messages,
      ...(call.stateless.tools?.length ? { tools: call.stateless.tools } : {}),
      ...(call.responseFormat ? { responseFormat: call.responseFormat } : {}),
    };
    const response = await deadline.run(
      (signal) => provider.chat(request, stream ? { signal, onDelta } : { signal }),
      deps.signal,
    );
    checkFormatSent(call.responseFormat, response);
    const usage = addUsage(undefined, response.usage);
    const answered: AnsweredTurn = {
      eventId: event.id,
      reply: response.content,
      channel: event.source,
      rounds: 1,
      ...(usage ? { usage } : {}),
      toolCalls: response.toolCalls,
      finishReason: response.finishReason,
    };
    return answered;
  } catch (error) {
    return deps.failed(event, event.source, error);
  }
}

/**
 * The provider that answered could not send the request's `response_format` (an adapter sends messages and tools
 * only): its answer was not made to that shape.
 */
export class FormatNotSent extends ProviderError {}

/** Throws {@link FormatNotSent} when `format` was asked for and the answer says it did not reach the model. */
export function checkFormatSent(format: ResponseFormat | undefined, response: ChatResponse): void {
  if (format === undefined || response.responseFormatSent === true) return;
  throw new FormatNotSent(
    "bad_request",
    "The LLM provider that answered cannot pass response_format on (an adapter, llm.provider: lua, sends only " +
      "messages and tools), so its answer was not made in that format; leave response_format out, or answer it " +
      "with an OpenAI-compatible provider (llm.provider: openai)",
  );
}

/** `sum` with one response's tokens added (unchanged when the response reported none). */
export function addUsage(sum: TurnUsage | undefined, usage: Usage | undefined): TurnUsage | undefined {
  if (!usage) return sum;
  return {
    promptTokens: (sum?.promptTokens ?? 0) + usage.promptTokens,
    completionTokens: (sum?.completionTokens ?? 0) + usage.completionTokens,
    totalTokens: (sum?.totalTokens ?? 0) + usage.totalTokens,
  };
}

const ROLES = new Set(["system", "user", "assistant", "tool"]);

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** A message as the chat wire takes it: a known role, text content (an assistant's may be null with tool calls). */
function isChatMessage(value: unknown): value is ChatMessage {
  if (!isRecord(value) || typeof value.role !== "string" || !ROLES.has(value.role)) return false;
  if (value.role === "tool" && typeof value.tool_call_id !== "string") return false;
  if (value.role === "assistant" && value.tool_calls !== undefined && !Array.isArray(value.tool_calls)) return false;
  return typeof value.content === "string" || (value.role === "assistant" && value.content === null);
}

function isToolSpec(value: unknown): value is ToolSpec {
  return isRecord(value) && typeof value.name === "string" && typeof value.description === "string" &&
    isRecord(value.parameters);
}

function isResponseFormat(value: unknown): value is ResponseFormat {
  return isRecord(value) && (value.type === "json_object" ||
    (value.type === "json_schema" && isRecord(value.json_schema) && typeof value.json_schema.name === "string"));
}

/**
 * `payload.model_call` read: undefined when there is none, `{problem}` when it is not one (the turn then fails as
 * `bad_input` — a malformed stateless call must never become a turn of the conversation).
 *
 * @example
 * ```ts
 * readModelCall({ text: "hi", model_call: { responseFormat: { type: "json_object" } } });
 * // { responseFormat: { type: "json_object" } }
 * readModelCall({ text: "hi", model_call: { stateless: { messages: [] } } });
 * // { problem: "payload.model_call.stateless needs messages of the chat wire (role, text content) and tools …" }
 * ```
 */
export function readModelCall(payload: Readonly<Record<string, unknown>>): ModelCall | { problem: string } | undefined {
  const raw = payload.model_call;
  if (raw === undefined) return undefined;
  if (!isRecord(raw)) return { problem: "payload.model_call must be an object" };
  const call: ModelCall = {};
  if (raw.responseFormat !== undefined) {
    if (!isResponseFormat(raw.responseFormat)) {
      return {
        problem: 'payload.model_call.responseFormat must be {type: "json_object"} or a json_schema with a name',
      };
    }
    call.responseFormat = raw.responseFormat;
  }
  const stateless = raw.stateless;
  if (stateless !== undefined) {
    const messages = isRecord(stateless) ? stateless.messages : undefined;
    const tools = isRecord(stateless) ? stateless.tools ?? [] : undefined;
    if (
      !Array.isArray(messages) || messages.length === 0 || !messages.every(isChatMessage) || !Array.isArray(tools) ||
      !tools.every(isToolSpec)
    ) {
      return {
        problem: "payload.model_call.stateless needs messages of the chat wire (role, text content) and tools " +
          "(name, description, parameters)",
      };
    }
    call.stateless = { messages, ...(tools.length ? { tools } : {}) };
  }
  return call;
}
