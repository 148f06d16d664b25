/**
 * A device's status tool: what the model calls to answer "is WeChat connected?" — no arguments, anyone may ask (the
 * status holds no household data), and the answer is the device's own `status()`.
 *
 * @module
 */

import type { Tool } from "./tool.ts";

/**
 * Makes the read-only, argument-free tool that returns `status()` as JSON.
 *
 * @example
 * ```ts
 * const tool = statusTool("telegram_status", "Whether the bot reaches Telegram.", () => ({ connected: true }));
 * tool.effect; // "read"
 * ```
 */
export function statusTool(name: string, description: string, status: () => Record<string, unknown>): Tool {
  return {
    name,
    effect: "read",
    description,
    parameters: { type: "object", properties: {}, additionalProperties: false },
    allow: "anyone",
    execute: () => status(),
  };
}
