/**
 * The media benchmark's NapCat stand-in, in a Worker (its own thread, as a real implementation is its own process):
 * serves the photo and the voice note it is sent over HTTP on loopback and posts back its port.
 *
 * @module
 */

/// <reference lib="deno.worker" />

self.onmessage = (message: MessageEvent<{ image: Uint8Array; voice: Uint8Array }>) => {
  const { image, voice } = message.data;
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (request) => {
    const path = new URL(request.url).pathname;
    const bytes = path === "/photo.png" ? image : path === "/voice.silk" ? voice : undefined;
    return bytes ? new Response(bytes.slice()) : new Response("no such file", { status: 404 });
  });
  self.postMessage(server.addr.port);
};
