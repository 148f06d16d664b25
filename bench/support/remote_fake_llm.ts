/**
 * The main-thread side of {@link ./fake_llm_worker.ts}.
 *
 * @module
 */

import type { FakeExpectations, FakeStep } from "../../tests/support/fake_llm.ts";

/** A fake LLM server living in a Worker. */
export class RemoteFakeLlm {
  #worker: Worker;
  #waiting: Array<(data: Record<string, unknown>) => void> = [];
  baseUrl = "";

  private constructor() {
    this.#worker = new Worker(new URL("./fake_llm_worker.ts", import.meta.url), { type: "module" });
    this.#worker.onmessage = (message) => this.#waiting.shift()?.(message.data);
  }

  #next(): Promise<Record<string, unknown>> {
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  /**
   * Starts the worker and waits for its server, which holds requests to `expect` (none by default).
   *
   * @example
   * ```ts
   * import { DEFAULT_CONTRACT } from "../../tests/support/contract.ts";
   *
   * const fake = await RemoteFakeLlm.start(DEFAULT_CONTRACT);
   * ```
   */
  static async start(expect: FakeExpectations = {}): Promise<RemoteFakeLlm> {
    const remote = new RemoteFakeLlm();
    const started = remote.#next();
    remote.#worker.postMessage({ op: "start", expect });
    remote.baseUrl = String((await started).baseUrl);
    return remote;
  }

  /** Queues answers (no gates or functions: they cannot cross threads); resolves once the worker has them. */
  async enqueue(...steps: FakeStep[]): Promise<void> {
    const reply = this.#next();
    this.#worker.postMessage({ op: "enqueue", steps });
    await reply;
  }

  /** Server time of each request since the last call. */
  async drain(): Promise<number[]> {
    return (await this.drainRequests()).serverMs;
  }

  /**
   * Server time, serialized prompt (tools, then messages) and arrival time (absolute, `performance.timeOrigin +
   * performance.now()`) of each request since the last drain.
   */
  async drainRequests(): Promise<{ serverMs: number[]; prompts: string[]; receivedAt: number[] }> {
    const reply = this.#next();
    this.#worker.postMessage({ op: "drain" });
    const data = await reply;
    return {
      serverMs: data.serverMs as number[],
      prompts: data.prompts as string[],
      receivedAt: data.receivedAt as number[],
    };
  }

  /** Stops the server and the worker. */
  async close(): Promise<void> {
    const reply = this.#next();
    this.#worker.postMessage({ op: "close" });
    await reply;
    this.#worker.terminate();
  }
}
