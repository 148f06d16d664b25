/**
 * The daemon's plugins step: the `plugins` service over `plugins.extra_dirs` and `paths.plugins`, gated against this
 * host and the config, started, and its tools registered.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import { join } from "node:path";
import type { EnvReader } from "../config/expand.ts";
import type { Config } from "../config/schema.ts";
import type { Device, DeviceGroup } from "../io/device.ts";
import type { ServiceHost } from "../service/service_host.ts";
import type { ToolRegistry } from "../tools/registry.ts";
import { platformOf } from "./gating.ts";
import { PluginService } from "./plugin_service.ts";
import type { NativeFactory } from "./plugin_vm.ts";

/** Options of {@link startPlugins}. */
export interface PluginSetupOptions {
  /**
   * The whole config: `plugins.*`, `paths.plugins`, `lua.*`, `llm.turn_timeout` and `daemon.data_dir`, and any key a
   * skill's `requires.config` names.
   */
  config: Config;
  /** The environment homed may read (a variable it may not counts as unset). */
  readEnv: EnvReader;
  /** The `plugins` logger. */
  logger: Logger;
  /** Where the service is started. */
  services: ServiceHost;
  /** Where the plugins' tools are registered. */
  tools: ToolRegistry;
  /** The device table (the IO manager) that manifest plugins' devices join. */
  devices: { setDevices(group: DeviceGroup, devices: readonly Device[]): Promise<void> };
  /** Device factories compiled into homed, by name, for manifests with `native`. */
  natives: Readonly<Record<string, NativeFactory>>;
}

/** The value at a dotted path of the config (`onebot.enabled`), for skills' `requires.config`. */
function dottedValue(config: unknown, dotted: string): unknown {
  let node = config;
  for (const part of dotted.split(".")) {
    if (node === null || typeof node !== "object") return undefined;
    node = (node as Record<string, unknown>)[part];
  }
  return node;
}

/**
 * Starts the `plugins` service and registers its tools.
 *
 * @example
 * ```ts
 * import { systemClock } from "../clock.ts";
 * import { loadConfig, safeEnvReader } from "../config/load.ts";
 * import type { IOManager } from "../io/io_manager.ts";
 * import { log } from "../log/logging.ts";
 * import { ServiceHost } from "../service/service_host.ts";
 * import { ToolRegistry } from "../tools/registry.ts";
 *
 * declare const io: IOManager;
 * const { config } = await loadConfig({ readEnv: (name) => Deno.env.get(name), cwd: Deno.cwd() });
 * const services = new ServiceHost({ clock: systemClock, logger: log("service"), heartbeatMs: 15_000 });
 * const plugins = await startPlugins({
 *   config,
 *   readEnv: safeEnvReader(new Set()),
 *   logger: log("plugins"),
 *   services,
 *   tools: new ToolRegistry(),
 *   devices: io,
 *   natives: {},
 * });
 * await plugins.reload(); // { skills, eligible, problems }
 * ```
 */
export async function startPlugins(options: PluginSetupOptions): Promise<PluginService> {
  const { config, readEnv } = options;
  const plugins = await options.services.start(
    new PluginService({
      roots: [
        ...config.plugins.extra_dirs.map((dir, i) => ({ dir, source: `plugins.extra_dirs[${i}]` })),
        { dir: config.paths.plugins, source: "paths.plugins" },
      ],
      gate: {
        os: platformOf(Deno.build.os),
        path: (readEnv("PATH") ?? "").split(":").filter(Boolean),
        env: readEnv,
        entry: (key) => config.plugins.entries[key],
        config: (dotted) => Boolean(dottedValue(config, dotted)),
      },
      promptChars: config.plugins.skills_prompt_chars,
      logger: options.logger,
      devices: options.devices,
      natives: options.natives,
      retireGraceMs: config.llm.turn_timeout + 10_000,
      luaLimits: { timeMs: config.lua.time_limit, memoryBytes: config.lua.memory_limit },
      dataDir: join(config.daemon.data_dir, "plugins"),
      ...(config.plugins.watch ? { watch: { debounceMs: 250 } } : {}),
      exec: {
        allowed: config.plugins.allow_exec,
        allowlist: config.plugins.exec_allowlist,
        // A scrubbed environment: PATH, a UTF-8 locale, and what the plugin's entry gives it.
        env: (name) => ({
          PATH: readEnv("PATH") ?? "/usr/bin:/bin",
          LANG: "C.UTF-8",
          ...config.plugins.entries[name]?.env,
        }),
      },
    }),
  );
  for (const tool of plugins.tools()) options.tools.register(tool);
  return plugins;
}
