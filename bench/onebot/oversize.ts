/**
 * What one oversize OneBot frame costs the daemon: a real homed (QQ on, `onebot.max_frame_bytes` 1 MiB) gets a 50 MB
 * text frame on its reverse WebSocket, three times on fresh connections; its RSS before and at most after. Anchor in
 * the same run: a Deno.serve server taking the same frames through `Deno.upgradeWebSocket` (homed's endpoint before
 * issue 18.20), which reads a message whole before its size can be checked.
 *
 * Run: deno task bench:oversize (writes bench/out/onebot/oversize.json; --record: bench/onebot/oversize.json).
 */

import { DAEMON_V8_FLAGS } from "../../src/rights/command_flags.ts";
import { startHomed, workspace } from "../../tests/support/homed_process.ts";
import { environment, rssMb, writeResults } from "../support/report.ts";

const FRAME_BYTES = 50 * 1_048_576;
const encoder = new TextEncoder();

/** Opens a WebSocket by hand and sends one masked text frame of FRAME_BYTES; resolves when the server ends it. */
async function sendOversize(port: number, path: string, headers: Record<string, string>): Promise<void> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  const extra = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join("");
  await conn.write(encoder.encode(
    `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
      `Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n${extra}\r\n`,
  ));
  const reading = (async () => {
    const buffer = new Uint8Array(65_536);
    while ((await conn.read(buffer).catch(() => null)) !== null) { /* until the server closes */ }
  })();
  const header = new Uint8Array(14);
  header.set([0x81, 0xff]);
  new DataView(header.buffer).setBigUint64(2, BigInt(FRAME_BYTES));
  header.set([0, 0, 0, 0], 10); // a zero mask: the payload goes as it is
  const chunk = new Uint8Array(1_048_576).fill(0x61);
  try {
    await conn.write(header);
    for (let sent = 0; sent < FRAME_BYTES; sent += chunk.length) await conn.write(chunk);
  } catch { /* the server closed early: what homed does */ }
  await reading;
  conn.close();
}

async function measure(pid: number, send: () => Promise<void>) {
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  const before = await rssMb(pid);
  let peak = before;
  const sampling = setInterval(async () => peak = Math.max(peak, await rssMb(pid)), 50);
  for (let i = 0; i < 3; i++) await send();
  await new Promise((resolve) => setTimeout(resolve, 300));
  clearInterval(sampling);
  const after = await rssMb(pid);
  return { rss_before_mb: before, rss_peak_mb: Math.max(peak, after), rss_after_mb: after };
}

const anchorCode = `Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: (a) => console.log(a.port) }, (request) => {
  const { socket, response } = Deno.upgradeWebSocket(request);
  socket.onmessage = (event) => socket.close(1009, "Frame of " + event.data.length + " bytes is over the limit");
  return response;
});`;
const anchor = new Deno.Command(Deno.execPath(), {
  args: ["eval", DAEMON_V8_FLAGS, "--no-prompt", "--allow-net=127.0.0.1", anchorCode],
  stdout: "piped",
}).spawn();
const reader = anchor.stdout.pipeThrough(new TextDecoderStream()).getReader();
let printed = "";
while (!printed.includes("\n")) printed += (await reader.read()).value ?? "";
const anchorPort = Number(printed.trim());
const rows: Record<string, unknown> = {};
rows["anchor: Deno.upgradeWebSocket"] = await measure(anchor.pid, () => sendOversize(anchorPort, "/", {}));
anchor.kill("SIGTERM");
await anchor.status;
await reader.cancel();

const homed = await startHomed(await workspace({ onebot: { owner: "20002000", max_frame_bytes: 1_048_576 } }));
let selfId = 10_001_000;
rows["homed reverse endpoint (onebot.max_frame_bytes 1 MiB)"] = await measure(
  homed.pid,
  () =>
    sendOversize(Number(new URL(homed.url).port), "/onebot/v11/ws", {
      "X-Self-ID": String(selfId++),
      "X-Client-Role": "Universal",
    }),
);
await homed.stop();

const env = await environment();
await writeResults(new URL("./oversize.json", import.meta.url), { ...env, frame_bytes: FRAME_BYTES, rows });
console.log(`one 50 MB frame, three times (${env.commit.slice(0, 10)}, deno ${env.deno}, ${env.cpu})`);
console.table(rows);
