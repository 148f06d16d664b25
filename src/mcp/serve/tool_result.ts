/**
 * A tool's answer as MCP has it: text for the model to read, or a failure it reads as the tool's error.
 *
 * @module
 */

// The SDK's "./*" export maps `x.js` to types at `x.js.d.ts`, which do not exist: without @ts-types naming
// `x.d.ts`, Deno types every import from it as `any`.
// @ts-types="@modelcontextprotocol/sdk/types"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";

/**
 * A tool's answer as text.
 *
 * @example
 * ```ts
 * textResult("The back door is locked."); // { content: [{ type: "text", text: "The back door is locked." }] }
 * ```
 */
export function textResult(text: string): CallToolResult {
  return { content: [{ type: "text", text }] };
}

/**
 * A failure as the tool's answer, so the model reads why (an MCP protocol error would only tell the client).
 *
 * @example
 * ```ts
 * errorResult(new Error("Guests do not see the household's memory")); // { content: [...], isError: true }
 * ```
 */
export function errorResult(error: unknown): CallToolResult {
  const message = error instanceof Error ? error.message : String(error);
  return { content: [{ type: "text", text: message || "The butler failed without saying why" }], isError: true };
}
