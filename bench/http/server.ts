/**
 * One server of `bench:http`: homed's API shape (a hono app: a small JSON GET, a JSON POST echo, an SSE stream) on
 * `Deno.serve` (`--kind deno`, the anchor) or on homed's listener (`--kind homed`, `src/net/http_listener.ts`).
 * Prints its port, then serves until killed.
 */

import { Hono } from "hono";
import { serveHttp } from "../../src/net/http_listener.ts";

const kind = Deno.args[Deno.args.indexOf("--kind") + 1];
const app = new Hono();
app.get("/healthz", (c) => c.json({ ok: true, version: "0.1.0" }));
app.post("/api/chat", async (c) => c.json({ reply: `got ${JSON.stringify(await c.req.json()).length} bytes` }));
app.get("/api/events", () => {
  const encoder = new TextEncoder();
  let sent = 0;
  return new Response(
    new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent++ === 100) return controller.close();
        controller.enqueue(encoder.encode(`event: message\ndata: {"n":${sent}}\n\n`));
      },
    }),
    { headers: { "content-type": "text/event-stream" } },
  );
});

if (kind === "deno") {
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, app.fetch);
  console.log(server.addr.port);
} else {
  const listener = await serveHttp({ hostname: "127.0.0.1", port: 0, handler: app.fetch });
  console.log(listener.port);
}
