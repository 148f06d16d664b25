/**
 * A real homed in the test's own process — `startDaemon` on a data dir, the fake LLM as its model and the owner on a
 * simulated QQ (OneBot) — as the whole-daemon tests start it: one config, one start, one connection, one list of what
 * the owner was sent.
 *
 * @module
 */

import { join } from "node:path";
import { stringify } from "yaml";
import { parseConfig } from "../../src/config/load.ts";
import { type Daemon, type DaemonOptions, startDaemon } from "../../src/daemon.ts";
import { OneBotSim } from "./onebot_sim.ts";

/** The owner's QQ number. */
export const OWNER = "20002000";
/** The API key the daemon sends the fake LLM. */
export const KEY = "sk-test-0123456789abcdef";

/** What a test's daemon has beyond the shared config. */
export interface OwnerDaemonConfig {
  /** The test's directory: the config is read as `dir/homed.yaml`, with `knowledge/` and `plugins/` under it. */
  dir: string;
  /** The model the daemon asks (a `FakeLlm`). */
  llm: { baseUrl: string };
  /** The data dir; `dir/data` unless given. */
  dataDir?: string;
  /** More `daemon:` keys (`heartbeat_interval`, `low_disk`, …). */
  daemon?: Record<string, unknown>;
  /** More `llm:` keys (`prices`, `budget`, `fallbacks`, …). */
  llmKeys?: Record<string, unknown>;
  /** More top-level sections (`backup`, …). */
  sections?: Record<string, unknown>;
}

/**
 * Starts homed in this process on `config.dir`: listening on a free port of 127.0.0.1, in Asia/Shanghai, the model at
 * `config.llm` with no retries, the owner {@link OWNER} on QQ with no pause between sends, and memory's distiller once
 * a week (it asks the model too: not within a test). `options` go to `startDaemon` (a fake clock, say).
 *
 * @example
 * ```ts
 * import { FakeLlm } from "./fake_llm.ts";
 * import { postJson } from "./homed_process.ts";
 * import { teardown } from "./teardown.ts";
 *
 * const fake = FakeLlm.start();
 * const dir = await Deno.makeTempDir();
 * const daemon = await startOwnerDaemon({ dir, llm: fake, daemon: { heartbeat_interval: "1s" } });
 * const sim = await connectOwner(daemon);
 * fake.enqueue({ reply: "Hello." });
 * await postJson(`${daemon.url}/api/chat`, { text: "hi" });
 * console.log(sentToOwner(sim)); // what the owner was told on QQ
 * await teardown(() => sim.close(), () => daemon.stop(), () => fake.close());
 * ```
 */
export async function startOwnerDaemon(config: OwnerDaemonConfig, options: DaemonOptions = {}): Promise<Daemon> {
  const { dir } = config;
  const text = stringify({
    daemon: {
      listen_addr: "127.0.0.1:0",
      data_dir: config.dataDir ?? join(dir, "data"),
      timezone: "Asia/Shanghai",
      ...config.daemon,
    },
    llm: { base_url: config.llm.baseUrl, api_key: KEY, max_retries: 0, ...config.llmKeys },
    onebot: { owner: OWNER, min_send_interval: "0s" },
    memory: { distill_interval: "7d" },
    paths: { knowledge: join(dir, "knowledge"), plugins: join(dir, "plugins") },
    ...config.sections,
  });
  const loaded = parseConfig({
    text,
    location: { path: join(dir, "homed.yaml"), origin: "--config" },
    readEnv: () => undefined,
    cwd: dir,
  });
  return await startDaemon(loaded, options);
}

/** Connects the owner's simulated QQ to `daemon`'s OneBot endpoint (see {@link startOwnerDaemon}). */
export async function connectOwner(daemon: Daemon): Promise<OneBotSim> {
  return await OneBotSim.connect(`${daemon.url.replace("http", "ws")}/onebot/v11/ws`);
}

/** The private messages `sim` was asked to send, each as its params' JSON (see {@link startOwnerDaemon}). */
export function sentToOwner(sim: OneBotSim): string[] {
  return sim.actions.filter((action) => action.action === "send_private_msg").map((action) =>
    JSON.stringify(action.params)
  );
}
