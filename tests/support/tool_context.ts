/**
 * A ToolContext for tests that call tools directly.
 *
 * @module
 */

import type { Trust } from "../../src/io/trust.ts";
import type { ToolContext } from "../../src/tools/tool.ts";

/**
 * A context for a turn from `source`; `setReplyChannel` is recorded in `switched`.
 *
 * @example
 * ```ts
 * const context = testToolContext();
 * await registry.call("knowledge_list", "{}", context);
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
