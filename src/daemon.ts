/**
 * Assembles the subsystems of a running homed: persona, IO layer, tools, provider, agent, HTTP API.
 *
 * Kept apart from the CLI so tests and benchmarks can start a daemon in-process with the same wiring.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import { join } from "node:path";
import { Agent } from "./agent/core/agent.ts";
import { ContextWindow } from "./context/context_window.ts";
import { loadPersona, type Persona, personaNames } from "./agent/personal.ts";
import { createProvider } from "./provider/create_provider.ts";
import type { Provider, UsageTotals } from "./provider/provider.ts";
import { createApi } from "./api/app.ts";
import { HttpDevice } from "./devices/http/http_device.ts";
import { HttpServer } from "./api/http_server.ts";
import { knowledgeRoutes } from "./api/knowledge_routes.ts";
import { memoryRoutes } from "./api/memory_routes.ts";
import type { KnowledgeBase } from "./knowledge/knowledge_base.ts";
import { knowledgePrompt } from "./knowledge/knowledge_prompt.ts";
import { KnowledgeService } from "./knowledge/knowledge_service.ts";
import { seedKnowledge } from "./knowledge/starter_knowledge.ts";
import { knowledgeTools } from "./knowledge/knowledge_tools.ts";
import { type Clock, systemClock } from "./clock.ts";
import { type LoadedConfig, safeEnvReader } from "./config/load.ts";
import type { Device } from "./io/device.ts";
import { IOManager } from "./io/io_manager.ts";
import { outputTools } from "./io/output_tools.ts";
import { fileRouteStore, RouteTable } from "./io/route_table.ts";
import { log } from "./log/logging.ts";
import { MemoryService } from "./memory/memory_service.ts";
import { ForwardClient } from "./devices/qq/forward_client.ts";
import { QqDevice } from "./devices/qq/qq_device.ts";
import { onebotRoutes } from "./devices/qq/reverse_ws.ts";
import { ServiceHost } from "./service/service_host.ts";
import { platformOf } from "./plugin/gating.ts";
import { PluginService } from "./plugin/plugin_service.ts";
import { pluginRoutes } from "./api/plugin_routes.ts";
import { trackerRoutes } from "./api/tracker_routes.ts";
import { scheduleRoutes } from "./api/schedule_routes.ts";
import { TimerDevice } from "./devices/timer/timer.ts";
import { ScheduleStore } from "./devices/timer/schedule_store.ts";
import { ToolRegistry } from "./tools/registry.ts";
import { VERSION } from "./version.ts";

/** Options of {@link startDaemon}. */
export interface DaemonOptions {
  clock?: Clock;
  random?: () => number;
  /** Replaces the OpenAI provider (benchmarks, agent tests). */
  provider?: Provider;
  /** Extra devices to run beside the HTTP device. */
  devices?: Device[];
  /** Overrides `daemon.shutdown_grace`. */
  shutdownGraceMs?: number;
}

/** A running daemon. */
export interface Daemon {
  /** `http://host:port` of the listener. */
  url: string;
  persona: Persona;
  io: IOManager;
  agent: Agent;
  tools: ToolRegistry;
  http: HttpDevice;
  knowledge: KnowledgeBase;
  services: ServiceHost;
  /** Rescans the plugins (SIGHUP, `plgreload`, `POST /api/plugins/reload`). */
  reloadPlugins(): Promise<{ skills: number; eligible: number; problems: string[] }>;
  /**
   * Stops every service in reverse order within the shutdown grace plus 1.5 s: queued messages are answered with
   * 503, the turn in flight gets the grace, then devices, the listener and the stores stop. Idempotent.
   */
  stop(): Promise<void>;
}

/** Start-up failed for a reason the user can fix; the message says which. */
export class StartupError extends Error {
  /**
   * @example
   * ```ts
   * throw new StartupError("Cannot listen on 127.0.0.1:8080: address in use (daemon.listen_addr)");
   * ```
   */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "StartupError";
  }
}

