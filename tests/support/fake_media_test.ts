/**
 * The media fakes are strict: each refuses a request that breaks its wire contract with a 400 and a violation naming
 * the problem (which then fails `close()`), and answers a well-formed one as the real servers do.
 *
 * @module
 */

import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { FakeStt, FakeTts, FakeVision, samplePng, sineWav } from "./fake_media.ts";

type AnyFake = FakeVision | FakeStt | FakeTts;

/** The response is a 400 whose message, and the fake's one violation, match `problem`; `close()` then fails. */
async function refused(fake: AnyFake, response: Response, problem: RegExp, status = 400): Promise<void> {
  const body = await response.json();
  assert.equal(response.status, status);
  assert.match(String(body.error?.message), status === 400 ? problem : /API key/);
  assert.equal(fake.violations.length, 1, fake.violations.join("\n"));
  assert.match(fake.violations[0]!, problem);
  assert.match(fake.violations[0]!, /^request #1: /);
  await assert.rejects(fake.close(), (error: Error) => problem.test(error.message));
  assert.equal(fake.requests.length, 0);
}

function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
}

const dataUrl = (mime: string, bytes: Uint8Array) => `data:${mime};base64,${Buffer.from(bytes).toString("base64")}`;

function visionBody(url: string, model = "vl") {
  return {
    model,
    stream: false,
    messages: [{
      role: "user",
      content: [{ type: "text", text: "What is this?" }, { type: "image_url", image_url: { url } }],
    }],
    max_tokens: 50,
  };
}

function sttForm(fields: Record<string, string>, file?: { bytes: Uint8Array<ArrayBuffer>; name: string }): FormData {
  const form = new FormData();
  if (file) form.append("file", new Blob([file.bytes], { type: "audio/wav" }), file.name);
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  return form;
}

const ttsBody = { model: "kokoro", input: "Hello", voice: "af_heart", response_format: "wav" };

Deno.test("the fake vision model answers a well-formed request and records the image bytes", async () => {
  await using fake = FakeVision.start({ model: "vl", maxTokens: 50 });
  fake.enqueue({ description: "A red square." });
  const png = samplePng(10);
  const response = await post(`${fake.baseUrl}/chat/completions`, visionBody(dataUrl("image/png", png)));
  const body = await response.json();
  assert.equal(response.status, 200);
  assert.equal(body.choices[0].message.content, "A red square.");
  assert.equal(body.object, "chat.completion");
  assert.deepEqual(fake.requests[0]?.images, [{ mime: "image/png", bytes: png }]);
  assert.equal(fake.requests[0]?.instruction, "What is this?");
});

Deno.test("the fake vision model refuses a wrong path", async () => {
  const fake = FakeVision.start();
  fake.enqueue({});
  const response = await post(`${fake.baseUrl}/completions`, visionBody(dataUrl("image/png", samplePng())));
  await refused(fake, response, /POST \/v1\/completions is not POST \/v1\/chat\/completions/);
});

Deno.test("the fake vision model refuses a data URL whose bytes are not the image it declares", async () => {
  const fake = FakeVision.start();
  fake.enqueue({});
  const notPng = new TextEncoder().encode("<html>not an image</html>");
  const response = await post(`${fake.baseUrl}/chat/completions`, visionBody(dataUrl("image/png", notPng)));
  await refused(fake, response, /image 1 \(content\[1\]\) is declared image\/png but its bytes are not a PNG image/);
});

Deno.test("the fake vision model refuses a JPEG sent as a PNG, bad base64 and an https URL", async () => {
  const jpeg = new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 0, 16, 0x4a, 0x46]);
  const cases: Array<[string, RegExp]> = [
    [dataUrl("image/png", jpeg), /declared image\/png but its bytes are not a PNG image/],
    ["data:image/jpeg;base64,@@@@", /is not valid base64/],
    ["https://example.com/cat.png", /is not a data:<mime>;base64, URL/],
    [dataUrl("image/bmp", new TextEncoder().encode("BM")), /declares image\/bmp, not an image type/],
  ];
  for (const [url, problem] of cases) {
    const fake = FakeVision.start();
    fake.enqueue({});
    await refused(fake, await post(`${fake.baseUrl}/chat/completions`, visionBody(url)), problem);
  }
});

