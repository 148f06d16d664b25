/**
 * Assembles the subsystems of a running homed: persona, local intents, the tool registry and its policy, knowledge,
 * the provider chain and its usage ledger, memory and the context window, the devices (HTTP, OpenAI door, timer,
 * QQ, local devices, smart home), media, MCP, the IO layer, plugins, the tracker, the agent and the HTTP API.
 *
 * Kept apart from the CLI so tests and benchmarks can start a daemon in-process with the same wiring.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import { join } from "node:path";
import { buildAgent } from "./agent/agent_setup.ts";
import type { Agent } from "./agent/core/agent.ts";
import { loadPersona, type Persona, personaNames } from "./agent/personal.ts";
import { startApi } from "./api/api_setup.ts";
import { mediaCounts } from "./api/usage_routes.ts";
import { type StatusBody, statusBody } from "./api/status_body.ts";
import { type Clock, systemClock } from "./clock.ts";
import { type LoadedConfig, safeEnvReader } from "./config/load.ts";
import { missingKeyHint } from "./config/missing_key_hint.ts";
import { HttpDevice } from "./api/http_device.ts";
import { openTimer } from "./timer/timer_setup.ts";
import type { Device } from "./io/device.ts";
import type { IOManager } from "./io/io_manager.ts";
import { openIo, startIo } from "./io/io_setup.ts";
import type { KnowledgeBase } from "./knowledge/knowledge_base.ts";
import { knowledgePrompt } from "./knowledge/knowledge_prompt.ts";
import { startKnowledge } from "./knowledge/knowledge_setup.ts";
import { knowledgeTools } from "./knowledge/knowledge_tools.ts";
import { toolRoomProblem } from "./tools/tool_offer.ts";
import { log } from "./log/logging.ts";
import { startMemory } from "./memory/memory_setup.ts";
import { startMedia } from "./media/media_setup.ts";
import { createKinds, ioRoutes } from "./devices/kinds.ts";
import { ownerChannel, ownerChannels, ownerConfirmations } from "./policy/owner_confirmations.ts";
import { ToolPolicy } from "./policy/tool_policy.ts";
import { startMcp } from "./mcp/mcp_setup.ts";
import { mcpServers } from "./config/mcp_servers.ts";
import { startPlugins } from "./plugin/plugin_setup.ts";
import type { Provider } from "./provider/provider.ts";
import { setupProvider } from "./provider/provider_setup.ts";
import { ServiceHost } from "./service/service_host.ts";
import { DiskWatch } from "./service/disk_watch.ts";
import { ToolRegistry } from "./tools/registry.ts";
import { lazyTracker, scheduleBaseline } from "./tracker/tracker_setup.ts";
import { addressBook } from "./config/people.ts";
import { personChannelsPrompt } from "./prompt/person_channels.ts";
import { ownerNoticeElsewhere, undeliverablePolicy } from "./agent/delivery_notices.ts";
import type { RecentLines } from "./log/recent_lines.ts";
import { UsageLedger } from "./provider/usage_ledger.ts";
import { llmProviders } from "./config/llm_providers.ts";
import { type LlmAvailability, whyModelDown } from "./provider/provider_chain.ts";
import { TurnTraces } from "./agent/core/turn_traces.ts";
import { loadIntents } from "./intents/intents_setup.ts";
import { LocalIntents } from "./intents/local_intents.ts";
import {
  tellOwnerOfLowDisk,
  tellOwnerOfModel,
  tellOwnerOfSetAside,
  tellOwnerOfStorageFault,
} from "./agent/model_notices.ts";
import { DamagedFiles } from "./fs/set_aside.ts";
import { StoreHealth } from "./fs/store_health.ts";
import { checkedOpen, SQLITE_DAMAGE } from "./sqlite/damage.ts";
import { BackupService } from "./backup/backup_service.ts";
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
  /** The newest log lines (the log's second sink), for `GET /api/logs`. */
  recentLog?: RecentLines;
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
  /**
   * The LLM providers (the primary and `llm.fallbacks`): whether one answers now, each one's state and the budget
   * (`/api/status` `llm.providers`, `llm.budget`), and their changes (`lost`, `back`, `provider_down`,
   * `provider_up`, `budget_reached`), each once.
   */
  llm: LlmAvailability;
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

