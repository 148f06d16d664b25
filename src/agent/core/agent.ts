/**
 * The agent: one event loop, one identity. It takes inputs from IOManager in arrival order, runs one turn at a
 * time (a new input waits; it never preempts the turn in flight), and hands the reply to the routed channel's
 * queue without waiting for it, so a slow channel never holds the next turn.
 *
 * @module
 */

import type { TurnResult } from "../../io/device.ts";
import type { InputEvent } from "../../io/event.ts";
import type { Trust } from "../../identity/trust.ts";
import type { PromptSection, TurnRecord } from "../../prompt/contributor.ts";
import type { Service } from "../../service/service.ts";
import type { ToolRegistry } from "../../tools/registry.ts";
import type { ChatMessage, ResponseFormat } from "../../provider/provider.ts";
import { type LlmFailureCode, ProviderError } from "../../provider/provider_error.ts";
import type { ContextWindow } from "../../context/context_window.ts";
import type { Viewer } from "../../identity/visibility.ts";
import { EventLog } from "./event_log.ts";
import { escapeMarkers } from "../../text/untrusted.ts";
import { chooseTools, DEFAULT_MAX_TOOLS } from "../../tools/tool_offer.ts";
import { lowestTrustSeen } from "./prompt.ts";
import { TurnDeadline } from "./turn_deadline.ts";
import type { HomedTurnErrorCode } from "../../io/turn_error.ts";
import { type MessagePayload, readMessage } from "../../io/message_payload.ts";
import type { TurnRecorder } from "./turn_traces.ts";
import type { AnsweredTurn, TurnUsage } from "./turn_types.ts";
import {
  addUsage,
  checkFormatSent,
  FormatNotSent,
  type ModelCall,
  readModelCall,
  type StatelessCall,
  statelessCall,
} from "./model_call.ts";
import { type LocalTurnParts, type ModelGone, modelGone, withoutModel } from "./without_model.ts";
import { fitRequest } from "./fit.ts";
import { acceptableArguments, dispatchFor, finalReply, promptInput, uniqueIds, viewerOf } from "./turn_helpers.ts";
import { runToolCalls } from "./tool_calls.ts";

import type { AgentOptions } from "./agent_options.ts";
import { coalesce } from "./burst.ts";
import { deliver } from "./delivery.ts";
import { type PerceivedTurn, perceiveTurn, type PreparedTurn, prepareTurn } from "./turn_prompt.ts";

export type { AgentOptions } from "./agent_options.ts";
export type { AnsweredTurn, TurnToolContext, TurnUsage } from "./turn_types.ts";
export { type ModelCall, readModelCall, type StatelessCall } from "./model_call.ts";

/** The one view of the tools a turn uses throughout. */
type ToolView = ReturnType<ToolRegistry["view"]>;

/** How a turn the agent ran failed: the provider's code for the LLM's failures, else io's own (`internal`, ...). */
type FailureCode = LlmFailureCode | HomedTurnErrorCode;