Deno.test("the fake vision model refuses a wrong model", async () => {
  const fake = FakeVision.start({ model: "vl" });
  fake.enqueue({});
  const response = await post(`${fake.baseUrl}/chat/completions`, visionBody(dataUrl("image/png", samplePng()), "x"));
  await refused(fake, response, /model is "x", expected vl/);
});

Deno.test("the fake vision model refuses a message without an image part", async () => {
  const fake = FakeVision.start();
  fake.enqueue({});
  const body = { model: "vl", messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }] };
  await refused(fake, await post(`${fake.baseUrl}/chat/completions`, body), /no image_url part/);
});

Deno.test("the fake vision model refuses a missing key, and a key it does not expect", async () => {
  const keyed = FakeVision.start({ apiKey: "sk-1" });
  keyed.enqueue({});
  const missing = await post(`${keyed.baseUrl}/chat/completions`, visionBody(dataUrl("image/png", samplePng())));
  await refused(keyed, missing, /sent no key/, 401);
  const open = FakeVision.start();
  open.enqueue({});
  const extra = await post(`${open.baseUrl}/chat/completions`, visionBody(dataUrl("image/png", samplePng())), {
    authorization: "Bearer sk-1",
  });
  await refused(open, extra, /sent an Authorization header though no key is configured/);
});

Deno.test("the fake speech-to-text server answers a well-formed form and records the file", async () => {
  await using fake = FakeStt.start({ model: "whisper-1", language: "zh" });
  fake.enqueue({ text: "把灯关了" });
  const wav = sineWav({ ms: 50 });
  const form = sttForm({ model: "whisper-1", response_format: "json", language: "zh" }, { bytes: wav, name: "a.wav" });
  const response = await fetch(`${fake.baseUrl}/audio/transcriptions`, { method: "POST", body: form });
  assert.deepEqual(await response.json(), { text: "把灯关了" });
  assert.deepEqual(fake.requests[0]?.bytes, wav);
  assert.equal(fake.requests[0]?.filename, "a.wav");
  assert.equal(fake.requests[0]?.language, "zh");
});

Deno.test("the fake speech-to-text server refuses a form without a file part", async () => {
  const fake = FakeStt.start();
  fake.enqueue({});
  const response = await fetch(`${fake.baseUrl}/audio/transcriptions`, {
    method: "POST",
    body: sttForm({ model: "whisper-1" }),
  });
  await refused(fake, response, /the file part is missing/);
});

Deno.test("the fake speech-to-text server refuses a file without an audio extension, or not the audio it names", async () => {
  const cases: Array<[string, Uint8Array<ArrayBuffer>, RegExp]> = [
    ["voice", sineWav({ ms: 10 }), /the file name "voice" has no audio extension/],
    ["voice.txt", sineWav({ ms: 10 }), /the file name "voice.txt" has no audio extension/],
    ["voice.wav", new TextEncoder().encode("not a wav file"), /the file "voice.wav" is not wav audio/],
  ];
  for (const [name, bytes, problem] of cases) {
    const fake = FakeStt.start();
    fake.enqueue({});
    const form = sttForm({ model: "whisper-1" }, { bytes, name });
    await refused(fake, await fetch(`${fake.baseUrl}/audio/transcriptions`, { method: "POST", body: form }), problem);
  }
});

Deno.test("the fake speech-to-text server refuses a wrong model and a missing language", async () => {
  const fake = FakeStt.start({ model: "whisper-1" });
  fake.enqueue({});
  const form = sttForm({ model: "tiny" }, { bytes: sineWav({ ms: 10 }), name: "a.wav" });
  const response = await fetch(`${fake.baseUrl}/audio/transcriptions`, { method: "POST", body: form });
  await refused(fake, response, /model is "tiny", expected whisper-1/);
  const zh = FakeStt.start({ language: "zh" });
  zh.enqueue({});
  const without = sttForm({ model: "whisper-1" }, { bytes: sineWav({ ms: 10 }), name: "a.wav" });
  await refused(
    zh,
    await fetch(`${zh.baseUrl}/audio/transcriptions`, { method: "POST", body: without }),
    /language is null, expected "zh"/,
  );
});

