/**
 * A `PluginService` over one folder for tests: Linux, an empty PATH, no variables or config entries, the default prompt
 * budget; `extra` adds or overrides options (tools, exec, watch, …).
 *
 * @module
 */

import { getLogger } from "@logtape/logtape";
import { PluginService, type PluginServiceOptions } from "../../src/plugin/plugin_service.ts";

/**
 * Creates (not starts) the service.
 *
 * @example
 * ```ts
 * import { ToolRegistry } from "../../src/tools/registry.ts";
 *
 * const root = await Deno.makeTempDir({ prefix: "homed-plugins-" });
 * const plugins = testPlugins(root, { tools: new ToolRegistry() });
 * await plugins.start();
 * ```
 */
export function testPlugins(root: string, extra: Partial<PluginServiceOptions> = {}): PluginService {
  return new PluginService({
    roots: [{ dir: root, source: "plugins" }],
    gate: { os: "linux", path: [], env: () => undefined, entry: () => undefined, config: () => false },
    promptChars: 18_000,
    logger: getLogger(["test", "plugins"]),
    ...extra,
  });
}
