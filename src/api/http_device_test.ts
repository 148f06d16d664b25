import assert from "node:assert/strict";
import { getLogger } from "@logtape/logtape";
import { systemClock } from "../clock.ts";
import { IOManager } from "../io/io_manager.ts";
import { RouteTable } from "../io/route_table.ts";
import { log, setupLogging, stopLogging } from "../log/logging.ts";
import { ToolRegistry } from "../tools/registry.ts";
import { createApi } from "./app.ts";
import { EVENTS_CLIENT_MAX_BYTES, HttpDevice, OUTBOX_LIMIT, OUTBOX_RECIPIENTS } from "./http_device.ts";

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

Deno.test("/api/events keeps messages per recipient: one member's flood drops only hers; each sees hers, the owner all", () => {
  const device = new HttpDevice();
  const message = (text: string, recipient?: string) =>
    device.send({ target: "http", type: "message", payload: { text }, ...(recipient ? { recipient } : {}) });
  message("owner: the boiler service is at 10", "owner");
  message("for everyone: dinner at 7");
  message("bob: your parcel came", "bob");
  for (let i = 0; i < 1_000; i++) message(`alice spam ${i}`, "alice");
  assert.equal(device.status().kept_messages, 3 + OUTBOX_LIMIT, "alice keeps her latest 100, the others all theirs");
  assert.equal(device.status().dropped_messages, 1_000 - OUTBOX_LIMIT);

  const texts = (backlog: Array<{ payload: Record<string, unknown> }>) => backlog.map((e) => String(e.payload.text));
  const bob = device.subscribe({ identity: { name: "bob", trust: "household" }, deliver: () => {}, close: () => {} });
  assert.deepEqual(texts(bob.backlog), ["for everyone: dinner at 7", "bob: your parcel came"]);
  const alice = device.subscribe({
    identity: { name: "alice", trust: "household" },
    deliver: () => {},
    close: () => {},
  });
  assert.deepEqual(texts(alice.backlog), Array.from({ length: OUTBOX_LIMIT }, (_, i) => `alice spam ${900 + i}`));
  const owner = device.subscribe({ identity: { name: "owner", trust: "owner" }, deliver: () => {}, close: () => {} });
  assert.deepEqual(texts(owner.backlog), ["owner: the boiler service is at 10"], "what the others took is theirs");

  // Live: a member's message goes to her clients and the owner's, not to another member's.
  const seen: Record<string, string[]> = { bob: [], alice: [], owner: [] };
  for (const subscription of [bob, alice, owner]) subscription.unsubscribe();
  for (const [name, trust] of [["bob", "household"], ["alice", "household"], ["owner", "owner"]] as const) {
    device.subscribe({
      identity: { name, trust },
      deliver: (event) => seen[name]!.push(String(event.payload.text)),
      close: () => {},
    });
  }
  message("alice: your reminder", "alice");
  message("for everyone: the lights are off");
  assert.deepEqual(seen, {
    bob: ["for everyone: the lights are off"],
    alice: ["alice: your reminder", "for everyone: the lights are off"],
    owner: ["alice: your reminder", "for everyone: the lights are off"],
  });
});

Deno.test("/api/events keeps at most OUTBOX_RECIPIENTS backlogs; the stalest recipient's goes first", () => {
  const device = new HttpDevice();
  for (let i = 0; i <= OUTBOX_RECIPIENTS; i++) {
    device.send({ target: "http", type: "message", payload: { text: `for p${i}` }, recipient: `p${i}` });
  }
  assert.equal(device.status().kept_messages, OUTBOX_RECIPIENTS);
  const first = device.subscribe({ identity: { name: "p0", trust: "household" }, deliver: () => {}, close: () => {} });
  assert.deepEqual(first.backlog, [], "p0's backlog was the stalest");
  const last = device.subscribe({
    identity: { name: `p${OUTBOX_RECIPIENTS}`, trust: "household" },
    deliver: () => {},
    close: () => {},
  });
  assert.equal(last.backlog.length, 1);
});

Deno.test("a request's own bytes are located for its turn only, and what it asks of the model goes in the payload", async () => {
  const emitted: Array<{ id: string; payload: Record<string, unknown> }> = [];
  const device = new HttpDevice({ name: "openai" });
  await device.start({
    emit: (draft) => {
      const event = { ...draft, id: `e${emitted.length + 1}`, time: 0 };
      emitted.push(event);
      return event;
    },
    readyAgain: () => {},
    waiting: () => 0,
    clock: systemClock,
    log: getLogger(["test"]),
  });
  const bytes = new Uint8Array([1, 2, 3]);
  const { event, done } = device.submit({
    text: "what is this?",
    identity: { name: "alice", trust: "household" },
    source: "openai:alice",
    attachments: [{ kind: "image", file: "part-0" }],
    held: new Map([["part-0", bytes]]),
    modelCall: { responseFormat: { type: "json_object" } },
  });
  assert.deepEqual(emitted[0]!.payload.model_call, { responseFormat: { type: "json_object" } });
  assert.equal(await device.locate(event, { kind: "image", file: "part-0" }), bytes);
  assert.equal(await device.locate(event, { kind: "image", file: "part-1" }), undefined, "only what it carried");
  assert.equal(await device.locate({ ...event, id: "other" }, { kind: "image", file: "part-0" }), undefined);
  device.onTurnEvent({
    type: "done",
    eventId: event.id,
    result: { eventId: event.id, reply: "ok", channel: "openai", rounds: 1 },
  });
  assert.equal((await done).reply, "ok");
  assert.equal(await device.locate(event, { kind: "image", file: "part-0" }), undefined, "dropped when the turn ended");
  await device.stop();
});
