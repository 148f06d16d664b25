/**
 * The refusal of an MCP server restart, in a file of its own: the API's route checks for it without loading the MCP
 * SDK (≈ 250 ms and 27 MB), which homed loads only when a server is configured.
 *
 * @module
 */

/** Why `McpService.restart` did not restart: no such server, a disabled one, or the service not running. */
export class McpRestartRefused extends Error {
  override readonly name = "McpRestartRefused";

  /**
   * @example
   * ```ts
   * const refused = new McpRestartRefused("unknown", 'No MCP server "x"; configured: everything', ["everything"]);
   * refused.reason; // "unknown"
   * ```
   */
  constructor(
    readonly reason: "unknown" | "disabled" | "not_running",
    message: string,
    /** The configured servers' names. */
    readonly known: readonly string[],
  ) {
    super(message);
  }
}
