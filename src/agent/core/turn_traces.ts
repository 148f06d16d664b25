/**
 * The turn inspector's record: for each recent turn, every request homed sent the LLM (the system message by
 * section, the reference block by section, the history, the messages and tools offered) and what came back, with
 * latency, tokens and cost — and, when the provider's prefix cache missed, what in the request had changed.
 *
 * Recording only keeps references (the strings are the request's own); token counts, costs and the cache analysis
 * are worked out when someone looks, so a turn pays next to nothing for being inspectable.
 *
 * @module
 */

import type { Clock } from "../../clock.ts";
import type { InputEvent } from "../../io/event.ts";
import type { PromptSection } from "../../prompt/contributor.ts";
import type { ChatMessage, ChatResponse, Usage } from "../../provider/provider.ts";
import { costOf, type Prices } from "../../provider/usage_ledger.ts";
import { type UsageView, usageView } from "../../provider/usage_view.ts";
import { estimateTokens, messagesTokens, messageTokens } from "../../context/tokens.ts";
import { withReference } from "./prompt.ts";

/** How many turns are kept (the oldest goes first). */
export const TRACED_TURNS = 50;

/** One request of a turn, as recorded. */
interface RequestTrace {
  round: number;
  /** The persona, then the system sections, as the system message was built. */
  persona: string;
  systemSections: readonly PromptSection[];
  referenceSections: readonly PromptSection[];
  /** The request's messages; `historyEnd` is the index of this turn's first message (after the context's). */
  messages: readonly ChatMessage[];
  historyEnd: number;
  tools: readonly string[];
  /**
   * The lowest trust whose words the request holds (the asker's when nothing lower): below it, the policy holds `act`
   * calls and messages to others for the owner.
   */
  lowestTrustSeen?: string;
  started: number;
  latencyMs?: number;
  response?: ChatResponse;
  error?: string;
}

/** One turn, as recorded. */
interface TurnTrace {
  id: string;
  time: number;
  source: string;
  sender: string;
  trust: string;
  text: string;
  requests: RequestTrace[];
  /** The clock when the turn began (it may have waited in the queue since `time`). */
  started: number;
  finished?: number;
  rounds?: number;
  error?: string;
  /** The local intent that answered, with its template ("HassTurnOn (zh.yaml:12)"): no model was asked. */
  localIntent?: string;
}

/** What {@link TurnTraces.request} gives the agent: where the answer (or the failure) of that request goes. */
export interface RequestHandle {
  answered(response: ChatResponse): void;
  failed(error: unknown): void;
}

/** What the agent records a turn with. */
export interface TurnRecorder {
  request(parts: Omit<RequestTrace, "started" | "latencyMs" | "response" | "error">): RequestHandle;
  finish(outcome: { rounds: number; error?: string; localIntent?: string }): void;
}

/** Options of {@link TurnTraces}. */
export interface TurnTracesOptions {
  clock: Clock;
  /** `llm.prices`, for each turn's cost; none leaves costs `null`. */
  prices?: Prices | undefined;
  /** Turns kept; {@link TRACED_TURNS} by default. */
  keep?: number;
}

/**
 * The recent turns, newest last, for `GET /api/turns`.
 *
 * @example
 * ```ts
 * import { systemClock } from "../../clock.ts";
 *
 * const traces = new TurnTraces({ clock: systemClock });
 * const turn = traces.begin({ id: "ev1", time: 0, source: "http", sender: "owner", trust: "owner", text: "hi" });
 * const request = turn.request({
 *   round: 1,
 *   persona: "# Alfred",
 *   systemSections: [],
 *   referenceSections: [],
 *   messages: [{ role: "system", content: "# Alfred" }, { role: "user", content: "hi" }],
 *   historyEnd: 1,
 *   tools: [],
 * });
 * request.answered({ content: "Hello", toolCalls: [], finishReason: "stop" });
 * turn.finish({ rounds: 1 });
 * traces.list()[0]?.rounds; // 1
 * ```
 */
export class TurnTraces {
  #options: TurnTracesOptions;
  #turns: TurnTrace[] = [];

  constructor(options: TurnTracesOptions) {
    this.#options = options;
  }

