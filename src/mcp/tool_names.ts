/**
 * The name an MCP server's tool gets among homed's tools: `mcp__<server>__<tool>` (ARCHITECTURE §7a), within the LLM
 * APIs' rule of 1 to 64 of `[A-Za-z0-9_-]`. Characters outside that set become `_`; a name over 64 characters keeps a
 * prefix and ends in `_` and 8 hex digits of a hash of the whole original name, so two long names that share their
 * first 55 characters still differ, and the same server and tool always get the same name (history and the owner's
 * notes keep working across restarts).
 *
 * @module
 */

/** Longest tool name the LLM APIs accept (DeepSeek's and OpenAI's rule). */
export const MAX_TOOL_NAME = 64;

const HASH_HEX = 8;

/**
 * FNV-1a, 32 bits, over the UTF-8 bytes of `text`, as 8 hex digits: small, synchronous and stable across runs and
 * machines — all a name needs (it is no defence against someone choosing colliding names on purpose; a collision is
 * caught when the tools are registered).
 *
 * @example
 * ```ts
 * fnv1a32Hex(""); // "811c9dc5"
 * fnv1a32Hex("a"); // "e40c292c"
 * ```
 */
export function fnv1a32Hex(text: string): string {
  let hash = 0x811c9dc5;
  for (const byte of new TextEncoder().encode(text)) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(HASH_HEX, "0");
}

/** Options of {@link mcpToolName}. */
export interface McpToolNameOptions {
  /**
   * Always end in the hash, even when the plain name fits: for a tool whose plain name another tool of the same server
   * already took (`read.file` and `read_file` both give `mcp__fs__read_file`).
   */
  hashed?: boolean;
}

/**
 * homed's name for tool `tool` of MCP server `server`.
 *
 * @example
 * ```ts
 * mcpToolName("everything", "get-sum"); // "mcp__everything__get-sum"
 * mcpToolName("fs", "read.file"); // "mcp__fs__read_file"
 * mcpToolName("home-assistant", "HassLightSetBrightnessForTheWholeLivingRoomArea").length; // 64
 * ```
 */
export function mcpToolName(server: string, tool: string, options: McpToolNameOptions = {}): string {
  const full = `mcp__${server}__${tool}`;
  const plain = full.replace(/[^A-Za-z0-9_-]/g, "_");
  if (plain.length <= MAX_TOOL_NAME && !options.hashed) return plain;
  const suffix = `_${fnv1a32Hex(full)}`;
  return `${plain.slice(0, MAX_TOOL_NAME - suffix.length)}${suffix}`;
}
