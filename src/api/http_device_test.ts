import assert from "node:assert/strict";
import { getLogger } from "@logtape/logtape";
import { systemClock } from "../clock.ts";
import { IOManager } from "../io/io_manager.ts";
import { RouteTable } from "../io/route_table.ts";
import { log, setupLogging, stopLogging } from "../log/logging.ts";
import { ToolRegistry } from "../tools/registry.ts";
import { createApi } from "./app.ts";
import { EVENTS_CLIENT_MAX_BYTES, HttpDevice } from "./http_device.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The API on a real listener on loopback, with an IOManager to send to the `http` channel through. */
async function serve() {
  const io = new IOManager({
    clock: systemClock,
    routes: new RouteTable({}, {}, undefined),
    tools: new ToolRegistry(),
    logger: getLogger(["test"]),
  });
  const device = new HttpDevice();
  await io.replaceDevices([device]);
  const app = createApi({
    device,
    tokens: { ownerToken: "", people: {} },
    guard: { port: () => server.addr.port, publicHosts: [], allowedOrigins: [] },
    maxBodyBytes: 2048,
    logger: log("api"),
    status: () => ({}),
    channels: () => ({}),
  });
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, app.fetch);
  return { io, device, port: server.addr.port, close: async () => (await io.close(), await server.shutdown()) };
}

/** One read, `null` at the end of the stream, or `"waiting"` when nothing came within `ms`. */
async function readWithin(conn: Deno.Conn, buffer: Uint8Array, ms: number): Promise<number | null | "waiting"> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const waited = new Promise<"waiting">((resolve) => timer = setTimeout(() => resolve("waiting"), ms));
  try {
    return await Promise.race([conn.read(buffer).catch(() => null), waited]);
  } finally {
    clearTimeout(timer);
  }
}

Deno.test("/api/events: a client that stops reading is let go once 1 MiB waits for it, and its connection is closed", async () => {
  const lines: string[] = [];
  setupLogging({
    level: "info",
    format: "text",
    secrets: [],
    write: (line) => lines.push(line.trim().replace(/^\S+ /, "")),
  });
  const { io, device, port, close } = await serve();
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    await conn.write(encoder.encode(`GET /api/events HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`));
    const buffer = new Uint8Array(1 << 20);
    let head = "";
    while (!head.includes("event: ready")) {
      const read = await readWithin(conn, buffer, 5_000);
      assert.equal(typeof read, "number", `the stream's start, got ${JSON.stringify(head)}`);
      head += decoder.decode(buffer.subarray(0, read as number));
    }
    assert.match(head, /^HTTP\/1\.1 200 OK\r\n/);
    assert.equal(device.status().event_clients, 1);

    // The client reads nothing more. Messages of 16 KiB fill the socket's buffers, then wait in homed.
    const text = "x".repeat(16_384);
    let sent = 0;
    while (device.status().event_clients === 1 && sent < 64 * 1024 * 1024) {
      await io.send({ target: "http", type: "message", payload: { text } });
      sent += text.length;
      await new Promise((resolve) => setTimeout(resolve, 0));
    }
    assert.equal(device.status().event_clients, 0, `let go after ${sent} bytes were sent`);
    const warnings = lines.filter((line) => line.includes("/api/events"));
    assert.equal(warnings.length, 1, warnings.join("\n"));
    const match =
      /^\[WRN\] homed\.api: An \/api\/events client stopped reading: (\d+) bytes wait for it and a message of (\d+) bytes came; at most 1048576 wait for one client, so it is let go and its connection closed$/
        .exec(warnings[0]!);
    assert.ok(match, warnings[0]);
    const [waiting, next] = [Number(match[1]), Number(match[2])];
    assert.ok(waiting <= EVENTS_CLIENT_MAX_BYTES && waiting + next > EVENTS_CLIENT_MAX_BYTES, `${waiting} + ${next}`);
    assert.equal(EVENTS_CLIENT_MAX_BYTES, 1_048_576);
    const peak = Number(device.status().event_bytes_waiting_peak);
    assert.ok(peak > 0 && peak <= EVENTS_CLIENT_MAX_BYTES, `at most 1 MiB waited, not ${peak}`);
    assert.equal(device.status().event_clients_let_go, 1);

    // Reading again, the client gets what the socket already held, then the end: homed closed the connection.
    let received = 0;
    for (;;) {
      const read = await readWithin(conn, buffer, 5_000);
      if (read === null) break;
      assert.notEqual(read, "waiting", `the connection is still open after ${received} more bytes`);
      received += read as number;
    }
    assert.ok(received < sent, `what waited was dropped: ${received} of ${sent} bytes arrived`);
  } finally {
    conn.close();
    await close();
    stopLogging();
  }
});
