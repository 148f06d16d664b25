/**
 * Seeing and hearing end to end: a real homed with strict fakes of the LLM, a vision model, a speech-to-text and a
 * text-to-speech server, and a simulated NapCat that serves its media over HTTP on loopback. Images and voice notes
 * from QQ and from `/api/chat` reach the main model as text; a voice note is answered with a QQ voice message; limits,
 * strangers and addresses homed must not fetch are held to.
 */

import assert from "node:assert/strict";
import { isSilk, silkToWav, wavToSilk } from "../src/audio/silk.ts";
import { decodeWav } from "../src/audio/wav.ts";
import { encodeBase64 } from "../src/text/base64.ts";
import { DEFAULT_CONTRACT, TEST_KEY } from "./support/contract.ts";
import { FakeLlm } from "./support/fake_llm.ts";
import { FakeStt, FakeTts, FakeVision, samplePng, sineWav } from "./support/fake_media.ts";
import { type HomedProcess, startHomed, workspace } from "./support/homed_process.ts";
import { OneBotSim } from "./support/onebot_sim.ts";
import { teardown } from "./support/teardown.ts";

const OWNER = "20002000";
const STRANGER = "40004000";
type Messages = Array<{ role: string; content: string }>;

/** NapCat's media server: files by path, a 200 MB image that never ends, and a log of what was asked. */
function napcatMedia(files: Record<string, Uint8Array>) {
  const asked: string[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (request) => {
    const path = new URL(request.url).pathname;
    asked.push(path);
    if (path === "/huge.jpg") {
      const chunk = new Uint8Array(64 * 1024).fill(0xff);
      return new Response(new ReadableStream({ pull: (controller) => controller.enqueue(chunk) }), {
        headers: { "content-type": "image/jpeg", "content-length": String(200 * 2 ** 20) },
      });
    }
    const bytes = files[path];
    return bytes ? new Response(bytes.slice()) : new Response("gone", { status: 404 });
  });
  return { server, asked, url: (path: string) => `http://127.0.0.1:${server.addr.port}${path}` };
}

interface Peers {
  llm: FakeLlm;
  vision: FakeVision;
  stt: FakeStt;
  tts: FakeTts;
}

function startPeers(): Peers {
  return {
    llm: FakeLlm.start(DEFAULT_CONTRACT),
    vision: FakeVision.start({ model: "vision-test" }),
    stt: FakeStt.start({ model: "whisper-test" }),
    tts: FakeTts.start({ model: "tts-test", voice: "zf_xiaobei" }),
  };
}

/** Stops the fakes, each checking it saw nothing against its contract. */
const closePeers = (peers: Peers) => [
  () => peers.llm.close(),
  () => peers.vision.close(),
  () => peers.stt.close(),
  () => peers.tts.close(),
];

async function homedWith(peers: Peers, mediaPort: number): Promise<HomedProcess> {
  return await startHomed(
    await workspace({
      llm: { base_url: peers.llm.baseUrl, api_key: TEST_KEY },
      onebot: { owner: OWNER, min_send_interval: "0s" },
      vision: { base_url: peers.vision.baseUrl, model: "vision-test", timeout: "5s" },
      speech: {
        stt: { base_url: peers.stt.baseUrl, model: "whisper-test", timeout: "5s" },
        tts: { base_url: peers.tts.baseUrl, model: "tts-test", voice: "zf_xiaobei", timeout: "5s" },
        reply_with_voice: "when_spoken_to",
      },
      media: { max_image_bytes: 1_048_576, allow_hosts: [`127.0.0.1:${mediaPort}`], fetch_timeout: "5s" },
    }),
  );
}

const lastUser = (llm: FakeLlm, index: number) =>
  (llm.requests[index]!.body.messages as Messages).filter((message) => message.role === "user").at(-1)!.content;