/** The butler's mind. */
export class Agent implements Service {
  readonly name = "agent";
  #options: AgentOptions;
  #context: ContextWindow;
  #events = new EventLog();
  /** Inputs whose reply is spoken (`speech.reply_with_voice`), until it is handed over. */
  #speakTo = new Set<string>();
  #leftOut: string[] = [];
  #counts = {
    turns: 0,
    failedTurns: 0,
    turnTimeouts: 0,
    cutToolResults: 0,
    lowerTrustReferences: 0,
    localTurns: 0,
    offlineReplies: 0,
    statelessCalls: 0,
  };
  /** The lowest trust the last turn's reference block held (with the turn's own), for `/api/status`. */
  #lastLowestTrustSeen: Trust | undefined;
  #busy = false;
  #lastTurnMs: number | undefined;
  #lastHeartbeat: number | undefined;
  #intake = new AbortController();
  #turn = new AbortController();
  #loop: Promise<void> | undefined;

  /**
   * @example
   * ```ts
   * import { systemClock } from "../../clock.ts";
   * import type { IOManager } from "../../io/io_manager.ts";
   * import { log } from "../../log/logging.ts";
   * import { ToolRegistry } from "../../tools/registry.ts";
   * import { loadPersona } from "../personal.ts";
   * import type { Provider } from "../../provider/provider.ts";
   * import { ContextWindow } from "../../context/context_window.ts";
   *
   * declare const io: IOManager;
   * declare const provider: Provider;
   *
   * const agent = new Agent({
   *   io,
   *   provider,
   *   tools: new ToolRegistry({ clock: systemClock }),
   *   persona: await loadPersona({ path: "personal.md", explicit: false }),
   *   clock: systemClock,
   *   logger: log("agent"),
   *   maxToolRounds: 10,
   *   context: new ContextWindow({ maxEntries: 30, maxTokens: 48_000 }),
   *   keepReasoning: false,
   * });
   * await agent.start();
   * ```
   */
  constructor(options: AgentOptions) {
    this.#options = options;
    this.#context = options.context;
  }

  get #contextTokens(): number {
    return this.#context.maxTokens;
  }

  /** Largest single tool result, in estimated tokens: a quarter of the context budget, at most 8,000. */
  get #maxToolResultTokens(): number {
    return Math.min(8_000, Math.floor(this.#contextTokens / 4));
  }

  get #maxTools(): number {
    return this.#options.maxTools ?? DEFAULT_MAX_TOOLS;
  }

  /** The last turn's left-out tools, for status; logged when the set changes (not once per turn). */
  #noteLeftOut(leftOut: readonly string[]): void {
    const key = leftOut.join(",");
    if (key !== this.#leftOut.join(",") && leftOut.length) {
      this.#options.logger.warning(
        "More tools than llm.max_tools ({max}): this turn left out {count} ({names}); name the ones you want with " +
          "mcp.servers.<name>.include",
        { max: this.#maxTools, count: leftOut.length, names: leftOut.slice(0, 20).join(", ") },
      );
    }
    this.#leftOut = [...leftOut];
  }

  /** Starts the event loop. */
  start(): Promise<void> {
    this.#loop ??= this.#run();
    return Promise.resolve();
  }

  /**
   * Takes no further input: queued messages are answered at once with `shutting_down` (HTTP 503), new ones are
   * refused, the turn in flight gets `shutdownGraceMs` (10 s) to finish and is then cancelled.
   *
   * @example
   * ```ts
   * declare const agent: Agent;
   *
   * await agent.stop();
   * ```
   */
  async stop(): Promise<void> {
    const { io, clock } = this.#options;
    this.#intake.abort();
    for (const event of io.closeInputs()) {
      if (event.type !== "message") continue;
      this.#finish(
        event,
        this.#failure(event, event.source, "shutting_down", "homed is shutting down; the message was not answered"),
      );
    }
    if (!this.#loop) return;
    const cancel = clock.after(
      this.#options.shutdownGraceMs ?? 10_000,
      () => this.#turn.abort(new Error("homed is shutting down")),
    );
    try {
      await this.#loop;
    } finally {
      cancel();
    }
  }

  /** Local bookkeeping on the heartbeat, and `whenIdle` when nothing runs or waits; never calls the LLM. */
  heartbeat(): void {
    const now = this.#options.clock.now();
    this.#lastHeartbeat = now;
    this.#events.forgetBefore(now - 86_400_000);
    if (!this.#busy && this.#options.io.queued === 0) this.#options.whenIdle?.();
  }

  /** Counters for `/api/status`. */
  status(): Record<string, unknown> {
    return {
      turns: this.#counts.turns,
      failed_turns: this.#counts.failedTurns,
      turn_timeouts: this.#counts.turnTimeouts,
      cut_tool_results: this.#counts.cutToolResults,
      lower_trust_reference_turns: this.#counts.lowerTrustReferences,
      local_intent_turns: this.#counts.localTurns,
      offline_replies: this.#counts.offlineReplies,
      stateless_calls: this.#counts.statelessCalls,
      local_intents: this.#options.localIntents
        ? { mode: this.#options.localIntents.mode, ...this.#options.localIntents.intents.counts() }
        : null,
      max_tools: this.#maxTools,
      tools_left_out: [...this.#leftOut],
      last_turn_lowest_trust_seen: this.#lastLowestTrustSeen ?? null,
      busy: this.#busy,
      queued: this.#options.io.queued,
      context_entries: this.#context.size,
      context_tokens: this.#context.tokens,
      context_shrinks: this.#context.shrinks,
      last_turn_ms: this.#lastTurnMs ?? null,
      last_heartbeat: this.#lastHeartbeat === undefined ? null : new Date(this.#lastHeartbeat).toISOString(),
    };
  }

  /** Entries in the context (layer 1). */
  get contextEntries(): number {
    return this.#context.size;
  }

  async #run(): Promise<void> {
    for (;;) {
      const event = await this.#options.io.next(this.#intake.signal);
      if (!event) return;
      if (event.type !== "message") {
        this.#events.record(event);
        continue;
      }
      this.#busy = true;
      try {
        const turn = this.#coalesced(event);
        this.#finish(turn, await this.#turnFor(turn));
      } catch (error) {
        this.#options.logger.error("Turn {id} crashed: {error}", { id: event.id, error });
      } finally {
        this.#busy = false;
      }
    }
  }

  /** `event` with the burst behind it folded in: see {@link coalesce}. */
  #coalesced(event: InputEvent): InputEvent {
    return coalesce(this.#options.io, this.#options.logger, event);
  }

  /** Runs one turn; never throws. The result names the channel the reply is meant for. */
  async #turnFor(event: InputEvent): Promise<TurnResult> {
    const { io, clock } = this.#options;
    const started = clock.monotonic();
    let channel = io.replyChannel(event);
    // The payload is read once here; the turn's steps take what they need of it.
    const message = readMessage(event.payload);
    // Only a request/response channel (the OpenAI door) may ask for a shape or a stateless call.
    const read = io.answersInline(event.source, event.source) ? readModelCall(event.payload) : undefined;
    const call = read && "problem" in read ? undefined : read;
    let result: TurnResult;
    if (read && "problem" in read) {
      result = this.#failure(event, channel, "bad_input", read.problem);
    } else if (call?.stateless) {
      result = await this.#statelessCall(event, { ...call, stateless: call.stateless }, message.stream);
    } else if (message.text.trim() === "") {
      result = this.#failure(event, channel, "bad_input", "A message event needs a non-empty payload.text");
    } else {
      const trace = this.#options.traces?.begin({ ...event, text: message.text });
      try {
        const turn = await this.#converse(
          event,
          message,
          {
            current: () => channel,
            set: (next) => {
              channel = next;
            },
          },
          trace,
          call?.responseFormat,
        );
        const answered: AnsweredTurn = {
          eventId: event.id,
          reply: turn.reply,
          channel,
          rounds: turn.rounds,
          ...(turn.usage ? { usage: turn.usage } : {}),
        };
        result = answered;
        trace?.finish({ rounds: turn.rounds, ...(turn.localIntent ? { localIntent: turn.localIntent } : {}) });
        this.#counts.turns++;
      } catch (error) {
        result = this.#failed(event, channel, error);
        trace?.finish({ rounds: 0, error: `${result.error!.code}: ${result.error!.message}` });
      }
    }
    this.#lastTurnMs = Math.round(clock.monotonic() - started);
    return result;
  }

  /** The result of a turn that threw: the provider's code and words, or `internal`, or `shutting_down`. */
  #failed(event: InputEvent, channel: string, error: unknown): TurnResult {
    const { logger } = this.#options;
    let code: FailureCode = error instanceof ProviderError ? error.code : "internal";
    let message = error instanceof ProviderError
      ? error.message
      : `Internal error in homed: ${(error as Error)?.message ?? String(error)}`;
    if (this.#turn.signal.aborted) {
      code = "shutting_down";
      message = "homed is shutting down; the turn in flight was stopped before it finished";
    } else if (error instanceof ProviderError) {
      logger.warning("Turn {id} failed: {message}", { id: event.id, message });
    } else {
      logger.error("Turn {id} failed: {error}", { id: event.id, error });
    }
    const failed: AnsweredTurn = {
      ...this.#failure(event, channel, code, message),
      ...(error instanceof FormatNotSent ? { param: "response_format" } : {}),
    };
    return failed;
  }

  /**
   * A stateless call ({@link ModelCall.stateless}): the caller's own messages and tools go to the model as they are,
   * under `llm.turn_timeout` — no persona, context, memory, homed tools or local intents — and nothing is remembered.
   * The answer (text or tool calls) comes back on the caller's own channel. Never throws.
   */
  #statelessCall(
    event: InputEvent,
    call: ModelCall & { stateless: StatelessCall },
    stream: boolean,
  ): Promise<TurnResult> {
    const { provider, io, clock, turnTimeoutMs } = this.#options;
    this.#turn = new AbortController();
    this.#counts.statelessCalls++;
    const failed = (event: InputEvent, channel: string, error: unknown) => this.#failed(event, channel, error);
    return statelessCall(
      { provider, io, clock, turnTimeoutMs, signal: this.#turn.signal, failed },
      event,
      call,
      stream,
    );
  }

  #failure(event: InputEvent, channel: string, code: FailureCode, message: string): TurnResult {
    this.#counts.failedTurns++;
    if (code === "timeout") this.#counts.turnTimeouts++;
    return { eventId: event.id, reply: "", channel, rounds: 0, error: { code, message } };
  }

  /** Hands the outcome over without waiting for slow channels: see {@link deliver}. */
  #finish(event: InputEvent, result: TurnResult): void {
    const { io, logger, media } = this.#options;
    const speak = this.#speakTo.delete(event.id) && !result.error;
    deliver({ io, logger, media }, event, result, speak);
  }

  /** The answer homed gives without a model, or undefined when the model should answer: see {@link withoutModel}. */
  #withoutModel(
    parts: LocalTurnParts,
    down: ModelGone | undefined,
  ): Promise<{ reply: string; rounds: number; localIntent?: string } | undefined> {
    const { localIntents, tools, persona } = this.#options;
    const remember = (event: InputEvent, turn: ChatMessage[], text: string, reply: string) =>
      this.#remember(event, turn, text, reply);
    return withoutModel({ localIntents, tools, persona, counts: this.#counts, remember }, parts, down);
  }

  /** A finished turn enters layer 1, and the after-turn hooks learn of it. */
  #remember(event: InputEvent, turn: ChatMessage[], text: string, reply: string, taint = event.trust): void {
    const origin = {
      eventId: event.id,
      time: event.time,
      source: event.source,
      sender: event.sender,
      trust: event.trust,
      ...(taint === event.trust ? {} : { taint }),
    };
    this.#context.appendTurn(turn, origin);
    this.#afterTurn({ ...origin, text, reply });
  }

  /**
   * The lowest trust whose words the reference block holds, with the turn's own: kept for `/api/status`, and logged
   * (and counted) when it is lower than the sender's — a guest's words in a household member's or the owner's turn.
   */
  #noteTrustSeen(event: InputEvent, reference: readonly PromptSection[]): Trust {
    const seen = lowestTrustSeen(event.trust, reference);
    this.#lastLowestTrustSeen = seen;
    if (seen !== event.trust) {
      this.#counts.lowerTrustReferences++;
      const from = reference.filter((section) => section.items?.some((item) => item.trust === seen))
        .map((section) => section.title);
      this.#options.logger.info(
        "Turn {id} (trust {trust}) carries words of trust {seen} in its reference block ({sections})",
        { id: event.id, trust: event.trust, seen, sections: from.join("; ") },
      );
    }
    return seen;
  }

  /** Tells contributors about a finished exchange; each hook is isolated (a throw or rejection is only logged). */
  #afterTurn(record: TurnRecord): void {
    for (const contributor of this.#options.promptContributors ?? []) {
      if (!contributor.afterTurn) continue;
      Promise.resolve().then(() => contributor.afterTurn!(record)).catch((error) =>
        this.#options.logger.error("An after-turn hook failed for {id}: {error}", { id: record.eventId, error })
      );
    }
  }

  /** The messages of one request, within `memory.context_tokens`: see {@link fitRequest}. */
  #fit(system: ChatMessage, first: ChatMessage, turn: ChatMessage[], viewer: Viewer): ChatMessage[] {
    return fitRequest({ context: this.#context, logger: this.#options.logger }, system, first, turn, viewer);
  }

  /** The turn's prompt up to the first request: see {@link prepareTurn}. */
  #prepare(
    event: InputEvent,
    message: MessagePayload,
    perceived: PerceivedTurn,
    route: { current(): string; set(channel: string): void },
    signal: AbortSignal,
    format: ResponseFormat | undefined,
  ): Promise<PreparedTurn> {
    const deps = {
      ...this.#options,
      context: this.#context,
      events: this.#events,
      speak: (eventId: string) => this.#speakTo.add(eventId),
      noteTrustSeen: (event: InputEvent, reference: readonly PromptSection[]) => this.#noteTrustSeen(event, reference),
    };
    return prepareTurn(deps, event, message, perceived, route, signal, format);
  }

  /** A command dispatched past the model: its answer (homed's own decision, or its tool's result) is the reply. */
  async #dispatched(
    event: InputEvent,
    perceived: PerceivedTurn,
    answered: () => Promise<string>,
  ): Promise<{ reply: string; rounds: number }> {
    const { turn, text } = perceived;
    const answer = await answered();
    const reply = answer.trim() === "" ? "(The command gave no output.)" : answer;
    turn.push({ role: "assistant", content: escapeMarkers(reply) });
    this.#remember(event, turn, text, reply);
    return { reply, rounds: 0 };
  }

  async #converse(
    event: InputEvent,
    message: MessagePayload,
    route: { current(): string; set(channel: string): void },
    trace: TurnRecorder | undefined,
    format?: ResponseFormat,
  ): Promise<{ reply: string; rounds: number; localIntent?: string; usage?: TurnUsage }> {
    const { clock } = this.#options;
    // One view of the tools for the whole turn: a plugin reload meanwhile does not change this turn's tools.
    const tools = this.#options.tools.view();
    this.#turn = new AbortController();
    const signal = this.#turn.signal;
    const deadline = new TurnDeadline(clock, this.#options.turnTimeoutMs ?? 90_000);
    // What the person wrote, without what homed added: a picture's description decides nothing.
    const dispatch = dispatchFor(this.#options.promptContributors, promptInput(event, message.text));
    const perceived = await perceiveTurn(
      { ...this.#options, speak: (id) => this.#speakTo.add(id) },
      event,
      message,
      signal,
    );
    // The owner's yes is decided at once, before any knowledge or memory search (which it never uses); a command
    // that runs a tool waits for the turn's whole tool context (what the reference block carries taints it too).
    if (dispatch && "decision" in dispatch) {
      return await this.#dispatched(event, perceived, () => dispatch.decide(signal));
    }
    const prepared = await this.#prepare(event, message, perceived, route, signal, format);
    const { text, turn, toolContext } = prepared;
    if (dispatch && "tool" in dispatch) {
      const { tool, args } = dispatch;
      return await this.#dispatched(
        event,
        perceived,
        async () => (await tools.call(tool, JSON.stringify(args), toolContext)).content,
      );
    }
    const withoutModel = (down: ModelGone | undefined) =>
      this.#withoutModel({ event, message, turn, text, context: toolContext }, down);
    const why = this.#options.modelDown?.();
    const local = await withoutModel(why === undefined ? undefined : { code: "unavailable", why });
    if (local) return local;
    return await this.#rounds(event, message, prepared, { tools, deadline, signal, trace, format, withoutModel });
  }

  /** The turn's requests to the model and its tool calls, round by round, until it answers (or the rounds run out). */
  async #rounds(
    event: InputEvent,
    message: MessagePayload,
    prepared: PreparedTurn,
    run: {
      tools: ToolView;
      deadline: TurnDeadline;
      signal: AbortSignal;
      trace: TurnRecorder | undefined;
      format: ResponseFormat | undefined;
      withoutModel: (down: ModelGone) => Promise<{ reply: string; rounds: number; localIntent?: string } | undefined>;
    },
  ): Promise<{ reply: string; rounds: number; localIntent?: string; usage?: TurnUsage }> {
    const { provider, io, maxToolRounds, keepReasoning } = this.#options;
    const { systemSections, persona, system, text, images, turn, reference, first, toolContext } = prepared;
    const { tools, deadline, signal, trace, format, withoutModel } = run;
    // Streaming costs more per call than a plain answer, so it is asked for only when the input's device shows
    // the reply as it is produced (`payload.stream`, e.g. /api/chat/stream).
    const streaming = message.stream;
    const onDelta = (delta: string) => io.report(event.source, { type: "delta", eventId: event.id, text: delta });

    // More tools than the model accepts: this turn offers homed's and the devices' and those nearest the message.
    // A tool the policy denies to this sender's trust is not offered at all.
    const offer = chooseTools(tools.listing(event.trust), {
      max: this.#maxTools,
      trust: event.trust,
      text: message.text,
    });
    this.#noteLeftOut(offer.leftOut);
    // The tokens of this turn's answered requests, for a caller that reports them (the OpenAI door's `usage`).
    let usage: TurnUsage | undefined;
    for (let round = 1; round <= maxToolRounds; round++) {
      const lastRound = round === maxToolRounds;
      const specs = lastRound ? [] : offer.specs;
      const messages = this.#fit(system, first, turn, viewerOf(event));
      const traced = trace?.request({
        round,
        persona,
        systemSections,
        referenceSections: reference,
        messages,
        historyEnd: messages.length - turn.length,
        tools: specs.map((spec) => spec.name),
        lowestTrustSeen: toolContext.lowestTrustSeen,
      });
      let response;
      try {
        response = await deadline.run(
          (callSignal) =>
            provider.chat(
              {
                messages,
                ...(specs.length ? { tools: specs } : {}),
                ...(images.length ? { images } : {}),
                // Every round carries the shape: the round that answers is known only once it has.
                ...(format ? { responseFormat: format } : {}),
              },
              streaming ? { signal: callSignal, onDelta } : { signal: callSignal },
            ),
          signal,
        );
      } catch (error) {
        traced?.failed(error);
        // No model answers and nothing has been done yet this turn: the house still answers what it can.
        // (A turn that ran out of llm.turn_timeout had a model answering, slowly: it fails as it always did.)
        if (
          round === 1 && modelGone(error) && !signal.aborted &&
          !deadline.expired
        ) {
          const answered = await withoutModel({ code: error.code, why: error.message });
          if (answered) return answered;
        }
        throw error;
      }
      traced?.answered(response);
      usage = addUsage(usage, response.usage);
      // Before any tool runs: a provider that could not send the shape fails the turn with nothing done.
      checkFormatSent(format, response);
      if (response.toolCalls.length === 0 || lastRound) {
        const { reply, note } = finalReply(response.content, response.toolCalls.length, maxToolRounds);
        if (note && streaming) onDelta(`\n\n${note}`);
        // The model's words are untrusted text like any other: in history, what looks like a tag is escaped.
        turn.push({ role: "assistant", content: escapeMarkers(reply) });
        this.#remember(event, turn, text, reply, toolContext.lowestTrustSeen);
        return { reply, rounds: round, ...(usage ? { usage } : {}) };
      }
      const calls = uniqueIds(response.toolCalls);
      turn.push({
        role: "assistant",
        content: response.content === "" ? null : escapeMarkers(response.content),
        // History holds arguments the API accepts; the tool's error result tells the model what was wrong.
        tool_calls: calls.map(acceptableArguments),
        ...(keepReasoning && response.reasoningContent ? { reasoning_content: response.reasoningContent } : {}),
      });
      await runToolCalls({
        io,
        maxResultTokens: this.#maxToolResultTokens,
        onCut: () => this.#counts.cutToolResults++,
      }, { event, calls, tools, turn, toolContext });
    }
    throw new RangeError("maxToolRounds must be at least 1");
  }
}
