/**
 * The speech-to-text client against the strict fake server: the form it sends (file name, model, language), the key header, and every way the call can fail.
 *
 * @module
 */

import assert from "node:assert/strict";
import { systemClock } from "../clock.ts";
import { FakeStt, sineWav } from "../../tests/support/fake_media.ts";
import { MediaModelError } from "./model_call.ts";
import { SttClient, type SttClientOptions } from "./stt_client.ts";

function client(fake: FakeStt, options: Partial<SttClientOptions> = {}): SttClient {
  return new SttClient({
    baseUrl: fake.baseUrl,
    model: "whisper-1",
    timeoutMs: 10_000,
    clock: systemClock,
    ...options,
  });
}

/** The rejection of `work` as a MediaModelError (fails when it resolves or throws anything else). */
async function failure(work: Promise<unknown>): Promise<MediaModelError> {
  try {
    await work;
  } catch (error) {
    assert.ok(error instanceof MediaModelError, `expected a MediaModelError, got ${error}`);
    return error;
  }
  assert.fail("expected the call to fail");
}

const wav = sineWav({ ms: 300 });
const voice = { bytes: wav, mime: "audio/wav", filename: "voice.wav" };

Deno.test("transcribe sends the file with its name and type, the model, json and the language", async () => {
  await using fake = FakeStt.start({ model: "whisper-1", language: "zh" });
  fake.enqueue({ text: "  把客厅的灯关了。\n" });
  const text = await client(fake, { language: "zh" }).transcribe(voice);
  assert.equal(text, "把客厅的灯关了。");
  const [request] = fake.requests;
  assert.deepEqual(request?.bytes, wav);
  assert.equal(request?.filename, "voice.wav");
  assert.equal(request?.fileType, "audio/wav");
  assert.equal(request?.model, "whisper-1");
  assert.equal(request?.responseFormat, "json");
  assert.equal(request?.language, "zh");
  assert.match(request?.headers.get("content-type") ?? "", /^multipart\/form-data; boundary=/);
});

Deno.test("no language is sent when none is set, so the server detects it", async () => {
  await using fake = FakeStt.start({ language: null });
  fake.enqueue({ text: "hello" });
  assert.equal(await client(fake, { language: "" }).transcribe(voice), "hello");
  assert.equal(fake.requests[0]?.language, undefined);
});

Deno.test("an empty transcript is no speech, not an error", async () => {
  await using fake = FakeStt.start();
  fake.enqueue({ text: "   " });
  assert.equal(await client(fake).transcribe(voice), "");
});

Deno.test("the key goes as a Bearer header when set, and no Authorization header goes without one", async () => {
  await using keyed = FakeStt.start({ apiKey: "sk-stt" });
  keyed.enqueue({});
  await client(keyed, { apiKey: "sk-stt" }).transcribe(voice);
  assert.equal(keyed.requests[0]?.headers.get("authorization"), "Bearer sk-stt");
  await using open = FakeStt.start();
  open.enqueue({});
  await client(open).transcribe(voice);
  assert.equal(open.requests[0]?.headers.get("authorization"), null);
});

Deno.test("HTTP 500 with an OpenAI error body names the host and quotes the server", async () => {
  await using fake = FakeStt.start();
  fake.enqueue({ status: 500, body: { error: { message: "model not loaded", type: "server_error", code: null } } });
  const error = await failure(client(fake).transcribe(voice));
  assert.equal(error.code, "http");
  assert.equal(error.status, 500);
  assert.equal(error.message, `The speech-to-text server at ${fake.host} failed (HTTP 500: model not loaded)`);
});

Deno.test("a 400 quotes a plain-text body on one line", async () => {
  await using fake = FakeStt.start();
  fake.enqueue({ status: 400, body: "Invalid file format.\nSupported: wav, mp3\u001b[2J" });
  const error = await failure(client(fake).transcribe(voice));
  assert.equal(
    error.message,
    `The speech-to-text server at ${fake.host} rejected the request (HTTP 400: Invalid file format. Supported: wav, mp3[2J)`,
  );
});

Deno.test("a hung server fails with a timeout within the configured deadline", async () => {
  await using fake = FakeStt.start();
  fake.enqueue({ hang: true });
  const started = performance.now();
  const error = await failure(client(fake, { timeoutMs: 200 }).transcribe(voice));
  const elapsed = performance.now() - started;
  assert.equal(error.code, "timeout");
  assert.equal(
    error.message,
    `The speech-to-text server at ${fake.host} did not answer within 200ms (speech.stt.timeout)`,
  );
  assert.ok(elapsed >= 190 && elapsed < 2_000, `gave up after ${Math.round(elapsed)} ms`);
});

Deno.test("a reply that is not JSON, or JSON without text, is a bad reply", async () => {
  await using fake = FakeStt.start();
  fake.enqueue(
    { raw: () => new Response("hello there", { headers: { "content-type": "text/plain" } }) },
    { raw: () => Response.json({ transcript: "hello" }) },
  );
  const notJson = await failure(client(fake).transcribe(voice));
  assert.equal(notJson.code, "bad_reply");
  assert.equal(notJson.message, `The speech-to-text server at ${fake.host} answered with something that is not JSON`);
  const noText = await failure(client(fake).transcribe(voice));
  assert.equal(noText.code, "bad_reply");
  assert.equal(
    noText.message,
    `The speech-to-text server at ${fake.host} answered without a usable result: its answer has no text`,
  );
});

Deno.test("a base URL with a trailing slash reaches the same route", async () => {
  await using fake = FakeStt.start();
  fake.enqueue({ text: "ok" });
  assert.equal(await client(fake, { baseUrl: `${fake.baseUrl}/` }).transcribe(voice), "ok");
});
