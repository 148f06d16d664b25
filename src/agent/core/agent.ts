/**
 * The agent: one event loop, one identity. It takes inputs from IOManager in arrival order, runs one turn at a
 * time (a new input waits; it never preempts the turn in flight), and sends the reply through the routed channel.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import type { Clock } from "../../clock.ts";
import type { TurnResult } from "../../io/device.ts";
import type { InputEvent } from "../../io/event.ts";
import type { IOManager } from "../../io/io_manager.ts";
import type { ToolRegistry } from "../../tools/registry.ts";
import type { ToolContext } from "../../tools/tool.ts";
import type { Persona } from "../personal.ts";
import type { ChatMessage, Provider, ToolCall } from "../provider/provider.ts";
import { ProviderError } from "../provider/provider_error.ts";
import { ContextWindow } from "./context.ts";
import { EventLog } from "./event_log.ts";
import { buildSystemPrompt, type PromptSection, tagMessage } from "./prompt.ts";

/** Adds a labelled block to the system prompt of a turn. */
export type PromptContributor = (event: InputEvent) => PromptSection | undefined;

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
  contextSize: number;
  /** Keep `reasoning_content` in tool-call turns (DeepSeek thinking mode). */
  keepReasoning: boolean;
  /** Extra system-prompt sections (knowledge, memory …), in order. */
  promptContributors?: readonly PromptContributor[];
}

/** Counters for `/api/status`. */
export interface AgentStatus {
  turns: number;
  failedTurns: number;
  busy: boolean;
  queued: number;
  contextEntries: number;
  lastTurnMs: number | undefined;
  lastHeartbeat: number | undefined;
}

const TOOL_GUIDANCE = [
  "Each user message starts with [via <source>, from <sender>]: the channel it arrived on and who said it. Several",
  "people and channels share this one conversation. Your reply goes back to the message's channel unless you pick",
  "another with output_set_channel; output_send sends something else right away. output_list_channels shows the",
  "channels and what each can carry. Tool results that start with Error: describe a failed call; correct the",
  "arguments or tell the user what went wrong.",
].join(" ");

/** The butler's mind. */
export class Agent {
  #options: AgentOptions;
  #context: ContextWindow;
  #events = new EventLog();
  #status = { turns: 0, failedTurns: 0, busy: false, lastTurnMs: undefined as number | undefined };
  #lastHeartbeat: number | undefined;
  #intake = new AbortController();
  #turn = new AbortController();
  #loop: Promise<void> | undefined;

  /**
   * @example
   * ```ts
   * const agent = new Agent({ io, provider, tools, persona, clock: systemClock, logger: log("agent"),
   *   maxToolRounds: 10, contextSize: 30, keepReasoning: false });
   * agent.start();
   * ```
   */
  constructor(options: AgentOptions) {
    this.#options = options;
    this.#context = new ContextWindow(options.contextSize);
  }

  /** Starts the event loop. */
  start(): void {
    this.#loop ??= this.#run();
  }

  /**
   * Stops taking inputs, gives the turn in flight `graceMs` to finish, then cancels it.
   *
   * @example
   * ```ts
   * await agent.stop(10_000);
   * ```
   */
  async stop(graceMs: number): Promise<void> {
    this.#intake.abort();
    if (!this.#loop) return;
    const timer = setTimeout(() => this.#turn.abort(new Error("homed is shutting down")), graceMs);
    try {
      await this.#loop;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Local bookkeeping on the heartbeat; never calls the LLM. */
  heartbeat(): void {
    const now = this.#options.clock.now();
    this.#lastHeartbeat = now;
    this.#events.forgetBefore(now - 86_400_000);
  }

  /** Counters for status. */
  status(): AgentStatus {
    return {
      ...this.#status,
      queued: this.#options.io.queued,
      contextEntries: this.#context.size,
      lastHeartbeat: this.#lastHeartbeat,
    };
  }

  async #run(): Promise<void> {
    for (;;) {
      const event = await this.#options.io.next(this.#intake.signal);
      if (!event) return;
      if (event.type !== "message") {
        this.#events.record(event);
        continue;
      }
      this.#status.busy = true;
      try {
        await this.handle(event);
      } catch (error) {
        this.#options.logger.error("Turn {id} crashed: {error}", { id: event.id, error });
      } finally {
        this.#status.busy = false;
      }
    }
  }

  /**
   * Runs one turn for a `message` event and reports the result to the event's device. Exposed for tests and
   * benchmarks; in the daemon the event loop calls it.
   */
  async handle(event: InputEvent): Promise<TurnResult> {
    const { io, logger, clock } = this.#options;
    const started = clock.monotonic();
    let channel = io.routes.resolve(event.source);
    const text = event.payload.text;
    let result: TurnResult;
    if (typeof text !== "string" || text.trim() === "") {
      result = this.#failure(event, channel, "bad_input", "A message event needs a non-empty payload.text");
    } else {
      try {
        const turn = await this.#converse(event, text, {
          current: () => channel,
          set: (next) => {
            channel = next;
          },
        });
        channel = await this.#deliver(event, channel, "message", { text: turn.reply });
        result = { eventId: event.id, reply: turn.reply, channel, rounds: turn.rounds };
        this.#status.turns++;
      } catch (error) {
        const code = error instanceof ProviderError ? error.code : "internal";
        const message = error instanceof ProviderError
          ? error.message
          : `Internal error in homed: ${(error as Error)?.message ?? String(error)}`;
        if (!(error instanceof ProviderError)) logger.error("Turn {id} failed: {error}", { id: event.id, error });
        else logger.warning("Turn {id} failed: {message}", { id: event.id, message });
        result = this.#failure(event, channel, code, message);
        await this.#deliver(event, channel, "error", { text: message, code }).catch(() => {});
      }
    }
    this.#status.lastTurnMs = clock.monotonic() - started;
    io.report(event.source, { type: "done", eventId: event.id, result });
    return result;
  }

  #failure(event: InputEvent, channel: string, code: string, message: string): TurnResult {
    this.#status.failedTurns++;
    return { eventId: event.id, reply: "", channel, rounds: 0, error: { code, message } };
  }

