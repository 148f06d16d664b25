/**
 * QQ limits end to end (issue 18, points 20 and 21): a real homed and a simulated implementation over loopback. A flood
 * of frames homed cannot use costs ten log lines, not one each; a frame over `onebot.max_frame_bytes` ends its
 * connection with 1009, naming the limit.
 */

import assert from "node:assert/strict";
import { DEFAULT_CONTRACT, TEST_KEY } from "./support/contract.ts";
import { FakeLlm } from "./support/fake_llm.ts";
import { startHomed, workspace } from "./support/homed_process.ts";
import { handshakeHeaders, OneBotSim } from "./support/onebot_sim.ts";
import { teardown } from "./support/teardown.ts";
import { waitFor } from "./support/wait.ts";

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
    let timer: ReturnType<typeof setTimeout> | undefined;
    const event = await Promise.race([
      closed,
      new Promise<never>((_, reject) =>
        timer = setTimeout(() => reject(new Error("homed kept the socket open")), 5_000)
      ),
    ]).finally(() => clearTimeout(timer));
    assert.equal(event.code, 1009);
    assert.equal(event.reason, "Frame of 90073 bytes is over onebot.max_frame_bytes (65536)");
    await waitFor(() => homed.stderr().includes("QQ 30003000: a frame of 90073 bytes"), "the warning");
    assert.match(
      homed.stderr(),
      /QQ 30003000: a frame of 90073 bytes is over onebot\.max_frame_bytes \(65536\); closing the connection \(1009\)/,
    );
    assert.deepEqual((await qq()).bots.map((bot: { self_id: string }) => bot.self_id), ["10001000"], "the first stays");
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
