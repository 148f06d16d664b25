/**
 * The daemon's API step: the HTTP API over the HTTP device, with its endpoints (knowledge, memory, plugins, tracker,
 * schedules, the device kinds' own: the OneBot reverse WebSocket), served by the `http` service on `daemon.listen_addr`.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import type { Config } from "../config/schema.ts";
import type { HttpDevice } from "./http_device.ts";
import type { Hono } from "hono";
import type { KindRoute } from "../devices/kind.ts";
import type { ApiVariables } from "./auth.ts";
import type { TimerDevice } from "../timer/timer.ts";
import type { IOManager } from "../io/io_manager.ts";
import type { KnowledgeBase } from "../knowledge/knowledge_base.ts";
import type { MemoryService } from "../memory/memory_service.ts";
import type { PluginService } from "../plugin/plugin_service.ts";
import type { ServiceHost } from "../service/service_host.ts";
import type { Tracker } from "../tracker/tracker.ts";
import { VERSION } from "../version.ts";
import { type ApiOptions, createApi } from "./app.ts";
import { butlerAccessFor } from "./mcp_access.ts";
import { smartHomeRoutes } from "./smart_home_routes.ts";
import { actionsRoutes } from "./actions_routes.ts";
import type { Identity } from "../identity/identity.ts";
import { HttpServer } from "./http_server.ts";
import { knowledgeRoutes } from "./knowledge_routes.ts";
import { memoryRoutes } from "./memory_routes.ts";
import { peopleRoutes } from "./people_routes.ts";
import { configuredMembers, Profiles } from "../memory/profile/profiles.ts";
import { pluginRoutes } from "./plugin_routes.ts";
import { scheduleRoutes } from "./schedule_routes.ts";
import type { StatusBody } from "./status_body.ts";
import { trackerRoutes } from "./tracker_routes.ts";
import type { TurnTraces } from "../agent/core/turn_traces.ts";
import type { ContextEntry } from "../context/context_window.ts";
import { turnRoutes } from "./turn_routes.ts";
import { usageRoutes, type UsageRoutesOptions } from "./usage_routes.ts";
import { conversationRoutes } from "./conversation_routes.ts";
import { whoamiRoutes } from "./whoami_routes.ts";
import { type MediaReader, mediaRoutes } from "./media_routes.ts";
import { type McpControl, mcpRoutes } from "./mcp_routes.ts";
import { consoleRoutes } from "./console/console_routes.ts";
import { confirmationRoutes } from "./confirmation_routes.ts";
import type { Confirmations } from "../policy/confirmations.ts";

/** Options of {@link startApi}. */
export interface ApiSetupOptions {
  /** The `daemon` section: listen address, tokens, host and origin rules, body limit. */
  config: Config["daemon"];
  /** The `api` logger. */
  logger: Logger;
  /** The listener's logger (the daemon's). */
  listenerLogger: Logger;
  /** Where the `http` service is started. */
  services: ServiceHost;
  /** The device the chat endpoints submit to. */
  device: HttpDevice;
  /** The body of `GET /api/status`. */
  status: () => StatusBody;
  /** The device and route tables, for `GET /api/channels`. */
  io: IOManager;
  knowledge: KnowledgeBase;
  memory: MemoryService;
  plugins: PluginService;
  /** The change tracker, loaded when first asked for. */
  tracker: () => Promise<Tracker>;
  timer: TimerDevice;
  /** The device kinds' own routes (the OneBot reverse WebSocket). */
  deviceRoutes: readonly KindRoute[];
  /** Images and audio in chat requests: their limits and the media cache that keeps them. */
  uploads?: ApiOptions["uploads"];
  /** `mcp.serve_http`: homed as an MCP server at `/mcp`. */
  serveMcp?: boolean;
  /** With `daemon.openai_api`: the `openai` channel the door submits to. */
  openAi?: HttpDevice;
  /** The body of `GET /api/smart_home/actions`. */
  smartHomeAudit?: () => object;
  /** The policy gate's audit a caller may see (`GET /api/actions`). */
  actions?: (identity: Identity) => readonly object[];
  /** The actions waiting for the owner's yes, decided in the console (`/api/confirmations`). */
  confirmations?: Pick<Confirmations, "status" | "decide">;
  /** The turn inspector's record (`GET /api/turns`). */
  traces: TurnTraces;
  /** Usage per day, media calls and the newest log lines (`GET /api/usage`, `GET /api/logs`). */
  usage: UsageRoutesOptions;
  /** The context's entries, oldest first (`GET /api/conversation`). */
  conversation: () => readonly ContextEntry[];
  /** The media cache's bytes by id (`GET /api/media/<id>`). */
  media: MediaReader;
  /** The MCP servers (`GET /api/mcp`, restart); none when no server is configured. */
  mcp?: McpControl;
}

