/**
 * The daemon's HTTP listener: a fetch-style handler (hono's `app.fetch`) served by `node:http`, which hands over the
 * raw connection of an upgrade request ({@link offerConnection}) — `Deno.serve` only offers `Deno.upgradeWebSocket`,
 * which reads each WebSocket message whole before homed sees its size. Request bodies stream in; an event stream
 * goes out with backpressure (read only as fast as the client's socket takes it), other answers whole with their
 * length.
 *
 * @module
 */

import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import { offerConnection, stillOffered } from "./raw_upgrade.ts";

/** A fetch-style handler. */
export type FetchHandler = (request: Request) => Response | Promise<Response>;

/** Options of {@link serveHttp}. */
export interface ServeHttpOptions {
  hostname: string;
  /** 0: a free port the system chooses. */
  port: number;
  handler: FetchHandler;
  /** Called with a handler's failure (the client gets a bare 500). */
  onError?: (error: unknown) => void;
}

/** A listening {@link serveHttp}. */
export interface HttpListener {
  /** The port listened on. */
  readonly port: number;
  /** Stops accepting; resolves once the requests in flight have finished (idle keep-alive connections are closed). */
  shutdown(): Promise<void>;
  /** Drops every connection at once, requests in flight and upgraded ones included. */
  close(): void;
}

/** Header bytes node:http accepts; homed's request guard refuses more than 16 KiB with a message of its own. */
const MAX_HEADER_SIZE = 65_536;
const encoder = new TextEncoder();

/** The request as a fetch `Request`; a RangeError names a target or header fetch cannot take. */
function toRequest(incoming: IncomingMessage, fallbackHost: string, signal?: AbortSignal): Request {
  const target = incoming.url ?? "/";
  if (!target.startsWith("/")) throw new RangeError(`The request target must be a path, got ${target.slice(0, 80)}`);
  const host = incoming.headers.host ?? fallbackHost;
  let url: URL;
  try {
    url = new URL(`http://${host}${target}`);
  } catch {
    throw new RangeError(`The Host header is not a host name: ${JSON.stringify(host.slice(0, 80))}`);
  }
  const headers = new Headers();
  const raw = incoming.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) headers.append(raw[i]!, raw[i + 1]!);
  const method = incoming.method ?? "GET";
  const init: RequestInit = { method, headers };
  if (signal) init.signal = signal;
  if (method !== "GET" && method !== "HEAD") {
    const chunks = incoming[Symbol.asyncIterator]();
    init.body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const next = await chunks.next();
        if (next.done) controller.close();
        else {
          const chunk = next.value as Uint8Array;
          controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
        }
      },
      cancel() {
        incoming.destroy();
      },
    });
    (init as RequestInit & { duplex: "half" }).duplex = "half";
  }
  return new Request(url, init);
}

/** Whether a response's body is sent as it comes (an event stream) rather than read whole first. */
function streams(response: Response): boolean {
  return /^text\/event-stream\b/i.test(response.headers.get("content-type") ?? "");
}

/**
 * Writes `response` to `res`. An event stream goes out as it comes, as fast as the client takes it; any other body is
 * read whole and sent with its length — homed's other answers are small JSON, and reading a body through a stream
 * reader costs ≈ 20 MB more resident memory over a few thousand requests (`deno task bench:http`).
 */
async function send(res: ServerResponse, response: Response, head: boolean): Promise<void> {
  res.statusCode = response.status;
  for (const [name, value] of response.headers) if (name !== "set-cookie") res.setHeader(name, value);
  const cookies = response.headers.getSetCookie();
  if (cookies.length > 0) res.setHeader("set-cookie", cookies);
  if (!response.body || head) {
    await response.body?.cancel().catch(() => {});
    res.end();
    return;
  }
  if (!streams(response)) {
    let body: Uint8Array;
    try {
      body = new Uint8Array(await response.arrayBuffer());
    } catch {
      return void res.destroy();
    }
    res.setHeader("content-length", body.length);
    res.end(body);
    return;
  }
  const reader = response.body.getReader();
  const gone = new Promise<void>((resolve) => res.once("close", resolve));
  void gone.then(() => reader.cancel().catch(() => {}));
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (res.destroyed) return;
      if (!res.write(value)) await Promise.race([new Promise((resolve) => res.once("drain", resolve)), gone]);
    }
    res.end();
  } catch {
    // The body failed half-way: the connection cannot carry on, so it is dropped (the client sees a cut response).
    res.destroy();
  }
}