/** What to tell the user when no LLM key is set. */
export function missingKeyHint(loaded: LoadedConfig): string {
  const where = loaded.location.path ?? "the embedded defaults";
  const variable = /^\$\{([A-Za-z_][A-Za-z0-9_]*)/.exec(loaded.apiKeySource)?.[1];
  const how = variable
    ? `set the ${variable} environment variable for homed (llm.api_key is "${loaded.apiKeySource}" in ${where})`
    : `set llm.api_key in ${where}`;
  return `No LLM API key is set, so homed cannot answer yet: ${how}, then restart homed`;
}

async function ensureDataDir(path: string): Promise<void> {
  try {
    await Deno.mkdir(path, { recursive: true });
    const probe = join(path, `.write-test-${crypto.randomUUID()}`);
    await Deno.writeTextFile(probe, "");
    await Deno.remove(probe);
  } catch (error) {
    throw new StartupError(`daemon.data_dir: ${path} is not writable: ${(error as Error).message}`, { cause: error });
  }
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

/** Token usage as `/api/status` shows it. */
function usageJson(usage: UsageTotals): Record<string, number> {
  return {
    requests: usage.requests,
    retries: usage.retries,
    errors: usage.errors,
    prompt_tokens: usage.promptTokens,
    completion_tokens: usage.completionTokens,
    total_tokens: usage.totalTokens,
    prompt_cache_hit_tokens: usage.cacheHitTokens,
    prompt_cache_miss_tokens: usage.cacheMissTokens,
  };
}

/** Records the tracker's first baseline when the data dir has none; logs, never throws. */
async function recordTrackerBaseline(loaded: LoadedConfig, clock: Clock, logger: Logger): Promise<void> {
  try {
    await Deno.stat(join(loaded.config.daemon.data_dir, "tracker", "manifest.json"));
    return;
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) {
      logger.warning("Tracker: cannot read its manifest: {error}", { error: (error as Error).message });
      return;
    }
  }
  try {
    const { trackerFor } = await import("./tracker/tracker_for.ts");
    const count = await trackerFor(loaded, () => clock.now()).commit();
    logger.info("Tracker: recorded the deployed state ({count} files) as the baseline of homed tracker", { count });
  } catch (error) {
    logger.warning("Tracker: the first baseline could not be recorded: {error}", { error: (error as Error).message });
  }
}

/**
 * Starts homed: each long-lived part is a service started in order (knowledge, memory, io, plugins, http, agent) and stopped in
 * reverse; their heartbeats and jobs run isolated once all are up.
 *
 * @example
 * ```ts
 * import { loadConfig, safeEnvReader } from "./config/load.ts";
 *
 * const readEnv = safeEnvReader(new Set());
 * const daemon = await startDaemon(await loadConfig({ readEnv, cwd: Deno.cwd() }));
 * console.log(`Listening on ${daemon.url}`);
 * await daemon.stop();
 * ```
 */
export async function startDaemon(loaded: LoadedConfig, options: DaemonOptions = {}): Promise<Daemon> {
  const { config } = loaded;
  const clock = options.clock ?? systemClock;
  const logger = log();
  const startedAt = clock.now();
  const graceMs = options.shutdownGraceMs ?? config.daemon.shutdown_grace;

  await ensureDataDir(config.daemon.data_dir);
  let persona: Persona;
  try {
    persona = await loadPersona({ path: config.paths.personal, explicit: loaded.explicitKeys.has("paths.personal") });
  } catch (error) {
    throw new StartupError((error as Error).message, { cause: error });
  }
  logger.info("Persona from {source} ({chars} characters)", { source: persona.source, chars: persona.text.length });

  const services = new ServiceHost({ clock, logger: log("service"), heartbeatMs: config.daemon.heartbeat_interval });
  let closeProvider = () => {};
  let closeSchedules = () => {};
  try {
    const tools = new ToolRegistry({ clock, defaultTimeoutMs: config.agent.tool_timeout });
    // A first start of the standard layout (or a new knowledge folder): the starter knowledge goes in.
    await seedKnowledge(config.paths.knowledge, log("knowledge"));
    const knowledgeService = await services.start(
      new KnowledgeService({
        dir: config.paths.knowledge,
        indexDir: join(config.daemon.data_dir, "vector", "knowledge"),
        dataDir: config.daemon.data_dir,
        clock,
        logger: log("knowledge"),
        reindexEveryMs: config.memory.distill_interval,
      }),
    );
    const knowledge = knowledgeService.base;
    const provider: Provider & { close?(): void } = options.provider ?? await createProvider(config, {
      clock,
      random: options.random ?? Math.random,
      logger: log("llm"),
      missingKeyHint: missingKeyHint(loaded),
    });
    closeProvider = () => provider.close?.();
    if (config.llm.provider === "openai" && config.llm.api_key === "" && !options.provider) {
      logger.warning("{hint}", { hint: missingKeyHint(loaded) });
    }
    // The distiller uses the LLM only when one can answer; otherwise its rule-based fallback.
    const distillerProvider = options.provider ??
      (config.llm.provider === "openai" && config.llm.api_key === "" ? undefined : provider);
    const memory = await services.start(
      new MemoryService({
        dir: join(config.daemon.data_dir, "memory"),
        clock,
        logger: log("memory"),
        jobEveryMs: config.memory.distill_interval,
        coldAfterMs: config.memory.cold_after,
        provider: distillerProvider,
        persona: persona.text,
        selfNames: personaNames(persona.text),
      }),
    );
    const context = new ContextWindow({
      maxEntries: config.memory.context_size,
      maxTokens: config.memory.context_tokens,
      entries: memory.restored,
      onEvict: (entries) => memory.archive(entries),
    });
    for (const tool of memory.tools()) tools.register(tool);
    memory.keep(context);
    for (const tool of knowledgeTools(knowledge)) tools.register(tool);

    logger.info("Knowledge: {topics} topics, {sections} sections", knowledge.counts());

    const routes = await RouteTable.open(
      config.io.routes,
      fileRouteStore(join(config.daemon.data_dir, "routes.json"), log("io"), () => clock.now()),
    );
    const http = new HttpDevice();
    const scheduleStore = ScheduleStore.open(join(config.daemon.data_dir, "schedules.db"));
    closeSchedules = () => scheduleStore.close();
    const timer: TimerDevice = new TimerDevice({
      store: scheduleStore,
      clock,
      timezone: config.daemon.timezone,
      // Resolved when a schedule is made: the IO manager exists by then.
      checkChannel: (channel: string): string | undefined => io.checkChannel(channel, "message"),
      logger: log("timer"),
    });
    const { onebot } = config;
    const makeQq = () =>
      new QqDevice({
        settings: {
          owner: onebot.owner,
          allowUsers: onebot.allow_users,
          allowGroups: onebot.allow_groups,
          approveFriends: onebot.approve_friends,
          groupPrefix: onebot.group_prefix,
          actionTimeoutMs: onebot.action_timeout,
          splitAt: onebot.split_at,
          minSendIntervalMs: onebot.min_send_interval,
          queueLimit: onebot.queue_limit,
          maxFrameBytes: onebot.max_frame_bytes,
        },
        clock,
        logger: log("qq"),
      });
    const qq = onebot.enabled ? makeQq() : undefined;
    // With onebot.enabled: false, a plugin with native: "onebot" (plugins/qq) may provide the QQ device instead.
    let pluginQq: QqDevice | undefined;
    const natives = {
      onebot: () => {
        if (qq) {
          throw new Error("QQ is already on through onebot.enabled; set it to false to let this plugin provide it");
        }
        pluginQq = makeQq();
        return pluginQq;
      },
    };
    const io = new IOManager({
      clock,
      routes,
      tools,
      logger: log("io"),
      sendTimeoutMs: config.io.send_timeout,
      perSender: config.io.max_waiting_per_sender,
      devices: [http, timer, ...(qq ? [qq] : []), ...(options.devices ?? [])],
    });
    for (const tool of outputTools(io, log("io"))) tools.register(tool);
    await services.start(io);
    // A variable homed may not read counts as unset; `homed flags` grants the ones skills need.
    const readEnv = safeEnvReader(new Set());
    const plugins = await services.start(
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
        logger: log("plugins"),
        devices: io,
        natives,
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
    for (const tool of plugins.tools()) tools.register(tool);

    const agent = new Agent({
      io,
      provider,
      tools,
      persona,
      clock,
      logger: log("agent"),
      maxToolRounds: config.agent.max_tool_rounds,
      context,
      turnTimeoutMs: config.llm.turn_timeout,
      shutdownGraceMs: graceMs,
      keepReasoning: config.llm.thinking === true,
      promptContributors: [knowledgePrompt(knowledge), plugins, memory],
    });

    // The guard needs the real port, known once listening (listen_addr may ask for port 0).
    let boundPort = config.daemon.listen_addr.port;
    const app = createApi({
      device: http,
      tokens: { ownerToken: config.daemon.api_token, people: config.daemon.api_tokens },
      guard: {
        port: () => boundPort,
        publicHosts: config.daemon.public_hosts,
        allowedOrigins: config.daemon.allowed_origins,
      },
      maxBodyBytes: config.daemon.max_body_bytes,
      logger: log("api"),
      status: () => ({
        ok: true,
        version: VERSION,
        started_at: new Date(startedAt).toISOString(),
        uptime_ms: Math.round(clock.now() - startedAt),
        config: loaded.location.path ?? "embedded defaults",
        persona: { source: persona.source, sha256: persona.sha256, chars: persona.text.length },
        agent: agent.status(),
        devices: io.channels(),
        tools: tools.specs().length,
        llm: {
          model: provider.model,
          base_url: config.llm.base_url,
          thinking: config.llm.thinking,
          api_key_set: config.llm.api_key !== "",
          usage: usageJson(provider.usage()),
        },
        memory: {
          context_entries: agent.contextEntries,
          context_size: config.memory.context_size,
          context_tokens_budget: config.memory.context_tokens,
        },
        knowledge: knowledge.counts(),
        schedules: timer.status(),
        services: services.status(),
      }),
      channels: () => ({ channels: io.channels(), routes: io.routes.entries() }),
      routes: [
        knowledgeRoutes(knowledge),
        memoryRoutes(memory),
        pluginRoutes(plugins),
        trackerRoutes(async () => (await import("./tracker/tracker_for.ts")).trackerFor(loaded, () => clock.now())),
        scheduleRoutes(timer),
        onebotRoutes({
          path: onebot.path,
          accessToken: onebot.access_token,
          // The core QQ device, or the one a plugin provides while it is in the device table.
          device: () =>
            qq ?? (pluginQq && io.channels().some((channel) => channel.name === pluginQq!.name) ? pluginQq : undefined),
        }),
      ],
    });
    const server = await services.start(
      new HttpServer({ listen: config.daemon.listen_addr, handler: app.fetch, logger, version: VERSION }),
    );
    boundPort = server.port;
    await services.start(agent);
    if (qq && onebot.forward_url !== "") {
      await services.start(
        new ForwardClient({
          url: onebot.forward_url,
          accessToken: onebot.access_token,
          device: qq,
          clock,
          random: options.random ?? Math.random,
          logger: log("qq"),
        }),
      );
    }
    // The heartbeat is local bookkeeping and never calls the LLM; each service's jobs run on their own clocks.
    services.schedule();
    await agent.heartbeat();
    // First start on this data dir: what is deployed now becomes the change tracker's baseline, so `homed tracker
    // status` later shows what the butler learned and what was edited since. Later starts load no tracker code.
    const cancelBaseline = clock.after(1_000, () => void recordTrackerBaseline(loaded, clock, log("tracker")));

    let stopping: Promise<void> | undefined;
    return {
      url: server.url,
      persona,
      io,
      agent,
      tools,
      http,
      knowledge,
      services,
      reloadPlugins: () => plugins.reload(),
      stop() {
        stopping ??= (async () => {
          cancelBaseline();
          logger.info("Stopping (the turn in flight gets {graceMs} ms)", { graceMs });
          await services.stop(graceMs + 1_500);
          closeProvider();
          closeSchedules();
          logger.info("Stopped");
        })();
        return stopping;
      },
    };
  } catch (error) {
    await services.stop();
    closeProvider();
    closeSchedules();
    if (error instanceof StartupError) throw error;
    throw new StartupError((error as Error).message, { cause: error });
  }
}
