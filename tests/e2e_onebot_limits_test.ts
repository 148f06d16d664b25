/**
 * QQ limits end to end (issue 18, points 20 and 21): a real homed and a simulated implementation over loopback. A flood
 * of frames homed cannot use costs ten log lines, not one each; a frame over `onebot.max_frame_bytes` ends its
 * connection with 1009, naming the limit — refused at its header, before its payload.
 */

import assert from "node:assert/strict";
import { DEFAULT_CONTRACT, TEST_KEY } from "./support/contract.ts";
import { FakeLlm } from "./support/fake_llm.ts";
import { startHomed, workspace } from "./support/homed_process.ts";
import { handshakeHeaders, OneBotSim } from "./support/onebot_sim.ts";
import { teardown } from "./support/teardown.ts";
import { waitFor, within } from "./support/wait.ts";

const OWNER = "20002000";

Deno.test("a real homed: 1,000 bad frames log 10 lines; a frame over onebot.max_frame_bytes is closed with 1009", async () => {
  const fake = FakeLlm.start(DEFAULT_CONTRACT);
  const homed = await startHomed(
    await workspace({
      llm: { base_url: fake.baseUrl, api_key: TEST_KEY },
      onebot: { owner: OWNER, max_frame_bytes: 65_536, min_send_interval: "0s" },
    }),
  );
  const url = `${homed.url.replace("http", "ws")}/onebot/v11/ws`;
  const sim = await OneBotSim.connect(url, { flavour: "napcat" });
  const qq = async () => (await (await fetch(`${homed.url}/api/status`)).json()).services.io.devices.qq;
  try {
    for (let i = 0; i < 1_000; i++) sim.send(`{not json ${i}`);
    await waitFor(async () => (await qq()).bots[0]?.connections[0]?.dropped_frames === 1_000, "1,000 dropped frames");
    const dropped = homed.stderr().split("\n").filter((line) => line.includes("dropped a frame that is not JSON"));
    assert.equal(dropped.length, 10, dropped.slice(0, 12).join("\n"));
    assert.match(dropped[9]!, /QQ 10001000: dropped a frame that is not JSON: \{not json 9$/);

    // A second bot's socket sends 90,073 bytes in 30,000 characters: over 64 KiB once bytes are counted.
    const client =
      new (WebSocket as unknown as new (url: string, options: { headers: Record<string, string> }) => WebSocket)(
        url,
        { headers: handshakeHeaders("napcat", "30003000", "") },
      );
    const closed = new Promise<CloseEvent>((resolve) => client.addEventListener("close", resolve));
    await new Promise((resolve) => client.addEventListener("open", resolve, { once: true }));
    client.send(
      JSON.stringify({ post_type: "message", message_type: "private", user_id: 1, message: "汉".repeat(30_000) }),
    );
    const event = await within(closed, 5_000, "homed to close the socket");
    assert.equal(event.code, 1009);
    assert.equal(event.reason, "Frame of 90073 bytes is over onebot.max_frame_bytes (65536)");
    await waitFor(() => homed.stderr().includes("QQ 30003000: a frame of 90073 bytes"), "the warning");
    assert.match(
      homed.stderr(),
      /QQ 30003000: a frame of 90073 bytes is over onebot\.max_frame_bytes \(65536\); closing the connection \(1009\)/,
    );
    assert.deepEqual((await qq()).bots.map((bot: { self_id: string }) => bot.self_id), ["10001000"], "the first stays");

    // A third sends only a frame header declaring 50 MB: homed refuses it there, without waiting for the payload.
    const raw = await Deno.connect({ hostname: "127.0.0.1", port: Number(new URL(homed.url).port) });
    try {
      const headers = Object.entries(handshakeHeaders("napcat", "40004000", "")).map(([k, v]) => `${k}: ${v}\r\n`);
      await raw.write(new TextEncoder().encode(
        `GET /onebot/v11/ws HTTP/1.1\r\nHost: ${new URL(homed.url).host}\r\nUpgrade: websocket\r\n` +
          `Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n` +
          `${headers.join("")}\r\n`,
      ));
      const header = new Uint8Array([0x81, 0xff, 0, 0, 0, 0, 0x03, 0x20, 0, 0, 1, 2, 3, 4]); // masked, 52,428,800
      await raw.write(header);
      const received: number[] = [];
      const buffer = new Uint8Array(4_096);
      const reading = (async () => {
        for (let read; (read = await raw.read(buffer).catch(() => null)) !== null;) {
          received.push(...buffer.subarray(0, read));
        }
      })();
      await within(reading, 5_000, "homed to refuse the frame without its payload");
      const text = new TextDecoder("latin1").decode(new Uint8Array(received));
      assert.match(text, /^HTTP\/1\.1 101 /);
      // homed's own frames (its first actions, unmasked) come first; the close frame last.
      const bytes = new Uint8Array(received);
      let at = text.indexOf("\r\n\r\n") + 4;
      let close: Uint8Array | undefined;
      while (at + 2 <= bytes.length) {
        let length = bytes[at + 1]! & 0x7f;
        let start = at + 2;
        if (length === 126) (length = (bytes[at + 2]! << 8) | bytes[at + 3]!, start += 2);
        if ((bytes[at]! & 0x0f) === 8) close = bytes.subarray(start, start + length);
        at = start + length;
      }
      assert.ok(close, "a close frame");
      assert.equal((close[0]! << 8) | close[1]!, 1009);
      assert.equal(
        new TextDecoder().decode(close.subarray(2)),
        "Frame of 52428800 bytes is over onebot.max_frame_bytes (65536)",
      );
    } finally {
      raw.close();
    }
    await waitFor(() => homed.stderr().includes("QQ 40004000: a frame of 52428800 bytes"), "the warning");
  } finally {
    await teardown(
      () => sim.close(),
      async () => assert.equal(await homed.stop(), 0, homed.stderr()),
      () => fake.close(),
    );
  }
  // The count of what was held back is written at the latest when homed stops.
  assert.match(homed.stderr(), /QQ 10001000: 990 more dropped frames like this in the last 10 s/);
});
