/**
 * A cheap token estimate, good enough to keep requests inside the model's window without a tokenizer:
 * CJK characters (Han, kana, Hangul, full-width forms) count one token each — DeepSeek's and OpenAI's tokenizers give
 * 0.6–1.1 per character — and everything else one token per four characters, rounded up per text. Each message
 * adds a few tokens of framing. It errs on the high side for Chinese and is close for English prose; JSON and code
 * tokenise worse than prose, so budgets leave a margin (see `memory.context_tokens`).
 *
 * @module
 */

import type { ChatMessage } from "../provider/provider.ts";

/** Framing tokens per message (role, separators). */
export const MESSAGE_OVERHEAD_TOKENS = 4;

const CJK =
  /[\u1100-\u11ff\u2e80-\u2fdf\u3000-\u303f\u3040-\u30ff\u3100-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]/g;

/**
 * Estimated tokens of a text.
 *
 * @example
 * ```ts
 * estimateTokens("hello world!"); // 3
 * estimateTokens("客厅的灯"); // 4
 * ```
 */
export function estimateTokens(text: string): number {
  if (text === "") return 0;
  const cjk = text.match(CJK)?.length ?? 0;
  return cjk + Math.ceil((text.length - cjk) / 4);
}

/**
 * Estimated tokens of one message, tool calls included.
 *
 * @example
 * ```ts
 * messageTokens({ role: "user", content: "hi" }); // 5
 * ```
 */
export function messageTokens(message: ChatMessage): number {
  let tokens = MESSAGE_OVERHEAD_TOKENS + estimateTokens(message.content ?? "");
  if (message.role === "assistant") {
    for (const call of message.tool_calls ?? []) {
      tokens += MESSAGE_OVERHEAD_TOKENS + estimateTokens(call.function.name) + estimateTokens(call.function.arguments);
    }
    if (message.reasoning_content) tokens += estimateTokens(message.reasoning_content);
  }
  return tokens;
}

/**
 * Estimated tokens of several messages.
 *
 * @example
 * ```ts
 * messagesTokens([{ role: "system", content: "You are Alfred." }]); // 8
 * ```
 */
export function messagesTokens(messages: readonly ChatMessage[]): number {
  let total = 0;
  for (const message of messages) total += messageTokens(message);
  return total;
}

/**
 * Cuts `text` to about `maxTokens`, keeping its beginning and saying visibly what was left out; text within the
 * budget comes back unchanged.
 *
 * @example
 * ```ts
 * cutToTokens("x".repeat(40_000), 1_000);
 * // the first 3,840 "x", then "\n[… homed cut this result: it had 40,000 characters (≈10,000 tokens); only the
 * // first 3,840 are shown …]"
 * cutToTokens("short", 1_000); // "short"
 * ```
 */
export function cutToTokens(text: string, maxTokens: number): string {
  const total = estimateTokens(text);
  if (total <= maxTokens) return text;
  const room = Math.max(0, maxTokens - 40);
  // Binary search for the longest prefix that fits; CJK density varies along the text.
  let low = 0;
  let high = Math.min(text.length, room * 4);
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    if (estimateTokens(text.slice(0, mid)) <= room) low = mid;
    else high = mid - 1;
  }
  const kept = text.slice(0, low);
  return `${kept}\n[… homed cut this result: it had ${text.length.toLocaleString("en")} characters (≈${
    total.toLocaleString("en")
  } tokens); ` +
    `only the first ${kept.length.toLocaleString("en")} are shown …]`;
}
