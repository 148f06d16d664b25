/**
 * Assembles the subsystems of a running homed: persona, IO layer, tools, provider, agent, HTTP API.
 *
 * Kept apart from the CLI so tests and benchmarks can start a daemon in-process with the same wiring.
 *
 * @module
 */

import { join } from "node:path";
import { Agent } from "./agent/core/agent.ts";
import { loadPersona, type Persona } from "./agent/personal.ts";
import { OpenAIProvider } from "./agent/provider/openai_provider.ts";
import type { Provider } from "./agent/provider/provider.ts";
import { createApi } from "./api/app.ts";
import { HttpDevice } from "./api/http_device.ts";
import { knowledgeRoutes } from "./api/knowledge_routes.ts";
import { KnowledgeBase } from "./knowledge/knowledge_base.ts";
import { knowledgePrompt } from "./knowledge/knowledge_prompt.ts";
import { knowledgeTools } from "./knowledge/knowledge_tools.ts";
import { VectorStore } from "./memory/vector/store.ts";
import { type Clock, systemClock } from "./clock.ts";
import { bindHost, connectHost } from "./config/listen_addr.ts";
import type { LoadedConfig } from "./config/load.ts";
import type { Device } from "./io/device.ts";
import { IOManager } from "./io/io_manager.ts";
import { outputTools } from "./io/output_tools.ts";
import { fileRouteStore, RouteTable } from "./io/route_table.ts";
import { log } from "./log/logging.ts";
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
  /** Most time the turn in flight gets to finish at shutdown. */
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
  /** Stops accepting, finishes or cancels the turn in flight, stops devices. Idempotent. */
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

/**
 * Starts homed.
 *
 * @example
 * ```ts
 * const daemon = await startDaemon(await loadConfig({ readEnv, cwd: Deno.cwd() }));
 * // … later
 * await daemon.stop();
 * ```
 */
export async function startDaemon(loaded: LoadedConfig, options: DaemonOptions = {}): Promise<Daemon> {
  const { config } = loaded;
  const clock = options.clock ?? systemClock;
  const logger = log();
  const startedAt = clock.now();

  await ensureDataDir(config.daemon.data_dir);
  let persona: Persona;
  try {
    persona = await loadPersona({ path: config.paths.personal, explicit: loaded.explicitKeys.has("paths.personal") });
  } catch (error) {
    throw new StartupError((error as Error).message, { cause: error });
  }
  logger.info("Persona from {source} ({chars} characters)", { source: persona.source, chars: persona.text.length });

  const tools = new ToolRegistry();
  const routes = await RouteTable.open(
    config.io.routes,
    fileRouteStore(join(config.daemon.data_dir, "routes.json"), log("io"), () => clock.now()),
  );
  const io = new IOManager({ clock, routes, tools, logger: log("io") });
  for (const tool of outputTools(io, log("io"))) tools.register(tool);

  const knowledgeLog = log("knowledge");
  const knowledgeStore = await VectorStore.open(join(config.daemon.data_dir, "vector", "knowledge"), {
    compactEvery: 5_000,
    now: () => clock.now(),
    onRecovery: (message) => knowledgeLog.warning("Knowledge index recovered: {message}", { message }),
  });
  let knowledge: KnowledgeBase;
  try {
    knowledge = await KnowledgeBase.open({
      dir: config.paths.knowledge,
      store: knowledgeStore,
      clock,
      logger: knowledgeLog,
    });
  } catch (error) {
    knowledgeStore.close();
    throw new StartupError(`paths.knowledge: ${config.paths.knowledge} cannot be used: ${(error as Error).message}`, {
      cause: error,
    });
  }
  for (const tool of knowledgeTools(knowledge)) tools.register(tool);
  logger.info("Knowledge: {topics} topics, {sections} sections", knowledge.counts());

  const provider = options.provider ?? new OpenAIProvider({
    model: config.llm.model,
    baseUrl: config.llm.base_url,
    apiKey: config.llm.api_key,
    temperature: config.llm.temperature,
    maxTokens: config.llm.max_tokens,
    thinking: config.llm.thinking,
    timeoutMs: config.llm.timeout,
    maxRetries: config.llm.max_retries,
    clock,
    random: options.random ?? Math.random,
    logger: log("llm"),
    missingKeyHint: missingKeyHint(loaded),
  });
  if (config.llm.api_key === "") logger.warning("{hint}", { hint: missingKeyHint(loaded) });

  const agent = new Agent({
    io,
    provider,
    tools,
    persona,
    clock,
    logger: log("agent"),
    maxToolRounds: config.agent.max_tool_rounds,
    contextSize: config.memory.context_size,
    keepReasoning: config.llm.thinking === true,
    promptContributors: [knowledgePrompt(knowledge)],
  });

  const http = new HttpDevice();
  await io.replaceDevices([http, ...(options.devices ?? [])]);

  const app = createApi({
    device: http,
    apiToken: config.daemon.api_token,
    maxBodyBytes: config.daemon.max_body_bytes,
    logger: log("api"),
    status: () => ({
      ok: true,
      version: VERSION,
      started_at: new Date(startedAt).toISOString(),
      uptime_s: Math.round((clock.now() - startedAt) / 1000),
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
        usage: provider.usage(),
      },
      memory: { context_entries: agent.status().contextEntries, context_size: config.memory.context_size },
      knowledge: knowledge.counts(),
    }),
    channels: () => ({ channels: io.channels(), routes: io.routes.entries() }),
    routes: [knowledgeRoutes(knowledge)],
  });

  const listen = config.daemon.listen_addr;
  let server: Deno.HttpServer<Deno.NetAddr>;
  try {
    server = Deno.serve({
      hostname: bindHost(listen),
      port: listen.port,
      onListen: () => {},
    }, app.fetch);
  } catch (error) {
    await io.close();
    knowledgeStore.close();
    const reason = error instanceof Deno.errors.AddrInUse ? "the address is in use" : (error as Error).message;
    throw new StartupError(
      `Cannot listen on ${bindHost(listen)}:${listen.port} (daemon.listen_addr): ${reason}`,
      { cause: error },
    );
  }
  const url = `http://${connectHost({ host: listen.host, port: server.addr.port })}:${server.addr.port}`;
  logger.info("Listening on {url} (homed {version})", { url, version: VERSION });

  // The heartbeat is local bookkeeping and never calls the LLM; the memory jobs run on their own, slower clock.
  const heartbeat = setInterval(() => {
    agent.heartbeat();
    knowledgeStore.sync();
    knowledge.sync().catch((error) => knowledgeLog.warning("Knowledge sync failed: {error}", { error }));
  }, config.daemon.heartbeat_interval);
  const memoryJobs = setInterval(() => knowledgeStore.reindex(), config.memory.distill_interval);
  agent.heartbeat();
  knowledge.watch();
  agent.start();

  let stopping: Promise<void> | undefined;
  return {
    url,
    persona,
    io,
    agent,
    tools,
    http,
    knowledge,
    stop() {
      stopping ??= (async () => {
        logger.info("Stopping");
        clearInterval(heartbeat);
        clearInterval(memoryJobs);
        knowledge.close();
        // shutdown() stops accepting and lets requests in flight finish (aborting the serve signal would cut them).
        const closed = server.shutdown();
        await agent.stop(options.shutdownGraceMs ?? 10_000);
        await io.close();
        await closed;
        knowledgeStore.close();
        logger.info("Stopped");
      })();
      return stopping;
    },
  };
}
