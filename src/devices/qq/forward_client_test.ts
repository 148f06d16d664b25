import assert from "node:assert/strict";
import { systemClock } from "../../clock.ts";
import { log, setupLogging, stopLogging } from "../../log/logging.ts";
import { ForwardClient } from "./forward_client.ts";
import { QqDevice } from "./qq_device.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

async function writeAll(conn: Deno.Conn, bytes: Uint8Array): Promise<void> {
  for (let offset = 0; offset < bytes.length;) offset += await conn.write(bytes.subarray(offset));
}

/** The header of an unmasked server frame (FIN set) with `opcode` and a payload of `length` bytes. */
function frameHeader(opcode: number, length: number): Uint8Array {
  if (length < 126) return new Uint8Array([0x80 | opcode, length]);
  const header = new Uint8Array(10);
  header[0] = 0x80 | opcode;
  header[1] = 127;
  new DataView(header.buffer).setBigUint64(2, BigInt(length));
  return header;
}

/** The frames a client sent (masked), as opcode and unmasked payload, from what arrived so far. */
function clientFrames(bytes: Uint8Array): Array<{ opcode: number; payload: Uint8Array }> {
  const frames = [];
  let at = 0;
  while (at + 2 <= bytes.length) {
    let length = bytes[at + 1]! & 0x7f;
    let offset = at + 2;
    if (length === 126) [length, offset] = [(bytes[at + 2]! << 8) | bytes[at + 3]!, at + 4];
    else if (length === 127) {
      [length, offset] = [Number(new DataView(bytes.buffer, at + 2, 8).getBigUint64(0)), at + 10];
    }
    if (offset + 4 + length > bytes.length) break;
    const mask = bytes.subarray(offset, offset + 4);
    const payload = bytes.slice(offset + 4, offset + 4 + length).map((byte, i) => byte ^ mask[i % 4]!);
    frames.push({ opcode: bytes[at]! & 0x0f, payload });
    at = offset + 4 + length;
  }
  return frames;
}

/**
 * An implementation's forward server that speaks the WebSocket handshake by hand, so the test decides every byte homed
 * receives: the lifecycle frame, then the header of a text frame of `declared` bytes and only `sent` of them.
 */
function serveOnce(declared: number, sent: number) {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const received = (async () => {
    const conn = await listener.accept();
    listener.close();
    const buffer = new Uint8Array(65_536);
    let head = "";
    while (!head.includes("\r\n\r\n")) head += decoder.decode(buffer.subarray(0, (await conn.read(buffer))!));
    const key = /sec-websocket-key: *(\S+)/i.exec(head)![1]!;
    const digest = await crypto.subtle.digest("SHA-1", encoder.encode(`${key}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`));
    const accept = btoa(String.fromCharCode(...new Uint8Array(digest)));
    await writeAll(
      conn,
      encoder.encode(
        `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`,
      ),
    );
    const lifecycle = encoder.encode(JSON.stringify({
      post_type: "meta_event",
      meta_event_type: "lifecycle",
      sub_type: "connect",
      self_id: 10001000,
      time: 0,
    }));
    await writeAll(conn, frameHeader(1, lifecycle.length));
    await writeAll(conn, lifecycle);
    await writeAll(conn, frameHeader(1, declared));
    await writeAll(conn, new Uint8Array(sent).fill(0x61)).catch(() => {});
    // What homed sends back, until it closes the connection (or 3 s pass).
    const bytes: number[] = [];
    const deadline = Date.now() + 3_000;
    let closedByHomed = false;
    while (Date.now() < deadline) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const read = await Promise.race([
        conn.read(buffer).catch(() => null),
        new Promise<"waiting">((resolve) => timer = setTimeout(() => resolve("waiting"), deadline - Date.now())),
      ]).finally(() => clearTimeout(timer));
      if (read === null) {
        closedByHomed = true;
        break;
      }
      if (read === "waiting") break;
      bytes.push(...buffer.subarray(0, read));
    }
    conn.close();
    return { frames: clientFrames(new Uint8Array(bytes)), closedByHomed };
  })();
  return { url: `ws://127.0.0.1:${(listener.addr as Deno.NetAddr).port}/`, received };
}

Deno.test("forward: a frame whose header declares more than onebot.max_frame_bytes is refused before its payload", async () => {
  const lines: string[] = [];
  let url = "";
  setupLogging({
    level: "info",
    format: "text",
    secrets: [],
    write: (line) => lines.push(line.trim().replace(/^\S+ /, "")),
  });
  try {
    const qq = new QqDevice({
      settings: {
        owner: "20002000",
        allowUsers: [],
        allowGroups: [],
        approveFriends: [],
        groupPrefix: "",
        actionTimeoutMs: 5_000,
        splitAt: 1_500,
        minSendIntervalMs: 0,
        queueLimit: 10,
        maxFrameBytes: 65_536,
      },
      clock: systemClock,
      logger: log("qq"),
    });
    // 50 MB declared, 1 MiB of it sent: homed must not wait for (or keep) the rest.
    const server = serveOnce(52_428_800, 1_048_576);
    url = server.url;
    const client = new ForwardClient({
      url: server.url,
      accessToken: "",
      device: qq,
      clock: systemClock,
      random: () => 0.5,
      logger: log("qq"),
      baseDelayMs: 60_000,
    });
    await client.start();
    const { frames, closedByHomed } = await server.received;
    await client.stop();
    await qq.stop();
    const close = frames.find((frame) => frame.opcode === 8);
    assert.ok(close, `homed sent no close frame (frames: ${frames.map((f) => f.opcode).join(", ")})`);
    assert.equal((close.payload[0]! << 8) | close.payload[1]!, 1009);
    assert.equal(
      decoder.decode(close.payload.subarray(2)),
      "Frame of 52428800 bytes is over onebot.max_frame_bytes (65536)",
    );
    assert.ok(closedByHomed, "homed closed the TCP connection");
  } finally {
    stopLogging();
  }
  assert.ok(
    lines.includes(
      `[WRN] homed.qq: QQ forward connection ${url}: a frame of 52428800 bytes is over onebot.max_frame_bytes (65536); closing the connection (1009)`,
    ),
    lines.join("\n"),
  );
});