/** The persona `paths.personal` names (or the embedded default); one that cannot be read fails start-up. */
async function readPersona(loaded: LoadedConfig, logger: Logger): Promise<Persona> {
  let persona: Persona;
  try {
    const path = loaded.config.paths.personal;
    persona = await loadPersona({ path, explicit: loaded.explicitKeys.has("paths.personal") });
  } catch (error) {
    throw new StartupError((error as Error).message, { cause: error });
  }
  logger.info("Persona from {source} ({chars} characters)", { source: persona.source, chars: persona.text.length });
  return persona;
}

/** What {@link running} hands out and stops. */
interface RunningParts extends Omit<Daemon, "reloadPlugins" | "stop"> {
  plugins: { reload: Daemon["reloadPlugins"] };
  graceMs: number;
  logger: Logger;
  /** Cancels the tracker's first baseline, or waits for the one being written. */
  stopBaseline: () => Promise<void>;
  /** Closes what is not a service, after the services stopped. */
  close: () => void;
}

/** The running daemon's handle: its parts, the plugin reload, and the one stop. */
function running(parts: RunningParts): Daemon {
  const { url, persona, io, agent, tools, http, knowledge, services, llm, plugins, graceMs, logger } = parts;
  let stopping: Promise<void> | undefined;
  return {
    url,
    persona,
    io,
    agent,
    tools,
    http,
    knowledge,
    services,
    llm,
    reloadPlugins: () => plugins.reload(),
    stop() {
      stopping ??= (async () => {
        logger.info("Stopping (the turn in flight gets {graceMs} ms)", { graceMs });
        await Promise.all([parts.stopBaseline(), services.stop(graceMs + 1_500)]);
        parts.close();
        logger.info("Stopped");
      })();
      return stopping;
    },
  };
}

/** What every step of start-up shares. */
interface StartContext {
  loaded: LoadedConfig;
  options: DaemonOptions;
  clock: Clock;
  random: () => number;
  logger: Logger;
  services: ServiceHost;
  dataDir: string;
  graceMs: number;
  /** Closed after the services stop, in order. */
  closers: (() => void)[];
  /** The damaged files the stores set aside as they opened (`/api/status` `storage.set_aside`, the owner's notice). */
  damaged: DamagedFiles;
  /** The stores that cannot write now, a full or read-only disk (`/api/status` `storage.degraded`, the owner's notice). */
  health: StoreHealth;
}

