import assert from "node:assert/strict";
import { parseConfig } from "../config/load.ts";
import { renderStarterConfig } from "./init.ts";
import { readSse } from "./sse.ts";

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