  /** Delivers to `channel`; if that fails and the channel is not the source, falls back to the source. */
  async #deliver(
    event: InputEvent,
    channel: string,
    type: "message" | "error",
    payload: Record<string, unknown>,
  ): Promise<string> {
    try {
      await this.#options.io.send({ target: channel, type, payload, replyTo: event.id });
      return channel;
    } catch (error) {
      if (channel === event.source) throw error;
      this.#options.logger.warning("Reply to {channel} failed ({error}); sending it to {source} instead", {
        channel,
        error: (error as Error).message,
        source: event.source,
      });
      await this.#options.io.send({ target: event.source, type, payload, replyTo: event.id });
      return event.source;
    }
  }

  #systemPrompt(event: InputEvent): string {
    const sections: PromptSection[] = [{ title: "Tools and channels", body: TOOL_GUIDANCE }];
    for (const contribute of this.#options.promptContributors ?? []) {
      const section = contribute(event);
      if (section) sections.push(section);
    }
    sections.push({ title: "Recent device events (recorded, not messages)", body: this.#events.render() });
    sections.push({ title: "Now", body: new Date(this.#options.clock.now()).toISOString() });
    return buildSystemPrompt(this.#options.persona.text, sections);
  }

  async #converse(
    event: InputEvent,
    text: string,
    route: { current(): string; set(channel: string): void },
  ): Promise<{ reply: string; rounds: number }> {
    const { provider, tools, io, maxToolRounds, keepReasoning } = this.#options;
    this.#turn = new AbortController();
    const signal = this.#turn.signal;
    const system: ChatMessage = { role: "system", content: this.#systemPrompt(event) };
    const history = this.#context.entries();
    const turn: ChatMessage[] = [{ role: "user", content: tagMessage(event.source, event.sender, text) }];
    const toolContext: ToolContext = {
      eventId: event.id,
      source: event.source,
      sender: event.sender,
      signal,
      replyChannel: route.current,
      setReplyChannel: route.set,
    };
    // Streaming costs more per call than a plain answer, so it is asked for only when the input's device shows
    // the reply as it is produced (`payload.stream`, e.g. /api/chat/stream).
    const streaming = event.payload.stream === true;
    const onDelta = (delta: string) => io.report(event.source, { type: "delta", eventId: event.id, text: delta });

    for (let round = 1; round <= maxToolRounds; round++) {
      const lastRound = round === maxToolRounds;
      const specs = lastRound ? [] : tools.specs();
      const response = await provider.chat(
        { messages: [system, ...history, ...turn], ...(specs.length ? { tools: specs } : {}) },
        streaming ? { signal, onDelta } : { signal },
      );
      if (response.toolCalls.length === 0 || lastRound) {
        let reply = response.content;
        if (response.toolCalls.length) {
          const note = `(Stopped after ${maxToolRounds} rounds of tool use; ${response.toolCalls.length} further ` +
            `tool call${response.toolCalls.length === 1 ? " was" : "s were"} not run.)`;
          reply = reply.trim() ? `${reply}\n\n${note}` : note;
          if (streaming) onDelta(`\n\n${note}`);
        }
        if (reply.trim() === "") reply = "(The model returned an empty answer.)";
        turn.push({ role: "assistant", content: reply });
        this.#context.appendTurn(turn);
        return { reply, rounds: round };
      }
      const calls = uniqueIds(response.toolCalls);
      turn.push({
        role: "assistant",
        content: response.content === "" ? null : response.content,
        tool_calls: calls,
        ...(keepReasoning && response.reasoningContent ? { reasoning_content: response.reasoningContent } : {}),
      });
      for (const call of calls) {
        const outcome = await tools.call(call.function.name, call.function.arguments, toolContext);
        turn.push({ role: "tool", tool_call_id: call.id, content: outcome.content });
        io.report(event.source, { type: "tool", eventId: event.id, name: call.function.name, ok: outcome.ok });
      }
    }
    throw new RangeError("maxToolRounds must be at least 1");
  }
}

/** Makes tool-call ids unique within one answer, so each gets exactly one result. */
function uniqueIds(calls: readonly ToolCall[]): ToolCall[] {
  const seen = new Set<string>();
  return calls.map((call) => {
    let id = call.id;
    for (let n = 2; seen.has(id); n++) id = `${call.id}_${n}`;
    seen.add(id);
    return id === call.id ? call : { ...call, id };
  });
}