/**
 * Starts homed: each long-lived part is a service started in order (knowledge, memory, media, io, plugins, http, agent) and stopped in
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
  const start: StartContext = {
    loaded,
    options,
    clock,
    random: options.random ?? Math.random,
    logger,
    services: new ServiceHost({ clock, logger: log("service"), heartbeatMs: config.daemon.heartbeat_interval }),
    dataDir: config.daemon.data_dir,
    graceMs: options.shutdownGraceMs ?? config.daemon.shutdown_grace,
    closers: [],
    damaged: new DamagedFiles(() => clock.now()),
    health: new StoreHealth(() => clock.now()),
  };
  const close = () => start.closers.forEach((closer) => closer());
  try {
    await ensureDataDir(start.dataDir);
    const persona = await readPersona(loaded, logger);
    // Storage faults never stop homed: damaged files set aside, a full or read-only disk, a nearly full one.
    const storage = watchStorage(start, persona);
    // A template file that cannot be used stops start-up here, naming its file and line.
    const intents = await loadIntents(config.paths.intents).catch((error) => {
      throw new StartupError(`Local intents: ${(error as Error).message}`, { cause: error });
    });
    const core = await startCore(start, persona);
    const devices = await startDevices(start, core, persona);
    storage.ioMade(devices.io);
    const { io, tools, llm, confirmations } = { ...core, ...devices };
    const localIntents = new LocalIntents({
      matcher: intents,
      targets: () => io.homeTargets(),
      clock,
      timezone: config.daemon.timezone,
      persona: () => persona.text,
      modelUp: () => llm.provider.available(),
    });
    // Told once when the model is lost, once when it is back, once when the budget is used up.
    const stopNotices = tellOwnerOfModel({
      llm: llm.provider,
      send: (channel, text) => io.send({ target: channel, type: "message", payload: { text } }),
      ownerChannel: ownerChannel(config),
      persona: () => persona.text,
      logger: log("llm"),
    });
    start.closers.unshift(stopNotices);
    const traces = new TurnTraces({ clock, prices: config.llm.prices });
    const agent = buildAgent({
      config,
      io,
      provider: llm.provider,
      traces,
      tools,
      persona,
      context: core.context,
      clock,
      logger: log("agent"),
      shutdownGraceMs: start.graceMs,
      // The owner's yes to a waiting action is taken before anything else sees the message.
      promptContributors: [
        confirmations.confirmations,
        knowledgePrompt(core.knowledge),
        devices.plugins,
        core.memory,
        personChannelsPrompt((name) => devices.people.named(name)?.channels ?? []),
      ],
      media: devices.media,
      localIntents,
      // No model can answer now: a message is answered locally at once instead of costing a deadline.
      modelDown: () => whyModelDown(llm.provider),
      // The system's zone is looked up at the first turn, not at start (Intl's zone data costs ≈ 6 MB resident).
      timezone: () => config.daemon.timezone || Intl.DateTimeFormat().resolvedOptions().timeZone,
    });
    const parts = {
      persona,
      io,
      agent,
      tools,
      http: devices.http,
      knowledge: core.knowledge,
      services: start.services,
    };
    const handle = { ...parts, llm: llm.provider };
    const status = {
      ...handle,
      loaded,
      clock,
      startedAt,
      provider: llm.provider,
      timer: devices.timer,
      backups: storage.backups,
      damaged: start.damaged,
      health: start.health,
      disk: storage.disk,
    };
    const server = await serveApi(start, core, devices, { traces, status: () => statusBody(status) });
    await start.services.start(agent);
    // Clients that dial out and hand messages in (QQ's forward WebSocket) start once the agent takes them.
    for (const service of devices.kinds.services) await start.services.start(service);
    // Automatic backups (backup.schedule) start last, after everything they copy; then the free-space watch.
    await start.services.start(storage.backups);
    await start.services.start(storage.disk);
    // The heartbeat is local bookkeeping and never calls the LLM; each service's jobs run on their own clocks.
    start.services.schedule();
    await agent.heartbeat();
    const stopBaseline = scheduleBaseline(loaded, clock, log("tracker"));
    return running({
      ...handle,
      plugins: devices.plugins,
      url: server.url,
      graceMs: start.graceMs,
      logger,
      stopBaseline,
      close,
    });
  } catch (error) {
    await start.services.stop();
    close();
    if (error instanceof StartupError) throw error;
    throw new StartupError((error as Error).message, { cause: error });
  }
}

/**
 * The storage watch: the owner is told once, on their channel, of each damaged file a store set aside as it opened,
 * of a full or read-only disk (once an episode) and of a nearly full one (below `daemon.low_disk`, at most once a
 * day); the automatic backups. The notices wait for the IO manager (`ioMade`); the log has each at once.
 */
function watchStorage(start: StartContext, persona: Persona) {
  const { loaded: { config }, clock, health } = start;
  let ioMade: (io: IOManager) => void = () => {};
  const ioReady = new Promise<IOManager>((resolve) => ioMade = resolve);
  const owner = {
    send: async (channel: string, text: string) =>
      (await ioReady).send({ target: channel, type: "message", payload: { text } }),
    ownerChannel: ownerChannel(config),
    persona: () => persona.text,
    logger: log("storage"),
  };
  const backups = new BackupService({ loaded: start.loaded, clock, logger: log("backup"), version: VERSION, health });
  const disk = new DiskWatch({
    dir: start.dataDir,
    lowBelow: config.daemon.low_disk,
    clock,
    logger: owner.logger,
    health,
  });
  start.closers.unshift(
    tellOwnerOfSetAside({ ...owner, damaged: start.damaged }),
    tellOwnerOfStorageFault({ ...owner, health }),
    tellOwnerOfLowDisk({ ...owner, disk }),
  );
  return { backups, disk, ioMade };
}

/** The parts below the devices: the tool registry and its policy, knowledge, the LLM chain, memory. */
interface Core {
  tools: ToolRegistry;
  policy: ToolPolicy;
  confirmations: ReturnType<typeof ownerConfirmations>;
  knowledge: KnowledgeBase;
  ledger: UsageLedger;
  llm: Awaited<ReturnType<typeof setupProvider>>;
  memory: Awaited<ReturnType<typeof startMemory>>["memory"];
  context: Awaited<ReturnType<typeof startMemory>>["context"];
  /** The owner's confirmations ask on a channel through the IO manager, made later (see {@link startCore}). */
  attachIo(io: IOManager): void;
}