  /** Starts recording the turn of an input (its text as the agent read it). */
  begin(event: Pick<InputEvent, "id" | "time" | "source" | "sender" | "trust"> & { text: string }): TurnRecorder {
    const { clock } = this.#options;
    const turn: TurnTrace = {
      id: event.id,
      time: event.time,
      source: event.source,
      sender: event.sender,
      trust: event.trust,
      text: event.text,
      requests: [],
      started: clock.now(),
    };
    this.#turns.push(turn);
    const keep = this.#options.keep ?? TRACED_TURNS;
    if (this.#turns.length > keep) this.#turns.splice(0, this.#turns.length - keep);
    return {
      request: (parts) => {
        // The messages are copied shallowly: the agent cuts tool results of later rounds in place.
        const trace: RequestTrace = {
          ...parts,
          messages: parts.messages.map((message) => ({ ...message })),
          started: clock.now(),
        };
        turn.requests.push(trace);
        return {
          answered: (response) => {
            trace.response = response;
            trace.latencyMs = clock.now() - trace.started;
          },
          failed: (error) => {
            trace.error = error instanceof Error ? error.message : String(error);
            trace.latencyMs = clock.now() - trace.started;
          },
        };
      },
      finish: (outcome) => {
        turn.finished = clock.now();
        turn.rounds = outcome.rounds;
        if (outcome.error) turn.error = outcome.error;
        if (outcome.localIntent) turn.localIntent = outcome.localIntent;
      },
    };
  }

  /** The turns, newest first, as `GET /api/turns` lists them. */
  list(): TurnSummary[] {
    return this.#turns.toReversed().map((turn) => this.#summary(turn));
  }

  /** One turn with every request, as `GET /api/turns/<id>` shows it; undefined when not (or no longer) kept. */
  get(id: string): TurnDetail | undefined {
    const at = this.#turns.findIndex((turn) => turn.id === id);
    if (at < 0) return undefined;
    const turn = this.#turns[at]!;
    // The request before each one (the previous turn's last for the first): what the provider could have cached.
    const before = this.#turns.slice(0, at).flatMap((earlier) => earlier.requests).at(-1);
    return {
      ...this.#summary(turn),
      requests: turn.requests.map((request, index) =>
        this.#request(request, index === 0 ? before : turn.requests[index - 1], index > 0)
      ),
    };
  }

  #summary(turn: TurnTrace): TurnSummary {
    const usage = sumUsage(turn.requests.map((request) => request.response?.usage));
    return {
      id: turn.id,
      time: new Date(turn.time).toISOString(),
      source: turn.source,
      sender: turn.sender,
      trust: turn.trust,
      text: turn.text.length > 200 ? `${turn.text.slice(0, 199)}…` : turn.text,
      rounds: turn.rounds ?? turn.requests.length,
      latency_ms: turn.finished === undefined ? null : Math.max(0, turn.finished - turn.started),
      prompt_tokens: usage.promptTokens,
      completion_tokens: usage.completionTokens,
      cache_hit_tokens: usage.cacheHitTokens,
      cost: this.#options.prices ? round6(costOf(usage, this.#options.prices)) : null,
      ...(turn.error ? { error: turn.error } : {}),
      ...(turn.localIntent ? { local_intent: turn.localIntent } : {}),
    };
  }

  #request(request: RequestTrace, previous: RequestTrace | undefined, sameTurn: boolean): RequestDetail {
    const usage = request.response?.usage;
    const history = request.messages.slice(1, request.historyEnd);
    return {
      round: request.round,
      system_sections: [
        { title: "Persona", tokens: estimateTokens(request.persona) },
        ...request.systemSections.map((section) => ({
          title: section.title,
          tokens: estimateTokens(`## [homed] ${section.title}\n${section.body.trim()}`),
        })),
      ],
      reference_sections: request.referenceSections.map((section) => ({
        title: section.title,
        tokens: estimateTokens(withReference([section], "")),
      })),
      history: { messages: history.length, tokens: messagesTokens(history) },
      messages: request.messages.map((message) => ({
        role: message.role,
        content: message.content,
        tokens: messageTokens(message),
        ...(message.role === "assistant" && message.tool_calls ? { tool_calls: message.tool_calls } : {}),
      })),
      tools: request.tools,
      ...(request.lowestTrustSeen ? { lowest_trust_seen: request.lowestTrustSeen } : {}),
      response: request.response
        ? {
          content: request.response.content,
          tool_calls: request.response.toolCalls,
          finish_reason: request.response.finishReason,
          usage: request.response.usage ? usageView(request.response.usage) : null,
        }
        : null,
      ...(request.error ? { error: request.error } : {}),
      latency_ms: request.latencyMs ?? null,
      cache: {
        hit_tokens: usage?.cacheHitTokens ?? null,
        miss_tokens: usage?.cacheMissTokens ?? null,
        ...cacheMiss(request, previous, sameTurn),
      },
    };
  }
}

/**
 * Why the provider could not serve this request's prefix from its cache: the first message that differs from what
 * the request before it sent, within the part that request had in common with this one (the system message and the
 * history; within a turn, everything the last round sent). Nothing when the prefix was kept.
 */
