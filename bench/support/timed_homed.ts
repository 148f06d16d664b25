/**
 * A homed started for a benchmark with its computed flags (`tests/support`'s `startHomed` waits for `/healthz` with a
 * test's 20 s; a benchmark times that wait from the spawn, and on a year's data dir allows it a minute).
 *
 * @module
 */

import { healthy, spawnDeno, taskFlags, type Workspace } from "../../tests/support/homed_process.ts";

/** The started homed. */
export interface TimedHomed {
  pid: number;
  url: string;
  /** `performance.now()` at the spawn. */
  started: number;
  /** From the spawn to the first 200 of `/healthz`, ms. */
  healthzMs: number;
  /** Everything it wrote to stderr so far. */
  stderr(): string;
  exited(): boolean;
  /** Sends SIGTERM unless it has exited, and waits for it and its stderr. */
  stop(): Promise<void>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Spawns `homed run` in `ws` and waits until `/healthz` answers (or throws with its stderr, stopped).
 *
 * @example
 * ```ts
 * import { workspace } from "../../tests/support/homed_process.ts";
 *
 * const ws = await workspace({ llm: { base_url: "http://127.0.0.1:9/v1", api_key: "sk-test-0123456789" } });
 * const homed = await startTimedHomed(ws);
 * homed.healthzMs; // 412
 * await homed.stop();
 * ```
 */
export async function startTimedHomed(ws: Workspace): Promise<TimedHomed> {
  const url = `http://127.0.0.1:${ws.port}`;
  const flags = await taskFlags("run", ws.env);
  const decoder = new TextDecoder();
  const started = performance.now();
  const child = spawnDeno(["run", ...flags, "src/main.ts", "run"], { env: ws.env });
  let stderr = "";
  const drain = (async () => {
    for await (const chunk of child.stderr) stderr += decoder.decode(chunk, { stream: true });
  })();
  let exited = false;
  const status = child.status.then((s) => (exited = true, s));
  const stop = async () => {
    if (!exited) child.kill("SIGTERM");
    await status;
    await drain;
  };
  let healthzMs = Number.NaN;
  while (!exited && performance.now() - started < 60_000) {
    if (await healthy(url)) {
      healthzMs = performance.now() - started;
      break;
    }
    await sleep(2);
  }
  if (Number.isNaN(healthzMs)) {
    await stop();
    throw new Error(`homed did not answer /healthz:\n${stderr}`);
  }
  return { pid: child.pid, url, started, healthzMs, stderr: () => stderr, exited: () => exited, stop };
}
