/**
 * The daemon's IO step: the route table opened, the `io` service (the IO manager over the core devices) started, and
 * the output tools registered.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import { join } from "node:path";
import type { Clock } from "../clock.ts";
import type { Config } from "../config/schema.ts";
import type { ServiceHost } from "../service/service_host.ts";
import type { ToolRegistry } from "../tools/registry.ts";
import type { Device } from "./device.ts";
import { IOManager } from "./io_manager.ts";
import { type FetchOutgoing, outputTools } from "./output_tools.ts";
import { fileRouteStore, RouteTable } from "./route_table.ts";

/** Options of {@link startIo}. */
export interface IoSetupOptions {
  /** The `io` section. */
  config: Config["io"];
  /** `daemon.data_dir`: run-time routes persist in `routes.json` under it. */
  dataDir: string;
  clock: Clock;
  /** The `io` logger. */
  logger: Logger;
  /** Where the service is started. */
  services: ServiceHost;
  /** Where the output tools (and the devices' tools) are registered. */
  tools: ToolRegistry;
  /** The core devices, in order. */
  devices: readonly Device[];
  /** How `output_send` has homed fetch a `url` itself (the media service); without it only held media are sent. */
  fetchMedia?: FetchOutgoing;
}

/**
 * Opens the route table, registers the output tools and starts the `io` service over `devices`.
 *
 * @example
 * ```ts
 * import { systemClock } from "../clock.ts";
 * import { loadConfig } from "../config/load.ts";
 * import { log } from "../log/logging.ts";
 * import { ServiceHost } from "../service/service_host.ts";
 * import { ToolRegistry } from "../tools/registry.ts";
 * import type { Device } from "./device.ts";
 *
 * declare const http: Device;
 * const { config } = await loadConfig({ readEnv: (name) => Deno.env.get(name), cwd: Deno.cwd() });
 * const services = new ServiceHost({ clock: systemClock, logger: log("service"), heartbeatMs: 15_000 });
 * const io = await startIo({
 *   config: config.io,
 *   dataDir: config.daemon.data_dir,
 *   clock: systemClock,
 *   logger: log("io"),
 *   services,
 *   tools: new ToolRegistry(),
 *   devices: [http],
 * });
 * io.channels(); // [{ name: "http", … }]
 * ```
 */
export async function startIo(options: IoSetupOptions): Promise<IOManager> {
  const { config, clock, logger, tools } = options;
  const routes = await RouteTable.open(
    config.routes,
    fileRouteStore(join(options.dataDir, "routes.json"), logger, () => clock.now()),
  );
  const io = new IOManager({
    clock,
    routes,
    tools,
    logger,
    sendTimeoutMs: config.send_timeout,
    perSender: config.max_waiting_per_sender,
    devices: options.devices,
  });
  for (const tool of outputTools(io, logger, options.fetchMedia ? { fetchMedia: options.fetchMedia } : {})) {
    tools.register(tool);
  }
  return await options.services.start(io);
}
