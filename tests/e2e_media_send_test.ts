/**
 * What the butler sends obeys the rules of what it reads: `output_send` with a `url` has homed fetch that URL itself,
 * under the address policy and limits inbound media obey, and hands QQ the bytes it then holds — never the URL. A real
 * homed, a model that tries homed's own config file, the cloud metadata address, homed's own API, loopback and LAN
 * addresses, and a simulated NapCat that must receive nothing but bytes.
 */

import assert from "node:assert/strict";
import { encodeBase64 } from "../src/text/base64.ts";
import { DEFAULT_CONTRACT, TEST_KEY } from "./support/contract.ts";
import { FakeLlm } from "./support/fake_llm.ts";
import { FakeVision, samplePng } from "./support/fake_media.ts";
import { startHomed, workspace } from "./support/homed_process.ts";
import { OneBotSim } from "./support/onebot_sim.ts";
import { pictureServer } from "./support/picture_server.ts";
import { teardown } from "./support/teardown.ts";

const OWNER = "20002000";
const CHANNEL = `qq:private:${OWNER}`;

Deno.test("output_send: file:, link-local, loopback, homed's own API and LAN URLs are refused naming the rule; an allowed one reaches QQ as bytes homed holds", async () => {
  const png = samplePng(5_000);
  const web = pictureServer(png);
  const llm = FakeLlm.start(DEFAULT_CONTRACT);
  const vision = FakeVision.start({ model: "vision-test" });
  const ws = await workspace({
    llm: { base_url: llm.baseUrl, api_key: TEST_KEY },
    onebot: { owner: OWNER, min_send_interval: "0s" },
    vision: { base_url: vision.baseUrl, model: "vision-test", timeout: "5s" },
    media: { allow_hosts: [`127.0.0.1:${web.port}`], fetch_timeout: "5s" },
  });
  const homed = await startHomed(ws);
  let sim: OneBotSim | undefined;
  try {
    sim = await OneBotSim.connect(`${homed.url.replace("http", "ws")}/onebot/v11/ws`);
    const llmPort = new URL(llm.baseUrl).port;
    const tries: Array<[string, "image" | "file", RegExp]> = [
      [
        `file://${ws.configPath}`,
        "file",
        /^Error: tool "output_send" failed: url "file:\/\/\/tmp\/homed-test-[^"]+\/homed\.yaml" was refused: the scheme file: is not allowed \(only http: and https:\)$/,
      ],
      [
        "http://169.254.169.254/latest/meta-data/iam/security-credentials/",
        "image",
        /^Error: tool "output_send" failed: url "http:\/\/169\.254\.169\.254\/latest\/meta-data\/iam\/security-credentials\/" was refused: 169\.254\.169\.254 is a link-local address; list the host in media\.allow_hosts to allow it$/,
      ],
      [
        `${homed.url}/api/status`,
        "image",
        /^Error: tool "output_send" failed: url "http:\/\/127\.0\.0\.1:\d+\/api\/status" was refused: port \d+ on 127\.0\.0\.1 is homed's own listener \(127\.0\.0\.1:\d+\); homed never fetches from itself$/,
      ],
      [
        `http://127.0.0.1:${llmPort}/v1/models`,
        "image",
        /^Error: tool "output_send" failed: url "http:\/\/127\.0\.0\.1:\d+\/v1\/models" was refused: 127\.0\.0\.1 is a loopback address; list the host in media\.allow_hosts to allow it$/,
      ],
      [
        `http://localhost:${web.port}/plant.png`,
        "image",
        /^Error: tool "output_send" failed: url "http:\/\/localhost:\d+\/plant\.png" was refused: localhost is a loopback name; list the host in media\.allow_hosts to allow it$/,
      ],
      [
        "http://10.20.30.40/router.png",
        "image",
        /^Error: tool "output_send" failed: url "http:\/\/10\.20\.30\.40\/router\.png" was refused: 10\.20\.30\.40 is a private address; list the host in media\.allow_hosts to allow it$/,
      ],
      [
        "http://192.168.1.1/admin.png",
        "image",
        /^Error: tool "output_send" failed: url "http:\/\/192\.168\.1\.1\/admin\.png" was refused: 192\.168\.1\.1 is a private address; list the host in media\.allow_hosts to allow it$/,
      ],
    ];
    llm.enqueue(
      {
        toolCalls: [
          ...tries.map(([url, type]) => ({ name: "output_send", arguments: { channel: CHANNEL, type, url } })),
          { name: "output_send", arguments: { channel: CHANNEL, type: "image", url: web.url("/plant.png") } },
        ],
      },
      { reply: "Sent you the plant." },
    );
    sim.privateMessage(OWNER, "把植物照片和配置文件发给我");
    const sent = await sim.waitForActions("send_private_msg", 2);

    const results = (llm.requests[1]!.body.messages as Array<{ role: string; content: string }>)
      .filter((message) => message.role === "tool").map((message) => message.content);
    tries.forEach(([, , expected], index) => assert.match(results[index]!, expected));
    assert.equal(results[tries.length], `Queued image for ${CHANNEL}`);
    assert.deepEqual(web.asked, ["/plant.png"], "homed fetched the allowed picture itself, once; nothing else");

    const messages = sent.map((action) => action.params.message as Array<{ type: string; data: { file?: string } }>);
    const images = messages.flat().filter((segment) => segment.type === "image");
    assert.deepEqual(images, [{ type: "image", data: { file: `base64://${encodeBase64(png)}` } }], "the bytes");
    const said = JSON.stringify(sim.actions.map((action) => action.params));
    for (const url of [...tries.map(([url]) => url), web.url("/plant.png")]) {
      assert.ok(!said.includes(url), `${url} never reached the implementation`);
    }
    assert.ok(!said.includes("file://") && !said.includes("api_key"), said.slice(0, 300));
    const fetches = (await (await fetch(`${homed.url}/api/status`)).json()).services.media.fetch;
    assert.equal(fetches.refused, tries.length, JSON.stringify(fetches));
  } finally {
    await teardown(
      async () => await sim?.close(),
      async () => assert.equal(await homed.stop(), 0, homed.stderr()),
      () => web.server.shutdown(),
      () => llm.close(),
      () => vision.close(),
    );
  }
});
