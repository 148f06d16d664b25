/**
 * A web server on loopback holding one picture at `/plant.png` (anything else: 404), with a log of the paths it was
 * asked for — what `output_send` fetches by URL in the media tests.
 *
 * @module
 */

/** The server, what it was asked, its port and the URL of a path on it. */
export interface PictureServer {
  server: Deno.HttpServer<Deno.NetAddr>;
  asked: string[];
  port: number;
  url(path: string): string;
}

/**
 * Serves `png` at `/plant.png`.
 *
 * @example
 * ```ts
 * const web = pictureServer(new Uint8Array([0x89, 0x50, 0x4e, 0x47]));
 * web.url("/plant.png"); // "http://127.0.0.1:<port>/plant.png"
 * await web.server.shutdown();
 * ```
 */
export function pictureServer(png: Uint8Array): PictureServer {
  const asked: string[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (request) => {
    const path = new URL(request.url).pathname;
    asked.push(path);
    return path === "/plant.png" ? new Response(png.slice()) : new Response("gone", { status: 404 });
  });
  return { server, asked, port: server.addr.port, url: (path) => `http://127.0.0.1:${server.addr.port}${path}` };
}