Deno.test("the fake speech-to-text server refuses a body that is not a multipart form", async () => {
  const fake = FakeStt.start();
  fake.enqueue({});
  const response = await post(`${fake.baseUrl}/audio/transcriptions`, { model: "whisper-1" });
  await refused(fake, response, /content-type is application\/json, not multipart\/form-data/);
});

Deno.test("the fake text-to-speech server answers a real WAV and records the input", async () => {
  await using fake = FakeTts.start({ model: "kokoro", voice: "af_heart" });
  fake.enqueue({});
  const response = await post(`${fake.baseUrl}/audio/speech`, ttsBody);
  const bytes = new Uint8Array(await response.arrayBuffer());
  assert.equal(response.headers.get("content-type"), "audio/wav");
  assert.equal(new TextDecoder().decode(bytes.subarray(0, 4)), "RIFF");
  assert.equal(new TextDecoder().decode(bytes.subarray(8, 16)), "WAVEfmt ");
  const view = new DataView(bytes.buffer);
  assert.equal(view.getUint16(22, true), 1, "mono");
  assert.equal(view.getUint16(34, true), 16, "16-bit");
  assert.equal(view.getUint32(40, true), bytes.length - 44, "the data chunk fills the file");
  assert.equal(fake.requests[0]?.input, "Hello");
  assert.equal(fake.requests[0]?.voice, "af_heart");
});

Deno.test("the fake text-to-speech server refuses a wrong voice, a wrong format and an unknown field", async () => {
  const cases: Array<[Record<string, unknown>, RegExp]> = [
    [{ ...ttsBody, voice: "alloy" }, /voice is "alloy", expected af_heart/],
    [{ ...ttsBody, response_format: "mp3" }, /response_format is mp3; the fake speaks only wav/],
    [{ model: "kokoro", input: "Hello", voice: "af_heart" }, /response_format is missing/],
    [{ ...ttsBody, input: "" }, /input is missing or empty/],
    [{ ...ttsBody, stream: true }, /unknown field stream/],
    [{ ...ttsBody, model: "tts-1" }, /model is "tts-1", expected kokoro/],
  ];
  for (const [body, problem] of cases) {
    const fake = FakeTts.start({ model: "kokoro", voice: "af_heart" });
    fake.enqueue({});
    await refused(fake, await post(`${fake.baseUrl}/audio/speech`, body), problem);
  }
});

Deno.test("the fake text-to-speech server refuses a wrong path under another prefix", async () => {
  const fake = FakeTts.start({ pathPrefix: "/api/v1" });
  fake.enqueue({});
  assert.match(fake.baseUrl, /^http:\/\/127\.0\.0\.1:\d+\/api\/v1$/);
  const response = await post(`${fake.origin}/v1/audio/speech`, ttsBody);
  await refused(fake, response, /POST \/v1\/audio\/speech is not POST \/api\/v1\/audio\/speech/);
});

Deno.test("a fake answers scripted errors, delays, and lets a hung request go when it closes", async () => {
  const fake = FakeTts.start();
  fake.enqueue({ status: 500, body: { error: { message: "model not loaded" } } }, { delayMs: 50 }, { hang: true });
  const failed = await post(`${fake.baseUrl}/audio/speech`, ttsBody);
  assert.equal(failed.status, 500);
  assert.deepEqual(await failed.json(), { error: { message: "model not loaded" } });
  const started = performance.now();
  const late = await post(`${fake.baseUrl}/audio/speech`, ttsBody);
  await late.body?.cancel();
  assert.ok(performance.now() - started >= 45, "the delayed answer came after its delay");
  const hung = post(`${fake.baseUrl}/audio/speech`, ttsBody);
  await fake.received(3);
  await fake.close();
  const released = await hung;
  assert.equal(released.status, 503);
  await released.body?.cancel();
});

Deno.test("a fake fails close() when a scripted answer was never asked for", async () => {
  const fake = FakeStt.start();
  fake.enqueue({ text: "never" });
  await assert.rejects(fake.close(), /1 scripted answer\(s\) were never asked for/);
});

Deno.test("a fake refuses a request its script has no answer for", async () => {
  const fake = FakeVision.start();
  const response = await post(`${fake.baseUrl}/chat/completions`, visionBody(dataUrl("image/png", samplePng())));
  await refused(fake, response, /unexpected request: the script is empty/);
});