function cacheMiss(
  request: RequestTrace,
  previous: RequestTrace | undefined,
  sameTurn: boolean,
): { shared_tokens: number; miss_reason?: string } {
  if (!previous) return { shared_tokens: 0, miss_reason: "The first request since homed started: nothing was cached" };
  // What the earlier request could leave cached for this one: its system message and history, or (in the same turn)
  // all it sent.
  const cacheable = sameTurn ? previous.messages.length : previous.historyEnd;
  let same = 0;
  while (
    same < cacheable && same < request.messages.length &&
    sameMessage(request.messages[same]!, previous.messages[same]!)
  ) same++;
  const shared = messagesTokens(request.messages.slice(0, same));
  if (same >= cacheable) return { shared_tokens: shared };
  if (same === 0) {
    const changed = changedSection(request, previous);
    return { shared_tokens: 0, miss_reason: `The system message changed: ${changed}` };
  }
  const now = request.messages[same];
  const then = previous.messages[same]!;
  const reason = now === undefined
    ? `The request is shorter than the one before: message ${same} (${then.role}) is gone`
    : sameTurn
    ? `Message ${same} (${then.role}) differs from the round before: a tool result was cut to fit the context budget`
    : `History message ${same} (${then.role}) differs from the request before: older entries were dropped to fit ` +
      `the context budget, or forgotten`;
  return { shared_tokens: shared, miss_reason: reason };
}

/** Which part of the system message differs between two requests. */
function changedSection(request: RequestTrace, previous: RequestTrace): string {
  if (request.persona !== previous.persona) return "the persona (personal.md) changed";
  const titles = new Set([...request.systemSections, ...previous.systemSections].map((section) => section.title));
  for (const title of titles) {
    const now = request.systemSections.find((section) => section.title === title);
    const then = previous.systemSections.find((section) => section.title === title);
    if (!now) return `section "${title}" was removed`;
    if (!then) return `section "${title}" was added`;
    if (now.body !== then.body) return `section "${title}" changed`;
  }
  return "the order of its sections changed";
}

function sameMessage(a: ChatMessage, b: ChatMessage): boolean {
  if (a === b) return true;
  if (a.role !== b.role || a.content !== b.content) return false;
  if (a.role === "assistant" && b.role === "assistant") {
    return JSON.stringify(a.tool_calls ?? []) === JSON.stringify(b.tool_calls ?? []);
  }
  if (a.role === "tool" && b.role === "tool") return a.tool_call_id === b.tool_call_id;
  return true;
}

function sumUsage(usages: ReadonlyArray<Usage | undefined>): Usage {
  const total: Usage = { promptTokens: 0, completionTokens: 0, totalTokens: 0, cacheHitTokens: 0, cacheMissTokens: 0 };
  for (const usage of usages) {
    if (!usage) continue;
    total.promptTokens += usage.promptTokens;
    total.completionTokens += usage.completionTokens;
    total.totalTokens += usage.totalTokens;
    total.cacheHitTokens += usage.cacheHitTokens;
    total.cacheMissTokens += usage.cacheMissTokens;
  }
  return total;
}

function round6(value: number): number {
  return Math.round(value * 1e6) / 1e6;
}

/** A turn as `GET /api/turns` lists it. */
export interface TurnSummary {
  id: string;
  time: string;
  source: string;
  sender: string;
  trust: string;
  text: string;
  rounds: number;
  latency_ms: number | null;
  prompt_tokens: number;
  completion_tokens: number;
  cache_hit_tokens: number;
  cost: number | null;
  error?: string;
  /** The local intent that answered this turn without a model ("local intent: HassTurnOn"). */
  local_intent?: string;
}

/** One request as `GET /api/turns/<id>` shows it. */
export interface RequestDetail {
  round: number;
  system_sections: Array<{ title: string; tokens: number }>;
  reference_sections: Array<{ title: string; tokens: number }>;
  history: { messages: number; tokens: number };
  messages: Array<{ role: string; content: string | null; tokens: number; tool_calls?: unknown }>;
  tools: readonly string[];
  /** The lowest trust whose words this request held: below the turn's own, `act` and messages to others were held. */
  lowest_trust_seen?: string;
  response: { content: string; tool_calls: unknown; finish_reason: string; usage: UsageView | null } | null;
  error?: string;
  latency_ms: number | null;
  cache: { hit_tokens: number | null; miss_tokens: number | null; shared_tokens: number; miss_reason?: string };
}

/** A turn with its requests. */
export interface TurnDetail extends TurnSummary {
  requests: RequestDetail[];
}