Deno.test("QQ: an owner's photo is seen, a voice note heard and answered in voice; limits, strangers and bad addresses hold", async () => {
  const photo = samplePng(20_000);
  const { silk: voice } = await wavToSilk(sineWav({ ms: 1_200, sampleRate: 24_000 }));
  const media = napcatMedia({ "/plant.png": photo, "/voice.silk": voice });
  const peers = startPeers();
  const homed = await homedWith(peers, media.server.addr.port);
  let sim: OneBotSim | undefined;
  try {
    sim = await OneBotSim.connect(`${homed.url.replace("http", "ws")}/onebot/v11/ws`);
    const image = (url: string) => ({ type: "image", data: { file: "abc.image", url } });

    // 1. A photo: the vision model gets exactly the served bytes; the main model gets the description as text.
    peers.vision.enqueue({ description: "A monstera whose lower leaves have brown, crispy edges." });
    peers.llm.enqueue({ reply: "Brown crispy edges usually mean too little humidity." });
    sim.privateMessage(OWNER, [{ type: "text", data: { text: "这盆植物怎么了？" } }, image(media.url("/plant.png"))]);
    await sim.waitForActions("send_private_msg", 1);
    assert.deepEqual(peers.vision.requests[0]!.images, [{ mime: "image/png", bytes: photo }]);
    assert.match(
      lastUser(peers.llm, 0),
      /这盆植物怎么了？\[image\]\n\[image: A monstera whose lower leaves have brown, crispy edges\.\]$/,
    );
    assert.ok(!lastUser(peers.llm, 0).includes("base64"), "no bytes reach the main model");

    // 2. A voice note (SILK): transcribed from WAV, answered with a QQ voice message the simulator can decode.
    peers.stt.enqueue({ text: "明天早上七点叫我起床" });
    peers.llm.enqueue({ reply: "好的，明早七点叫你。" });
    peers.tts.enqueue({});
    sim.privateMessage(OWNER, [{ type: "record", data: { file: "voice.amr", url: media.url("/voice.silk") } }]);
    const replies = await sim.waitForActions("send_private_msg", 3);
    assert.equal(peers.stt.requests[0]!.filename, "voice.wav");
    assert.equal(decodeWav(peers.stt.requests[0]!.bytes).sampleRate, 24_000);
    assert.match(lastUser(peers.llm, 1), /\[voice note, transcribed: "明天早上七点叫我起床"\]$/);
    assert.equal(peers.tts.requests[0]!.input, "好的，明早七点叫你。");
    const [record, text] = [replies[1]!, replies[2]!].map((action) =>
      (action.params.message as Array<{ type: string; data: Record<string, string> }>)[0]!
    );
    assert.equal(record!.type, "record");
    const silk = Uint8Array.from(atob(record!.data.file!.replace(/^base64:\/\//, "")), (c) => c.charCodeAt(0));
    assert.ok(isSilk(silk), "a SILK voice message");
    assert.ok(decodeWav(await silkToWav(silk)).pcm.length > 0, "that decodes");
    assert.deepEqual(text, { type: "text", data: { text: "好的，明早七点叫你。" } });

    // 3. A server declaring 200 MB: refused at the limit, the message still answered.
    peers.llm.enqueue({ reply: "I could not open that picture." });
    sim.privateMessage(OWNER, [image(media.url("/huge.jpg"))]);
    await sim.waitForActions("send_private_msg", 4);
    assert.match(
      lastUser(peers.llm, 2),
      /could not read the image: .*larger than media\.max_image_bytes \(1048576 bytes\)/,
    );

    // 4. homed's own port and a file: URL are never fetched, whatever the segment says.
    peers.llm.enqueue({ reply: "Neither could be opened." });
    sim.privateMessage(OWNER, [image(`${homed.url}/api/status`), image("file:///etc/passwd")]);
    await sim.waitForActions("send_private_msg", 5);
    const refused = lastUser(peers.llm, 3);
    assert.match(
      refused,
      /could not read the image: Homed will not fetch http:\/\/127\.0\.0\.1:\d+\/api\/status: .*homed's own listener/,
    );
    // A file: URL is no address homed takes from a segment: it asks the implementation (get_image), which gives none.
    assert.match(refused, /\[image: could not read the image: the channel gave no address for it\]$/);
    assert.deepEqual(sim.actions.filter((a) => a.action === "get_image").map((a) => a.params), [{ file: "abc.image" }]);

    // 5. A stranger's image is neither fetched nor described (nor answered).
    const before = media.asked.length;
    sim.privateMessage(STRANGER, [image(media.url("/plant.png"))]);
    sim.privateMessage(OWNER, "last one");
    peers.llm.enqueue({ reply: "Done." });
    await sim.waitForActions("send_private_msg", 6);
    assert.deepEqual(media.asked.slice(before), [], "nothing fetched for the stranger");
    assert.equal(peers.vision.requests.length, 1);

    const status = (await (await fetch(`${homed.url}/api/status`)).json()).services.media;
    assert.equal(status.vision.calls, 1);
    assert.equal(status.stt.calls, 1);
    assert.equal(status.tts.calls, 1);
    assert.equal(status.fetch.refused, 1, "homed's own port");
    assert.ok(status.cache.files >= 3, JSON.stringify(status.cache));
  } finally {
    await teardown(
      async () => await sim?.close(),
      async () => assert.equal(await homed.stop(), 0, homed.stderr()),
      () => media.server.shutdown(),
      ...closePeers(peers),
    );
  }
});

Deno.test("HTTP: an image and an audio clip in /api/chat (JSON and multipart); bad ones get a 4xx naming the field", async () => {
  const media = napcatMedia({});
  const peers = startPeers();
  const homed = await homedWith(peers, media.server.addr.port);
  const chat = (body: BodyInit, type?: string) =>
    fetch(`${homed.url}/api/chat`, { method: "POST", body, headers: type ? { "content-type": type } : {} });
  try {
    const png = samplePng(100);
    const wav = sineWav({ ms: 500 });
    const dataUrl = (mime: string, bytes: Uint8Array) => `data:${mime};base64,${encodeBase64(bytes)}`;
    peers.vision.enqueue({ description: "A receipt for 42 yuan." });
    peers.stt.enqueue({ text: "这是什么" });
    peers.llm.enqueue({ reply: "It is a receipt." });
    const answer = await chat(
      JSON.stringify({
        text: "看看",
        attachments: [{ data: dataUrl("image/png", png), name: "r.png" }, { data: dataUrl("audio/wav", wav) }],
      }),
      "application/json",
    );
    assert.equal(answer.status, 200, await answer.clone().text());
    assert.equal((await answer.json()).reply, "It is a receipt.");
    assert.deepEqual(peers.vision.requests[0]!.images[0]!.bytes, png);
    assert.deepEqual(peers.stt.requests[0]!.bytes, wav);
    assert.match(
      lastUser(peers.llm, 0),
      /看看\n\[image "r\.png": A receipt for 42 yuan\.\]\n\[voice note, transcribed: "这是什么"\]$/,
    );

    const form = new FormData();
    form.append("text", "and this one");
    form.append("file", new Blob([png], { type: "image/png" }), "photo.png");
    peers.vision.enqueue({ description: "The same receipt." });
    peers.llm.enqueue({ reply: "Same receipt." });
    const bare = await chat(form);
    assert.equal(bare.status, 415, "a form without an Authorization header is what a web page could send");
    assert.match(
      (await bare.json()).error.message,
      /multipart\/form-data is taken by \/api\/chat with an Authorization/,
    );
    const multipart = await fetch(`${homed.url}/api/chat`, {
      method: "POST",
      body: form,
      headers: { authorization: "Bearer any-token-when-none-is-set" },
    });
    assert.equal(multipart.status, 200, await multipart.clone().text());
    assert.match(lastUser(peers.llm, 1), /and this one\n\[image "photo\.png": The same receipt\.\]$/);

    const refusals: Array<[unknown, number, RegExp]> = [
      [
        { text: "x", attachments: [{ data: "data:image/png;base64,@@@" }] },
        400,
        /attachments\[0\]\.data" must be a base64 data URL/,
      ],
      [
        { text: "x", attachments: [{ data: dataUrl("image/png", wav) }] },
        415,
        /"attachments\[0\]" is declared image\/png but its bytes are audio\/wav/,
      ],
      [
        { text: "x", attachments: [{ data: dataUrl("application/pdf", png) }] },
        415,
        /"attachments\[0\]" has type "application\/pdf"/,
      ],
      [
        { text: "x", attachments: [{ data: dataUrl("image/png", samplePng(1_048_577)) }] },
        413,
        /"attachments\[0\]" has \d+ bytes; allowed: at most 1048576 \(media\.max_image_bytes\)/,
      ],
    ];
    for (const [body, status, message] of refusals) {
      const response = await chat(JSON.stringify(body), "application/json");
      const json = await response.json();
      assert.equal(response.status, status, JSON.stringify(json));
      assert.match(json.error.message, message);
    }
    assert.equal(peers.llm.requests.length, 2, "no refused request reached the model");
  } finally {
    await teardown(
      async () => assert.equal(await homed.stop(), 0, homed.stderr()),
      () => media.server.shutdown(),
      ...closePeers(peers),
    );
  }
});
