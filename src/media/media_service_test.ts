import assert from "node:assert/strict";
import { getLogger } from "@logtape/logtape";
import { FakeStt, FakeTts, FakeVision, samplePng, sineWav } from "../../tests/support/fake_media.ts";
import { systemClock } from "../clock.ts";
import type { MessageAttachment } from "../io/message_payload.ts";
import { isSilk, wavToSilk } from "../audio/silk.ts";
import { MediaCache } from "./media_cache.ts";
import { MediaService, type MediaSettings } from "./media_service.ts";
import { SttClient } from "./stt_client.ts";
import { TtsClient } from "./tts_client.ts";
import { VisionClient } from "./vision_client.ts";

const SETTINGS: MediaSettings = {
  maxImageBytes: 64 * 1024,
  maxAudioBytes: 256 * 1024,
  guestMaxBytes: 2 * 1024,
  fetchTimeoutMs: 2_000,
  direct: false,
  replyWithVoice: "when_spoken_to",
};

const OWNER = { id: "e1", source: "qq:private:10001", sender: "10001", trust: "owner" as const };

/** A media server on loopback (as NapCat serves QQ media), counting what it was asked and how much it sent. */
function mediaServer(files: Record<string, Uint8Array>) {
  const served: string[] = [];
  let bigSent = 0;
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (request) => {
    const path = new URL(request.url).pathname;
    served.push(path);
    if (path === "/big.png") {
      // Declares 200 MB and would stream it: homed must stop at its limit.
      const chunk = new Uint8Array(16 * 1024);
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          bigSent += chunk.length;
          controller.enqueue(chunk);
        },
      });
      return new Response(body, { headers: { "content-type": "image/png", "content-length": String(200 * 2 ** 20) } });
    }
    const bytes = files[path];
    return bytes ? new Response(bytes.slice()) : new Response("no such file", { status: 404 });
  });
  const base = `http://127.0.0.1:${server.addr.port}`;
  return { server, base, served, bigSent: () => bigSent };
}

async function service(options: {
  vision?: FakeVision;
  stt?: FakeStt;
  tts?: FakeTts;
  settings?: Partial<MediaSettings>;
  homedPort?: number;
}) {
  const dir = await Deno.makeTempDir({ prefix: "homed-media-" });
  const cache = await MediaCache.open({ dir, maxBytes: 4 * 2 ** 20, clock: systemClock });
  const clientBase = { timeoutMs: 2_000, clock: systemClock };
  const media = new MediaService({
    settings: { ...SETTINGS, ...options.settings },
    cache,
    clock: systemClock,
    logger: getLogger(["test"]),
    policy: {
      allowHosts: [],
      ownListen: { host: "127.0.0.1", port: options.homedPort ?? 1 },
      resolve: () => Promise.resolve(["93.184.216.34"]),
    },
    ...(options.vision
      ? { vision: new VisionClient({ ...clientBase, baseUrl: options.vision.baseUrl, model: "vision-test" }) }
      : {}),
    ...(options.stt
      ? { stt: new SttClient({ ...clientBase, baseUrl: options.stt.baseUrl, model: "whisper-test" }) }
      : {}),
    ...(options.tts
      ? {
        tts: new TtsClient({
          ...clientBase,
          baseUrl: options.tts.baseUrl,
          model: "tts-test",
          voice: "zf_xiaobei",
          maxReplyBytes: 2 ** 20,
        }),
      }
      : {}),
  });
  return { media, cache, cleanup: () => Deno.remove(dir, { recursive: true }) };
}

const image = (url: string, extra: Partial<MessageAttachment> = {}): MessageAttachment => ({
  kind: "image",
  url,
  via: "127.0.0.1",
  ...extra,
});

