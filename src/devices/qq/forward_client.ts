/**
 * The forward-WebSocket client (`onebot.forward_url`), for implementations that only serve: homed dials them,
 * learns the bot's QQ number from the first frame (or `get_login_info`), and from then on the socket is an ordinary
 * Universal connection of the QQ device. The socket is homed's own client (`net/ws_client.ts`), which refuses a frame over
 * `onebot.max_frame_bytes` at its header. It redials with capped exponential backoff and jitter, and drops a
 * connection whose heartbeats stop for twice their announced interval.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import type { Clock } from "../../clock.ts";
import { exponentialBackoff } from "../../service/backoff.ts";
import type { Service } from "../../service/service.ts";
import { frameTooBig, type OneBotConnection } from "./connection.ts";
import type { QqDevice } from "./qq_device.ts";
import { WsClient } from "../../net/ws_client.ts";

/** Options of {@link ForwardClient}. */
export interface ForwardClientOptions {
  url: string;
  /** `onebot.access_token`, sent as `Authorization: Bearer` when set. */
  accessToken: string;
  device: QqDevice;
  clock: Clock;
  /** In [0, 1), for the jitter. */
  random: () => number;
  logger: Logger;
  /** First retry delay (doubled per failure, capped at `maxDelayMs`). */
  baseDelayMs?: number;
  maxDelayMs?: number;
}

/**
 * The delay before dial attempt `failures + 1`.
 *
 * @example
 * ```ts
 * redialDelay(3, () => 0.5, 1_000, 30_000); // 8000
 * ```
 */
export function redialDelay(failures: number, random: () => number, baseMs: number, maxMs: number): number {
  return exponentialBackoff(failures, { minMs: baseMs, maxMs, jitter: 0.5 }, random);
}

/** The `onebot-forward` service. */
export class ForwardClient implements Service {
  readonly name = "onebot-forward";
  #options: ForwardClientOptions;
  #stop = new AbortController();
  #loop: Promise<void> | undefined;
  #socket: WsClient | undefined;
  #connection: OneBotConnection | undefined;
  #failures = 0;
  #dials = 0;

  /**
   * @example
   * ```ts
   * import { systemClock } from "../../clock.ts";
   * import { log } from "../../log/logging.ts";
   * import type { ServiceHost } from "../../service/service_host.ts";
   * import type { QqDevice } from "./qq_device.ts";
   *
   * declare const services: ServiceHost;
   * declare const qq: QqDevice;
   * await services.start(
   *   new ForwardClient({
   *     url: "ws://127.0.0.1:3001",
   *     accessToken: Deno.env.get("ONEBOT_ACCESS_TOKEN") ?? "",
   *     device: qq,
   *     clock: systemClock,
   *     random: Math.random,
   *     logger: log("qq"),
   *   }),
   * );
   * ```
   */
  constructor(options: ForwardClientOptions) {
    this.#options = options;
  }

  start(): Promise<void> {
    this.#loop ??= this.#run();
    return Promise.resolve();
  }

  async stop(): Promise<void> {
    this.#stop.abort();
    this.#socket?.close(1001, "homed stopping");
    await this.#loop;
  }

  /** Drops the connection when heartbeats stopped for twice their interval. */
  heartbeat(): void {
    const connection = this.#connection;
    if (!connection?.open || !connection.heartbeatIntervalMs) return;
    if (this.#options.clock.now() - connection.lastFrameAt > 2 * connection.heartbeatIntervalMs) {
      this.#options.logger.warning("QQ forward connection {url}: heartbeats stopped; reconnecting", {
        url: this.#options.url,
      });
      connection.close(4000, "no heartbeat");
    }
  }

  status(): Record<string, unknown> {
    return {
      url: this.#options.url,
      connected: this.#connection?.open ?? false,
      self_id: this.#connection?.selfId ?? null,
      dials: this.#dials,
      failures_in_a_row: this.#failures,
    };
  }

  async #run(): Promise<void> {
    const { clock, random, logger, url } = this.#options;
    while (!this.#stop.signal.aborted) {
      this.#dials++;
      const outcome = await this.#session();
      if (this.#stop.signal.aborted) return;
      if (outcome === "connected") this.#failures = 0;
      else this.#failures++;
      const delay = redialDelay(
        this.#failures,
        random,
        this.#options.baseDelayMs ?? 1_000,
        this.#options.maxDelayMs ?? 30_000,
      );
      logger.info("QQ forward connection {url}: redialling in {delayMs} ms", { url, delayMs: delay });
      await clock.sleep(delay, this.#stop.signal).catch(() => {});
    }
  }

  /** One connection's life: dial, learn the self id, attach, wait for the close. */
  #session(): Promise<"connected" | "failed"> {
    const { url, accessToken, device, logger, clock } = this.#options;
    return new Promise((resolve) => {
      let socket: WsClient;
      try {
        const headers: Record<string, string> = accessToken ? { authorization: `Bearer ${accessToken}` } : {};
        const limit = device.maxFrameBytes;
        // Its own client, not Deno's WebSocket: a frame over the limit is refused at its header, before its payload.
        socket = new WsClient(url, {
          headers,
          maxMessageBytes: limit,
          clock,
          onTooBig: (bytes) => {
            logger.warning(
              "QQ forward connection {url}: a frame of {bytes} bytes is over onebot.max_frame_bytes ({limit}); closing the connection (1009)",
              { url, bytes, limit },
            );
            return frameTooBig(bytes, limit);
          },
        });
      } catch (error) {
        logger.warning("QQ forward connection {url} failed: {error}", { url, error: (error as Error).message });
        return resolve("failed");
      }
      this.#socket = socket;
      let attached = false;
      const learn = (message: MessageEvent) => {
        if (attached) return;
        let selfId: string | undefined;
        try {
          const frame = JSON.parse(String(message.data));
          const id = frame.self_id ?? frame.data?.user_id;
          if (id !== undefined && /^\d+$/.test(String(id))) selfId = String(id);
        } catch { /* not JSON: the connection reports such frames once attached */ }
        if (!selfId) return;
        attached = true;
        socket.removeEventListener("message", learn);
        this.#connection = device.attach(socket, selfId, "universal", new URL(url).hostname.replace(/^\[|\]$/g, ""));
      };
      socket.addEventListener("message", learn);
      socket.addEventListener("open", () => {
        logger.info("QQ forward connection {url} open", { url });
        socket.send(JSON.stringify({ action: "get_login_info", params: {}, echo: "homed-login" }));
      });
      socket.addEventListener("error", () => {});
      socket.addEventListener("close", () => {
        this.#socket = undefined;
        this.#connection = undefined;
        resolve(attached ? "connected" : "failed");
      });
    });
  }
}
