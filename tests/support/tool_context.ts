/**
 * A ToolContext for tests that call tools directly.
 *
 * @module
 */

import type { Trust } from "../../src/identity/trust.ts";
import type { ToolContext } from "../../src/tools/tool.ts";

/**
 * A context for a turn from `source`; `setReplyChannel` is recorded in `switched`.
 *
 * @example
 * ```ts
 * import { ToolRegistry } from "../../src/tools/registry.ts";
 *
 * const registry = new ToolRegistry();
 * registry.register({
 *   name: "reply_to",
 *   description: "Sends the reply to another channel",
 *   parameters: { type: "object", properties: { channel: { type: "string" } }, required: ["channel"] },
 *   allow: "owner",
 *   execute: (args, context) => context.setReplyChannel(String(args.channel)),
 * });
 * const context = testToolContext("qq:private:10001");
 * await registry.call("reply_to", '{"channel":"http"}', context);
 * context.switched; // ["http"]
 * ```
 */
export function testToolContext(source = "http", trust: Trust = "owner"): ToolContext & { switched: string[] } {
  let channel = source;
  const switched: string[] = [];
  return {
    eventId: "e1",
    source,
    sender: trust === "owner" ? "owner" : `a ${trust}`,
    trust,
    signal: new AbortController().signal,
    replyChannel: () => channel,
    setReplyChannel: (next) => {
      channel = next;
      switched.push(next);
    },
    switched,
  };
}
