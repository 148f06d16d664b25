/**
 * An in-memory Provider for unit tests of the agent (the only place a non-HTTP LLM is allowed). Every request is
 * checked with the same contract as the fake server; violations are collected for the test to assert on.
 *
 * @module
 */

import {
  type ChatOptions,
  type ChatRequest,
  type ChatResponse,
  emptyUsageTotals,
  type Provider,
  type UsageTotals,
} from "../../src/provider/provider.ts";
import { checkRequest, type FakeExpectations } from "./fake_llm.ts";

/** A scripted answer: a response, an error to throw, a function of the request, or `"hang"` (never answers). */
export type Script =
  | Partial<ChatResponse>
  | Error
  | "hang"
  | ((request: ChatRequest) => Partial<ChatResponse> | Error);

/** Replays scripted answers. */
export class ScriptedProvider implements Provider {
  readonly model = "scripted";
  readonly requests: ChatRequest[] = [];
  readonly violations: string[] = [];
  #script: Script[] = [];

  constructor(private readonly expect: FakeExpectations = {}) {}

  enqueue(...steps: Script[]): void {
    this.#script.push(...steps);
  }

  chat(request: ChatRequest, options: ChatOptions = {}): Promise<ChatResponse> {
    this.requests.push(structuredClone(request));
    const body = {
      messages: request.messages,
      ...(request.tools ? { tools: request.tools.map((t) => ({ type: "function", function: t })) } : {}),
    };
    this.violations.push(...checkRequest(body, this.expect).map((v) => `request #${this.requests.length}: ${v}`));
    let step = this.#script.shift();
    if (typeof step === "function") step = step(request);
    if (step === undefined) return Promise.reject(new Error("ScriptedProvider: the script is empty"));
    if (step === "hang") {
      // Like a server that never answers: only the caller's signal ends the wait.
      return new Promise((_, reject) => {
        const signal = options.signal;
        if (signal?.aborted) reject(signal.reason);
        signal?.addEventListener("abort", () => reject(signal.reason), { once: true });
      });
    }
    if (step instanceof Error) return Promise.reject(step);
    const content = step.content ?? "";
    if (content && options.onDelta) { for (const piece of content.match(/.{1,4}/gs) ?? []) options.onDelta(piece); }
    return Promise.resolve({ content, toolCalls: step.toolCalls ?? [], finishReason: "stop", ...step });
  }

  usage(): UsageTotals {
    return { ...emptyUsageTotals(), requests: this.requests.length };
  }
}

/** A tool call for scripts. */
export function call(name: string, args: Record<string, unknown> | string = {}, id = `id_${name}`) {
  return {
    id,
    type: "function" as const,
    function: { name, arguments: typeof args === "string" ? args : JSON.stringify(args) },
  };
}
