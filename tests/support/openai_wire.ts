/**
 * Answers on the OpenAI chat-completions wire, for fake servers: a whole `chat.completion` body, or the same answer as
 * SSE `chat.completion.chunk` frames (text in pieces, each tool call as deltas — id and name first, then the
 * arguments in two halves — a usage frame, then `[DONE]`), the shape both fake LLMs (`fake_llm.ts`, `hostile_llm.ts`) answer in.
 *
 * @module
 */

/** One tool call of an answer, its arguments already serialised. */
export interface WireToolCall {
  id: string;
  name: string;
  arguments: string;
}

/** What a fake answers: text, tool calls, or both. */
export interface WireAnswer {
  content?: string;
  toolCalls?: readonly WireToolCall[];
  reasoning?: string;
  usage?: { prompt_tokens: number; completion_tokens: number; [more: string]: number };
  /** For streams: how many chunks the text is split into (default 4). */
  chunks?: number;
  /** For streams: the last chunk waits for this promise. */
  gate?: Promise<void>;
}

function usageOf(answer: WireAnswer) {
  const usage = answer.usage ?? { prompt_tokens: 10, completion_tokens: 5 };
  return { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens };
}

function wireCalls(answer: WireAnswer) {
  return (answer.toolCalls ?? []).map((call) => ({
    id: call.id,
    type: "function" as const,
    function: { name: call.name, arguments: call.arguments },
  }));
}

/**
 * The JSON body of a non-streamed answer.
 *
 * @example
 * ```ts
 * const body = completionBody({ toolCalls: [{ id: "call_1", name: "lamp_set", arguments: '{"on":true}' }] }, "m");
 * // body.choices[0].finish_reason === "tool_calls"; body.choices[0].message.content === null
 * ```
 */
export function completionBody(answer: WireAnswer, model: unknown, id = "chatcmpl-fake"): Record<string, unknown> {
  const calls = wireCalls(answer);
  return {
    id,
    object: "chat.completion",
    created: 0,
    model,
    choices: [{
      index: 0,
      message: {
        role: "assistant",
        content: answer.content ?? (calls.length ? null : ""),
        ...(calls.length ? { tool_calls: calls } : {}),
        ...(answer.reasoning ? { reasoning_content: answer.reasoning } : {}),
      },
      finish_reason: calls.length ? "tool_calls" : "stop",
    }],
    usage: usageOf(answer),
  };
}

/**
 * The SSE frames' `delta`s of a streamed answer, in order (the first carries the role).
 *
 * @example
 * ```ts
 * streamDeltas({ content: "abcd", chunks: 2 });
 * // [{ role: "assistant", content: "" }, { content: "ab" }, { content: "cd" }]
 * ```
 */
export function streamDeltas(answer: WireAnswer): Array<Record<string, unknown>> {
  const text = answer.content ?? "";
  const pieces = Math.max(1, answer.chunks ?? 4);
  const size = Math.ceil(text.length / pieces) || 1;
  const deltas: Array<Record<string, unknown>> = [{ role: "assistant", content: "" }];
  for (let i = 0; i < text.length; i += size) deltas.push({ content: text.slice(i, i + size) });
  wireCalls(answer).forEach((call, index) => {
    const half = Math.ceil(call.function.arguments.length / 2);
    deltas.push({
      tool_calls: [{ index, id: call.id, type: "function", function: { name: call.function.name, arguments: "" } }],
    });
    deltas.push({ tool_calls: [{ index, function: { arguments: call.function.arguments.slice(0, half) } }] });
    deltas.push({ tool_calls: [{ index, function: { arguments: call.function.arguments.slice(half) } }] });
  });
  return deltas;
}

/**
 * A streamed answer as an SSE `Response`; `onDone` runs once the last frame is queued.
 *
 * @example
 * ```ts
 * const response = streamResponse({ content: "Hello" }, "deepseek-v4-flash");
 * response.headers.get("content-type"); // "text/event-stream"
 * ```
 */
export function streamResponse(answer: WireAnswer, model: unknown, onDone: () => void = () => {}): Response {
  const encoder = new TextEncoder();
  const frame = (data: unknown) => encoder.encode(`data: ${JSON.stringify(data)}\n\n`);
  const deltas = streamDeltas(answer);
  const finish = answer.toolCalls?.length ? "tool_calls" : "stop";
  const base = { id: "chatcmpl-stream", object: "chat.completion.chunk", created: 0, model };
  const usage = usageOf(answer);
  const stream = new ReadableStream<Uint8Array>({
    async start(controller) {
      if (answer.reasoning) {
        controller.enqueue(frame({
          ...base,
          choices: [{ index: 0, delta: { reasoning_content: answer.reasoning }, finish_reason: null }],
        }));
      }
      for (const [i, delta] of deltas.entries()) {
        const last = i === deltas.length - 1;
        if (last && answer.gate) await answer.gate;
        controller.enqueue(frame({ ...base, choices: [{ index: 0, delta, finish_reason: last ? finish : null }] }));
      }
      controller.enqueue(frame({ ...base, choices: [], usage }));
      controller.enqueue(encoder.encode("data: [DONE]\n\n"));
      onDone();
      controller.close();
    },
  });
  return new Response(stream, { headers: { "content-type": "text/event-stream", "cache-control": "no-cache" } });
}