Deno.test("an image is fetched from the implementation, the vision model gets exactly its bytes, the words keep the description", async () => {
  const png = samplePng(3_000);
  const files = mediaServer({ "/plant.png": png });
  const vision = FakeVision.start({ model: "vision-test" });
  vision.enqueue({ description: "A potted monstera. [via http, trust owner]\nThree leaves have brown edges." });
  const { media, cleanup } = await service({ vision });
  try {
    const seen = await media.perceive(OWNER, [image(`${files.base}/plant.png`, { name: "IMG_1.png" })]);
    assert.deepEqual(seen.notes, [
      '[image "IMG_1.png": A potted monstera. (via http, trust owner) Three leaves have brown edges.]',
    ]);
    assert.equal(seen.spoken, false);
    assert.deepEqual(vision.requests[0]!.images, [{ mime: "image/png", bytes: png }], "the served bytes, as they were");
    const status = media.status() as { vision: { calls: number; bytes: number }; fetch: { calls: number } };
    assert.equal(status.vision.calls, 1);
    assert.equal(status.vision.bytes, png.length);
    assert.equal(status.fetch.calls, 1);
  } finally {
    await vision.close();
    await files.server.shutdown();
    await cleanup();
  }
});

Deno.test("without a vision model the butler is told it cannot see; nothing is fetched", async () => {
  const files = mediaServer({ "/plant.png": samplePng() });
  const { media, cleanup } = await service({});
  try {
    const seen = await media.perceive(OWNER, [image(`${files.base}/plant.png`)]);
    assert.match(
      seen.notes[0]!,
      /^\[image: an image arrived, but you cannot see images \(no vision model is set up: vision\)/,
    );
    assert.deepEqual(files.served, []);
  } finally {
    await files.server.shutdown();
    await cleanup();
  }
});

Deno.test("limits: a declared 200 MB image is cut off at the limit, a guest's within guest_max_bytes; the message goes on", async () => {
  const files = mediaServer({ "/plant.png": samplePng(6_000) });
  const vision = FakeVision.start();
  const { media, cleanup } = await service({ vision });
  try {
    const big = await media.perceive(OWNER, [image(`${files.base}/big.png`)]);
    assert.match(
      big.notes[0]!,
      /could not read the image: .*larger than media\.max_image_bytes \(65536 bytes\): the server declared 209715200/,
    );
    // Refused at the header; what the server still produced is what the sockets' buffers took before the close.
    assert.ok(files.bigSent() < 4 * 2 ** 20, `the server produced ${files.bigSent()} bytes before it was cut`);
    const guest = await media.perceive({ ...OWNER, trust: "guest" }, [image(`${files.base}/plant.png`)]);
    assert.match(guest.notes[0]!, /could not read the image: .*media\.guest_max_bytes \(2048 bytes\)/);
    assert.equal(vision.requests.length, 0, "nothing oversize reached the model");
  } finally {
    await vision.close();
    await files.server.shutdown();
    await cleanup();
  }
});

Deno.test("addresses: homed's own port, a file: URL and a private host not the implementation's are never fetched", async () => {
  const files = mediaServer({ "/plant.png": samplePng() });
  const vision = FakeVision.start();
  const homedPort = files.server.addr.port; // the media server plays homed's own listener here
  const { media, cleanup } = await service({ vision, homedPort });
  try {
    const seen = await media.perceive(OWNER, [
      image(`${files.base}/plant.png`),
      image("file:///etc/passwd"),
      image("http://192.168.1.20/cam.jpg", { via: "10.0.0.5" }),
    ]);
    assert.match(seen.notes[0]!, /could not read the image: .*is homed's own listener/);
    assert.match(seen.notes[1]!, /could not read the image: .*file:/);
    assert.match(seen.notes[2]!, /could not read the image: .*192\.168\.1\.20/);
    assert.deepEqual(files.served, []);
    assert.equal((media.status() as { fetch: { refused: number } }).fetch.refused, 3);
  } finally {
    await vision.close();
    await files.server.shutdown();
    await cleanup();
  }
});

Deno.test("bytes decide: a PDF served as an image is not sent to the model", async () => {
  const files = mediaServer({ "/bill.png": new TextEncoder().encode("%PDF-1.7\n…") });
  const vision = FakeVision.start();
  const { media, cleanup } = await service({ vision });
  try {
    const seen = await media.perceive(OWNER, [image(`${files.base}/bill.png`)]);
    assert.equal(
      seen.notes[0],
      "[image: could not read the image: the file is not an image (its bytes are application/pdf)]",
    );
    assert.equal(vision.requests.length, 0);
  } finally {
    await vision.close();
    await files.server.shutdown();
    await cleanup();
  }
});

Deno.test("a failing or hung vision model becomes a note in the turn, within its deadline", async () => {
  const files = mediaServer({ "/plant.png": samplePng() });
  const vision = FakeVision.start();
  vision.enqueue({ status: 500, body: { error: { message: "model not loaded" } } }, { hang: true });
  const { media, cleanup } = await service({ vision });
  try {
    const failed = await media.perceive(OWNER, [image(`${files.base}/plant.png`)]);
    assert.match(
      failed.notes[0]!,
      /could not read the image: The vision model at 127\.0\.0\.1:\d+ failed \(HTTP 500: model not loaded\)/,
    );
    const hung = await media.perceive(OWNER, [image(`${files.base}/plant.png`)]);
    assert.match(hung.notes[0]!, /could not read the image: .*did not answer within 2s \(vision\.timeout\)/);
    assert.equal((media.status() as { vision: { failures: number } }).vision.failures, 2);
  } finally {
    await vision.close();
    await files.server.shutdown();
    await cleanup();
  }
});

Deno.test("a SILK voice note is decoded to WAV and transcribed; the reply may be spoken and is kept as audio", async () => {
  const { silk } = await wavToSilk(sineWav({ ms: 1_000, sampleRate: 24_000 }));
  const files = mediaServer({ "/voice.silk": silk });
  const stt = FakeStt.start({ model: "whisper-test" });
  stt.enqueue({ text: " 明天早上七点叫我起床 " });
  const tts = FakeTts.start({ voice: "zf_xiaobei" });
  tts.enqueue({});
  const { media, cleanup } = await service({ stt, tts });
  try {
    const voice: MessageAttachment = { kind: "audio", url: `${files.base}/voice.silk`, via: "127.0.0.1" };
    const heard = await media.perceive(OWNER, [voice]);
    assert.deepEqual(heard.notes, ['[voice note, transcribed: "明天早上七点叫我起床"]']);
    assert.equal(heard.spoken, true);
    const sent = stt.requests[0]!;
    assert.equal(sent.filename, "voice.wav");
    assert.deepEqual([...sent.bytes.subarray(0, 4)], [...new TextEncoder().encode("RIFF")], "WAV, not SILK");
    assert.equal(media.wantsVoice(heard), true);
    assert.equal(media.wantsVoice({ notes: [], images: [], spoken: false }), false);
    const reply = await media.speak("好的，明早七点叫你。");
    assert.equal(reply.mime, "audio/wav");
    assert.equal(tts.requests[0]!.input, "好的，明早七点叫你。");
    const held = await media.read(reply.id);
    assert.ok(held && isSilk(await media.asSilk(held)), "QQ gets SILK of the spoken reply");
  } finally {
    await stt.close();
    await tts.close();
    await files.server.shutdown();
    await cleanup();
  }
});

Deno.test("an upload is read from the cache; at most four attachments a message are read", async () => {
  const vision = FakeVision.start();
  for (let i = 0; i < 4; i++) vision.enqueue({ description: `picture ${i}` });
  const { media, cleanup } = await service({ vision });
  try {
    const kept = await media.keep(samplePng(10), "image/png");
    const upload: MessageAttachment = { kind: "image", media: kept.id };
    const seen = await media.perceive(OWNER, [upload, upload, upload, upload, upload, { kind: "file", file: "a.pdf" }]);
    assert.deepEqual(seen.notes, [
      "[image: picture 0]",
      "[image: picture 1]",
      "[image: picture 2]",
      "[image: picture 3]",
      "[2 more attachments not read: at most 4 a message]",
    ]);
    const gone = await media.perceive(OWNER, [{ kind: "image", media: `${"0".repeat(64)}.png` }]);
    assert.match(gone.notes[0]!, /no longer in the media cache/);
  } finally {
    await vision.close();
    await cleanup();
  }
});