/** The tool registry and its policy, knowledge, the LLM providers and their ledger, and memory. */
async function startCore(start: StartContext, persona: Persona): Promise<Core> {
  const { loaded: { config }, clock, services, dataDir } = start;
  // The one edge that runs ahead: the owner's yes is asked on a channel of the IO manager, which registers the
  // devices' tools in the registry this policy guards — so the confirmations get the IO manager once it is made.
  let io: IOManager | undefined;
  const sendText = (channel: string, text: string) =>
    io
      ? io.send({ target: channel, type: "message", payload: { text } })
      : Promise.reject(new Error("homed is still starting"));
  // The owner's yes: one mechanism for every call the policy holds (locks, alarms, `confirm` rules).
  const confirmations = ownerConfirmations(config, clock, log("policy"), sendText);
  const policy = new ToolPolicy({ rules: config.agent.tool_policy, confirmations: confirmations.confirmations, clock });
  const tools = new ToolRegistry({ clock, defaultTimeoutMs: config.agent.tool_timeout, gate: policy });
  const shared = { clock, services, dataDir, damaged: start.damaged };
  const knowledge = (await startKnowledge({
    ...shared,
    dir: config.paths.knowledge,
    reindexEveryMs: config.memory.distill_interval,
    logger: log("knowledge"),
    health: start.health,
  })).base;
  const { ledger, llm } = await startLlm(start);
  const { memory, context } = await startMemory({
    ...shared,
    config: config.memory,
    logger: log("memory"),
    tools,
    provider: llm.distiller,
    persona: persona.text,
    selfNames: personaNames(persona.text),
    health: start.health,
  });
  for (const tool of knowledgeTools(knowledge)) tools.register(tool);
  start.logger.info("Knowledge: {topics} topics, {sections} sections", knowledge.counts());
  return { tools, policy, confirmations, knowledge, ledger, llm, memory, context, attachIo: (made) => io = made };
}

/** The usage ledger and the provider chain over it (the primary and `llm.fallbacks`). */
async function startLlm(start: StartContext) {
  const { loaded, clock, random, logger, closers } = start;
  const { config } = loaded;
  // Every request counted per day and provider (the console's cost figures, the primary's llm.budget).
  const llms = llmProviders(config);
  // A damaged usage.db is set aside and counting starts again on a new one (the budget's spend with it).
  const ledger = start.damaged.open(
    join(start.dataDir, "usage.db"),
    checkedOpen((path) =>
      UsageLedger.open({
        path,
        clock,
        timezone: config.daemon.timezone,
        prices: config.llm.prices,
        provider: llms[0]!.name,
        providerPrices: Object.fromEntries(llms.flatMap((llm) => llm.prices ? [[llm.name, llm.prices]] : [])),
        health: start.health,
      })
    ),
    {
      ...SQLITE_DAMAGE,
      kept: {
        en: "a new, empty usage.db: spending is counted again from now (llm.budget too)",
        zh: "一个新的空 usage.db：花费从现在起重新计算（llm.budget 也是）",
      },
    },
  );
  // The chain (its probes, an adapter's VM) closes first, then the ledger it counts in.
  let closeLlm = () => {};
  closers.push(() => {
    closeLlm();
    ledger.close();
  });
  const ledgerLogger = log("llm");
  const llm = await setupProvider({
    config,
    clock,
    random,
    logger: ledgerLogger,
    notices: logger,
    missingKeyHint: missingKeyHint(loaded),
    provider: start.options.provider,
    ledger,
    onLedgerError: (error) => ledgerLogger.warning("Could not count an LLM request in usage.db: {error}", { error }),
  });
  closeLlm = llm.close;
  return { ledger, llm };
}

