/**
 * A `PluginService` over one folder for tests: Linux, an empty PATH, no variables or config entries, the default prompt
 * budget; `extra` adds or overrides options (devices, exec, watch, …). {@link testPluginIo} gives it the daemon's
 * device table — a started `IOManager` with a `ToolRegistry` — so manifest plugins' tools are called as in homed.
 *
 * @module
 */

import { getLogger } from "@logtape/logtape";
import { systemClock } from "../../src/clock.ts";
import { IOManager } from "../../src/io/io_manager.ts";
import { RouteTable } from "../../src/io/route_table.ts";
import { PluginService, type PluginServiceOptions } from "../../src/plugin/plugin_service.ts";
import { ToolRegistry } from "../../src/tools/registry.ts";

/**
 * Creates (not starts) the service; without `extra.devices` it loads skills only, no manifest plugins.
 *
 * @example
 * ```ts
 * const root = await Deno.makeTempDir({ prefix: "homed-plugins-" });
 * const plugins = testPlugins(root, { watch: { debounceMs: 50 } });
 * await plugins.start();
 * await plugins.stop();
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

/** The plugin service of {@link testPluginIo}, the device table it loads into, and that table's tools. */
export interface TestPluginIo {
  /** Created, not started. */
  plugins: PluginService;
  /** Started; the plugins become its `plugins` group. */
  io: IOManager;
  /** Where `io` registers the devices' tools (as owner `device:plugin-<name>`). */
  tools: ToolRegistry;
  /** Stops the plugins, then closes `io`. */
  stop(): Promise<void>;
}

/**
 * A {@link testPlugins} service given a real device table, as the daemon gives it one: an `IOManager`, started, over
 * `tools` (a new `ToolRegistry` unless given, so a test can register core tools first).
 *
 * @example
 * ```ts
 * import { testToolContext } from "./tool_context.ts";
 *
 * const root = await Deno.makeTempDir({ prefix: "homed-plugins-" });
 * const { plugins, tools, stop } = await testPluginIo(root);
 * await plugins.start();
 * await tools.call("room_temperature", '{"room":"hall"}', testToolContext()); // { ok: true, content: "…" }
 * await stop();
 * ```
 */
export async function testPluginIo(
  root: string,
  extra: Partial<PluginServiceOptions> = {},
  tools: ToolRegistry = new ToolRegistry(),
): Promise<TestPluginIo> {
  const io = new IOManager({
    clock: systemClock,
    routes: new RouteTable({}, {}, undefined),
    tools,
    logger: getLogger(["test", "io"]),
  });
  await io.start();
  const plugins = testPlugins(root, { ...extra, devices: io });
  return {
    plugins,
    io,
    tools,
    stop: async () => {
      await plugins.stop();
      await io.close();
    },
  };
}