/**
 * Builds the API and starts the `http` service serving it.
 *
 * @example
 * ```ts
 * declare const options: ApiSetupOptions;
 * const server = await startApi(options);
 * console.log(`Listening on ${server.url}`);
 * ```
 */
export async function startApi(options: ApiSetupOptions): Promise<HttpServer> {
  const { config, io } = options;
  // The guard needs the real port, known once listening (listen_addr may ask for port 0).
  let boundPort = config.listen_addr.port;
  // The MCP SDK (its server, ajv, zod v3) is loaded only when mcp.serve_http asks for /mcp.
  const mcpHttpHandler = options.serveMcp ? (await import("../mcp/serve/mcp_http_route.ts")).mcpHttpHandler : undefined;
  const app = createApi({
    device: options.device,
    tokens: { ownerToken: config.api_token, people: config.api_tokens },
    guard: {
      port: () => boundPort,
      publicHosts: config.public_hosts,
      allowedOrigins: config.allowed_origins,
    },
    maxBodyBytes: config.max_body_bytes,
    ...(options.uploads ? { uploads: options.uploads } : {}),
    ...(options.openAi ? { openAi: options.openAi } : {}),
    ...(mcpHttpHandler
      ? {
        mcp: mcpHttpHandler(
          (identity) =>
            butlerAccessFor({
              device: options.device,
              memory: options.memory,
              knowledge: options.knowledge,
              timer: options.timer,
            }, identity),
          { version: VERSION, maxBodyBytes: config.max_body_bytes },
        ),
      }
      : {}),
    logger: options.logger,
    status: options.status,
    // A route someone remembered for themself is theirs (and the owner's) to see; the whole source's are everyone's.
    channels: (identity) => ({
      channels: io.channels(),
      routes: io.routes.entries().filter((route) =>
        route.sender === undefined || identity.trust === "owner" || route.sender === identity.name
      ),
    }),
    routes: [
      knowledgeRoutes(options.knowledge),
      memoryRoutes(options.memory, { job: () => options.services.job("memory.distill") }),
      peopleRoutes(new Profiles(options.memory.profileSource(), () => configuredMembers(config))),
      pluginRoutes(options.plugins),
      trackerRoutes(options.tracker),
      scheduleRoutes(options.timer),
      smartHomeRoutes(options.smartHomeAudit ?? (() => ({ actions: [], confirmations: [] }))),
      actionsRoutes(options.actions ?? (() => [])),
      confirmationRoutes(options.confirmations ?? { status: () => [], decide: () => Promise.resolve(undefined) }),
      turnRoutes(options.traces),
      usageRoutes(options.usage),
      conversationRoutes(options.conversation),
      whoamiRoutes(),
      mediaRoutes(options.media),
      mcpRoutes(options.mcp),
      consoleRoutes(),
      ...options.deviceRoutes.map((route) => (app: Hono<{ Variables: ApiVariables }>) => route.mount(app)),
    ],
  });
  const server = await options.services.start(
    new HttpServer({
      listen: config.listen_addr,
      handler: app.fetch,
      logger: options.listenerLogger,
      version: VERSION,
    }),
  );
  boundPort = server.port;
  return server;
}