/** The IO manager and every device: HTTP, the OpenAI door, the timer, the configured kinds; media, MCP, plugins. */
async function startDevices(start: StartContext, core: Core, persona: Persona) {
  const { loaded, clock, random, services, dataDir } = start;
  const { config } = loaded;
  const { tools } = core;
  // The IO manager comes first: the timer, media and the kinds ask it about channels while they work.
  const people = addressBook(config);
  // How the owner hears of a chat's trouble: on another of their chats, in the persona's language.
  const owner = {
    ownerChannels: ownerChannels(config),
    send: (channel: string, text: string) => io.send({ target: channel, type: "message", payload: { text } }),
    persona: () => persona.text,
    logger: log("io"),
  };
  const io = await openIo({
    config: { ...config.io, routes: ioRoutes(config) },
    dataDir,
    clock,
    logger: log("io"),
    tools,
    damaged: start.damaged,
    people,
    // A chat that refused a message for good (WeChat): the person's other chats, else the owner is told.
    undeliverable: undeliverablePolicy({ ...owner, chatsOf: (channel) => people.personAt(channel)?.channels ?? [] }),
  });
  core.attachIo(io);
  const http = new HttpDevice();
  // The OpenAI-compatible door is a channel of its own: its people come in as openai:<name>.
  const openAi = config.daemon.openai_api ? new HttpDevice({ name: "openai" }) : undefined;
  const { timer, close: closeSchedules } = openTimer({
    clock,
    dataDir,
    timezone: config.daemon.timezone,
    logger: log("timer"),
    checkChannel: (channel) => io.checkChannel(channel, "message"),
    personChannels: (name) => people.named(name)?.channels ?? [],
    damaged: start.damaged,
    health: start.health,
  });
  start.closers.push(closeSchedules);
  // Media asks an input's channel where an attachment without a URL is.
  const media = await startMedia({
    config,
    dataDir,
    clock,
    services,
    logger: log("media"),
    locate: (input, attachment) => io.locate(input, attachment),
    health: start.health,
  });
  const kinds = createKinds(config, {
    clock,
    random,
    logger: log,
    media: {
      read: (id) => media.read(id),
      hear: (wav, signal) => media.hear(wav, signal),
      speak: async (text) => (await media.speak(text)).bytes,
      look: (image, signal) => media.look(image, signal),
      asSilk: (audio) => media.asSilk(audio),
    },
    learnDevices: (entities) => core.memory.learnDevices(entities),
    channels: () => io.channels(),
    tellOwner: ownerNoticeElsewhere(owner),
  });
  // MCP servers connect in the background: homed listens before the slowest one is up.
  const mcp = await startMcp({
    servers: mcpServers(config, loaded.location.path),
    tools,
    services,
    clock,
    random,
    logger: log("mcp"),
    defaultTimeoutMs: config.agent.tool_timeout,
    readEnv: safeEnvReader(new Set()),
    describeImage: async (bytes) => (await media.look(bytes)).text,
  });
  await startIo(io, {
    services,
    devices: [http, ...(openAi ? [openAi] : []), timer, ...kinds.devices, ...(start.options.devices ?? [])],
    tools,
    logger: log("io"),
    // output_send's url: fetched by homed under the inbound rules; the channel gets the bytes, never the URL.
    fetchMedia: async (url, type, signal) => (await media.fetchOutgoing(url, type, signal)).id,
  });
  const plugins = await startPlugins({
    config,
    services,
    // A variable homed may not read counts as unset; `homed flags` grants the ones skills need.
    readEnv: safeEnvReader(new Set()),
    logger: log("plugins"),
    tools,
    devices: io,
    natives: kinds.natives,
  });
  const crowded = toolRoomProblem(tools.listing(), config.llm.max_tools);
  if (crowded) throw new StartupError(crowded);
  return { io, http, openAi, timer, media, kinds, mcp, plugins, people };
}

/** The HTTP API over the devices, served on `daemon.listen_addr`. */
function serveApi(
  start: StartContext,
  core: Core,
  devices: Awaited<ReturnType<typeof startDevices>>,
  served: { traces: TurnTraces; status: () => StatusBody },
) {
  const { config } = start.loaded;
  const { io, media, kinds, confirmations } = { ...core, ...devices };
  return startApi({
    config: config.daemon,
    logger: log("api"),
    listenerLogger: start.logger,
    services: start.services,
    device: devices.http,
    status: served.status,
    io,
    knowledge: core.knowledge,
    memory: core.memory,
    plugins: devices.plugins,
    tracker: lazyTracker(start.loaded, start.clock),
    timer: devices.timer,
    deviceRoutes: kinds.http,
    serveMcp: config.mcp.serve_http,
    ...(devices.openAi ? { openAi: devices.openAi } : {}),
    smartHomeAudit: () => ({ actions: kinds.actions(), confirmations: confirmations.outcomes() }),
    actions: (identity) => core.policy.actions(identity),
    confirmations: confirmations.confirmations,
    traces: served.traces,
    usage: {
      ledger: core.ledger,
      budget: () => core.llm.provider.status().budget,
      media: () => mediaCounts(media.status()),
      ...(start.options.recentLog ? { recent: start.options.recentLog } : {}),
    },
    conversation: () => core.context.records(),
    media,
    ...(devices.mcp ? { mcp: devices.mcp } : {}),
    uploads: {
      maxImageBytes: config.media.max_image_bytes,
      maxAudioBytes: config.media.max_audio_bytes,
      keep: (bytes, mime) => media.keep(bytes, mime),
    },
  });
}
