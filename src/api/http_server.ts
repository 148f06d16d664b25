/**
 * The daemon's one listener (the HTTP API, the web console and the OneBot reverse WebSocket, all on
 * `daemon.listen_addr`) as a {@link Service}.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import type { ListenAddr } from "../config/listen_addr.ts";
import { bindHost, connectHost } from "../config/listen_addr.ts";
import { type FetchHandler, type HttpListener, serveHttp } from "../net/http_listener.ts";
import type { Service } from "../service/service.ts";

/** Options of {@link HttpServer}. */
export interface HttpServerOptions {
  listen: ListenAddr;
  handler: FetchHandler;
  logger: Logger;
  version: string;
}

/** The `http` service: {@link serveHttp} on `daemon.listen_addr`. */
export class HttpServer implements Service {
  readonly name = "http";
  #options: HttpServerOptions;
  #server: HttpListener | undefined;

  /**
   * @example
   * ```ts
   * import { systemClock } from "../clock.ts";
   * import { log } from "../log/logging.ts";
   * import { ServiceHost } from "../service/service_host.ts";
   *
   * const services = new ServiceHost({ clock: systemClock, logger: log("service"), heartbeatMs: 15_000 });
   * const http = await services.start(
   *   new HttpServer({
   *     listen: { host: "127.0.0.1", port: 8080 },
   *     handler: () => new Response("ok"),
   *     logger: log("http"),
   *     version: "0.1.0",
   *   }),
   * );
   * http.url; // "http://127.0.0.1:8080"
   * ```
   */
  constructor(options: HttpServerOptions) {
    this.#options = options;
  }

  /** The port listened on (the one the system chose when `listen_addr` asked for port 0). */
  get port(): number {
    return this.#server?.port ?? this.#options.listen.port;
  }

  /** `http://host:port` to reach the listener from this machine. */
  get url(): string {
    return `http://${connectHost({ host: this.#options.listen.host, port: this.port })}:${this.port}`;
  }

  async start(): Promise<void> {
    const { listen, handler, logger, version } = this.#options;
    const hostname = bindHost(listen);
    try {
      this.#server = await serveHttp({
        hostname,
        port: listen.port,
        handler,
        onError: (error) => logger.error("A request failed: {error}", { error }),
      });
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      const reason = code === "EADDRINUSE" ? "the address is in use" : (error as Error).message;
      throw new Error(`Cannot listen on ${hostname}:${listen.port} (daemon.listen_addr): ${reason}`, {
        cause: error,
      });
    }
    const port = this.#server.port;
    if (hostname === "0.0.0.0" || hostname === "::") {
      const bound = hostname.includes(":") ? `[${hostname}]:${port}` : `${hostname}:${port}`;
      logger.info("Listening on {bound}, every interface — from this machine {url} (homed {version})", {
        bound,
        url: this.url,
        version,
      });
    } else {
      logger.info("Listening on {url} (homed {version})", { url: this.url, version });
    }
  }

  /** Stops accepting and lets requests in flight finish (aborting would cut them); the host bounds the wait. */
  async stop(): Promise<void> {
    await this.#server?.shutdown();
  }

  status(): Record<string, unknown> {
    return { url: this.url };
  }
}