/** An answer to an upgrade request no route took, written on the raw socket; the connection then ends. */
async function sendRaw(socket: Duplex, response: Response): Promise<void> {
  const body = new Uint8Array(await response.arrayBuffer().catch(() => new ArrayBuffer(0)));
  const lines = [`HTTP/1.1 ${response.status} ${response.statusText || "Error"}`];
  for (const [name, value] of response.headers) if (name !== "content-length") lines.push(`${name}: ${value}`);
  lines.push(`content-length: ${body.length}`, "connection: close", "", "");
  socket.write(encoder.encode(lines.join("\r\n")));
  socket.end(body);
}

function plain(status: number, text: string): Response {
  return new Response(text, { status, headers: { "content-type": "text/plain; charset=utf-8" } });
}

/**
 * Listens on `hostname:port` and serves `handler`.
 *
 * @example
 * ```ts
 * const listener = await serveHttp({ hostname: "127.0.0.1", port: 0, handler: () => new Response("ok") });
 * await (await fetch(`http://127.0.0.1:${listener.port}/`)).text(); // "ok"
 * await listener.shutdown();
 * ```
 */
export function serveHttp(options: ServeHttpOptions): Promise<HttpListener> {
  const { handler, hostname } = options;
  const fallbackHost = () => `${hostname.includes(":") ? `[${hostname}]` : hostname}:${port}`;
  const answer = async (request: Request): Promise<Response> => {
    try {
      return await handler(request);
    } catch (error) {
      options.onError?.(error);
      return plain(500, "Internal Server Error");
    }
  };
  // Requests in flight per connection: on shutdown an idle keep-alive connection is closed at once, a busy one as
  // soon as its response is done (node:http's own closeIdleConnections misses connections that served twice).
  const busy = new Map<Duplex, number>();
  const upgraded = new Set<Duplex>();
  let closing = false;
  let drained: (() => void) | undefined;
  const settle = () => {
    for (const [socket, count] of busy) if (count === 0) socket.destroy();
    if (closing && busy.size === 0) drained?.();
  };
  const server = createServer({ maxHeaderSize: MAX_HEADER_SIZE }, (incoming, res) => {
    const socket = incoming.socket;
    busy.set(socket, (busy.get(socket) ?? 0) + 1);
    const controller = new AbortController();
    res.once("close", () => {
      if (!res.writableFinished) controller.abort();
      if (busy.has(socket)) busy.set(socket, busy.get(socket)! - 1);
      if (closing) settle();
    });
    if (closing) res.setHeader("connection", "close");
    let request: Request;
    try {
      request = toRequest(incoming, fallbackHost(), controller.signal);
    } catch (error) {
      void send(res, plain(400, (error as Error).message), false);
      return;
    }
    void answer(request).then((response) => send(res, response, request.method === "HEAD"));
  });
  server.on("connection", (socket: Duplex) => {
    busy.set(socket, busy.get(socket) ?? 0);
    socket.once("close", () => {
      busy.delete(socket);
      if (closing) settle();
    });
  });
  server.on("upgrade", (incoming: IncomingMessage, socket: Duplex, head: Uint8Array) => {
    // Its owner (a WebSocket) ends it; shutdown leaves it alone, close() drops it.
    busy.delete(socket);
    upgraded.add(socket);
    socket.once("close", () => upgraded.delete(socket));
    socket.on("error", () => {});
    let request: Request;
    try {
      request = toRequest(incoming, fallbackHost());
    } catch (error) {
      void sendRaw(socket, plain(400, (error as Error).message));
      return;
    }
    offerConnection(request, socket, head);
    void answer(request).then((response) => {
      if (stillOffered(request)) return sendRaw(socket, response);
    });
  });
  let port = options.port;
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen({ host: hostname, port: options.port }, () => {
      server.off("error", reject);
      const address = server.address();
      port = typeof address === "object" && address ? address.port : options.port;
      resolve({
        port,
        shutdown: () =>
          new Promise<void>((done) => {
            closing = true;
            drained = done;
            server.close();
            settle();
          }),
        close: () => {
          closing = true;
          server.close();
          for (const socket of [...busy.keys(), ...upgraded]) socket.destroy();
        },
      });
    });
  });
}
