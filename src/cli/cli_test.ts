import assert from "node:assert/strict";
import { parseConfig } from "../config/load.ts";
import { CHAT_HELP, runChat } from "./chat.ts";
import { taskCommand } from "./commands.ts";
import { renderStarterConfig } from "./init.ts";
import { readSse } from "../net/sse.ts";

Deno.test("the starter config is the documented example with paths for where it is written", () => {
  const text = renderStarterConfig("/srv/homed/config/homed.yaml", "/srv/homed");
  assert.match(text, /personal: "\.\.\/personal\.md"/);
  const loaded = parseConfig({
    text,
    location: { path: "/srv/homed/config/homed.yaml", origin: "--config" },
    readEnv: () => undefined,
    cwd: "/",
  });
  assert.equal(loaded.config.paths.knowledge, "/srv/homed/knowledge");
  assert.equal(loaded.config.daemon.data_dir, "/srv/homed/data");
  const far = renderStarterConfig("/etc/homed/homed.yaml", "/opt/a/b/homeagent");
  assert.match(far, /personal: "\/opt\/a\/b\/homeagent\/personal\.md"/);
});

Deno.test("SSE events are read across chunk boundaries, CRLF and multi-line data included", async () => {
  const parts = ["event: a\ndata: 1\n", "\nevent: b\r\ndata: x\r\ndata: y\r\n\r\n", ": comment\n\ndata: plain\n\n"];
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const part of parts) controller.enqueue(new TextEncoder().encode(part));
      controller.close();
    },
  });
  const events = [];
  for await (const event of readSse(body)) events.push(event);
  assert.deepEqual(events, [
    { event: "a", data: "1" },
    { event: "b", data: "x\ny" },
    { event: "message", data: "plain" },
  ]);
});

Deno.test("homed chat handles /help and /quit itself and sends nothing for them", async () => {
  const sent: string[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (request) => {
    if (request.method === "GET") return Response.json({ error: { code: "not_found" } }, { status: 404 });
    sent.push((await request.json()).text);
    const body = 'event: start\ndata: {"id":"e"}\n\nevent: delta\ndata: {"text":"Hi"}\n\n' +
      'event: done\ndata: {"reply":"Hi","channel":"http","rounds":1}\n\n';
    return new Response(body, { headers: { "content-type": "text/event-stream" } });
  });
  let output = "";
  const input = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(new TextEncoder().encode("/help\nhello\n/QUIT\nnever sent\n"));
      controller.close();
    },
  });
  const code = await runChat({
    url: `http://127.0.0.1:${server.addr.port}`,
    token: "",
    user: "owner",
    input,
    write: (text) => output += text,
    interactive: false,
  });
  await server.shutdown();
  assert.equal(code, 0);
  assert.deepEqual(sent, ["hello"]);
  assert.equal(output, `${CHAT_HELP}Hi\n`);
  assert.match(CHAT_HELP, /\/quit +leave/);
});

Deno.test("homed chat prints what /api/events pushes while the conversation goes on", async () => {
  let pushed!: () => void;
  const arrived = new Promise<void>((resolve) => pushed = resolve);
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (request) => {
    assert.equal(new URL(request.url).pathname, "/api/events");
    assert.equal(request.headers.get("authorization"), "Bearer tok-0123456789abcdef");
    const body = 'event: ready\ndata: {"kept":1}\n\n' +
      'event: message\ndata: {"channel":"http","type":"message","text":"Time for your medicine"}\n\n';
    return new Response(body, { headers: { "content-type": "text/event-stream" } });
  });
  let output = "";
  // The conversation stays open (no input yet) until the pushed message was printed.
  const input = new ReadableStream<Uint8Array>({
    async start(controller) {
      await arrived;
      controller.close();
    },
  });
  const code = await runChat({
    url: `http://127.0.0.1:${server.addr.port}`,
    token: "tok-0123456789abcdef",
    user: "owner",
    input,
    write: (text) => {
      output += text;
      if (output.includes("Time for your medicine")) pushed();
    },
    interactive: true,
  });
  await server.shutdown();
  assert.equal(code, 0);
  assert.match(output, /\n\[homed\] Time for your medicine\nyou> /);
});

Deno.test("commands named in messages are the README's", () => {
  assert.equal(taskCommand("start"), "npx -y deno@2.9.6 task start");
  assert.equal(
    taskCommand("doctor", "/etc/homed/homed.yaml"),
    "HOMED_CONFIG=/etc/homed/homed.yaml npx -y deno@2.9.6 task doctor",
  );
});
