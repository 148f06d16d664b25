/**
 * The daemon's IO step in two: the route table opened and the IO manager made (before the devices), then the output
 * tools registered and the `io` service started over the core devices.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import { join } from "node:path";
import type { Clock } from "../clock.ts";
import type { AddressBook } from "../config/people.ts";
import type { Config } from "../config/schema.ts";
import type { ServiceHost } from "../service/service_host.ts";
import type { ToolRegistry } from "../tools/registry.ts";
import type { Device } from "./device.ts";
import { IOManager } from "./io_manager.ts";
import type { UndeliverablePolicy } from "./undelivered.ts";
import { type FetchOutgoing, outputTools } from "./output_tools.ts";
import { fileRouteStore, RouteTable } from "./route_table.ts";
import type { DamagedFiles } from "../fs/set_aside.ts";

/** Options of {@link openIo}. */
export interface IoSetupOptions {
  /** The `io` section, its routes over the device kinds' own. */
  config: Config["io"];
  /** `daemon.data_dir`: run-time routes persist in `routes.json` under it. */
  dataDir: string;
  clock: Clock;
  /** The `io` logger. */
  logger: Logger;
  /** Where the output tools (and the devices' tools) are registered. */
  tools: ToolRegistry;
  /** Where a damaged `routes.json` is set aside and recorded (the daemon's list, for `/api/status`). */
  damaged?: DamagedFiles;
  /** `people:`: a listed sender is named by their person's name on every chat. */
  people?: Pick<AddressBook, "personOf">;
  /** What happens to a message a chat refused for good. */
  undeliverable?: UndeliverablePolicy;
}

/**
 * Opens the route table and makes the IO manager, before the devices (which may ask it about channels while they
 * are made); {@link startIo} starts it over them.
 *
 * @example
 * ```ts
 * import { systemClock } from "../clock.ts";
 * import { log } from "../log/logging.ts";
 * import { ToolRegistry } from "../tools/registry.ts";
 *
 * const io = await openIo({
 *   config: { routes: {}, send_timeout: 30_000, max_waiting_per_sender: 20 },
 *   dataDir: "/var/lib/homed",
 *   clock: systemClock,
 *   logger: log("io"),
 *   tools: new ToolRegistry(),
 * });
 * io.channels(); // [] until started
 * ```
 */
export async function openIo(options: IoSetupOptions): Promise<IOManager> {
  const { config, clock, logger, tools } = options;
  const routes = await RouteTable.open(
    config.routes,
    fileRouteStore(join(options.dataDir, "routes.json"), logger, () => clock.now(), options.damaged),
  );
  return new IOManager({
    clock,
    routes,
    tools,
    logger,
    sendTimeoutMs: config.send_timeout,
    perSender: config.max_waiting_per_sender,
    ...(options.people ? { people: options.people } : {}),
    ...(options.undeliverable ? { undeliverable: options.undeliverable } : {}),
  });
}

/** Options of {@link startIo}. */
export interface IoStartOptions {
  /** Where the service is started. */
  services: ServiceHost;
  /** The core devices, in order. */
  devices: readonly Device[];
  /** Where the output tools are registered. */
  tools: ToolRegistry;
  /** The `io` logger. */
  logger: Logger;
  /** How `output_send` has homed fetch a `url` itself (the media service); without it only held media are sent. */
  fetchMedia?: FetchOutgoing;
}

/**
 * Registers the output tools and starts the `io` service over the core devices.
 *
 * @example
 * ```ts
 * import { log } from "../log/logging.ts";
 * import type { ServiceHost } from "../service/service_host.ts";
 * import { ToolRegistry } from "../tools/registry.ts";
 * import type { IOManager } from "./io_manager.ts";
 *
 * declare const io: IOManager;
 * declare const services: ServiceHost;
 * await startIo(io, { services, devices: [], tools: new ToolRegistry(), logger: log("io") });
 * ```
 */
export async function startIo(io: IOManager, options: IoStartOptions): Promise<IOManager> {
  const { logger, tools } = options;
  for (const tool of outputTools(io, logger, options.fetchMedia ? { fetchMedia: options.fetchMedia } : {})) {
    tools.register(tool);
  }
  io.startWith(options.devices);
  return await options.services.start(io);
}
