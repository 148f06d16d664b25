/**
 * The text-to-speech client against the strict fake server: the JSON it sends (the voice), the audio it returns, the byte limit, the deadline, and errors in disguise.
 *
 * @module
 */

import assert from "node:assert/strict";
import { systemClock } from "../clock.ts";
import { FakeClock } from "../../tests/support/fake_clock.ts";
import { FakeTts, sineWav } from "../../tests/support/fake_media.ts";
import { MediaModelError } from "./model_call.ts";
import { TtsClient, type TtsClientOptions } from "./tts_client.ts";

function client(fake: FakeTts, options: Partial<TtsClientOptions> = {}): TtsClient {
  return new TtsClient({
    baseUrl: fake.baseUrl,
    model: "kokoro",
    voice: "zf_xiaobei",
    timeoutMs: 10_000,
    clock: systemClock,
    maxReplyBytes: 1024 * 1024,
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

Deno.test("speak sends the model, the text, the voice and wav, and returns the audio as sent", async () => {
  await using fake = FakeTts.start({ model: "kokoro", voice: "zf_xiaobei" });
  const wav = sineWav({ ms: 500 });
  fake.enqueue({ audio: wav });
  const audio = await client(fake).speak("洗衣机洗好了。");
  assert.deepEqual(audio, { bytes: wav, mime: "audio/wav" });
  assert.deepEqual(fake.requests[0]?.body, {
    model: "kokoro",
    input: "洗衣机洗好了。",
    voice: "zf_xiaobei",
    response_format: "wav",
  });
  assert.equal(fake.requests[0]?.headers.get("content-type"), "application/json");
});

Deno.test("audio labelled generically is taken as the WAV asked for; a specific type is kept", async () => {
  await using fake = FakeTts.start();
  fake.enqueue({ contentType: "application/octet-stream" }, { contentType: "audio/x-wav" });
  assert.equal((await client(fake).speak("one")).mime, "audio/wav");
  assert.equal((await client(fake).speak("two")).mime, "audio/x-wav");
});

Deno.test("the key goes as a Bearer header when set, and no Authorization header goes without one", async () => {
  await using keyed = FakeTts.start({ apiKey: "sk-tts" });
  keyed.enqueue({});
  await client(keyed, { apiKey: "sk-tts" }).speak("hi");
  assert.equal(keyed.requests[0]?.headers.get("authorization"), "Bearer sk-tts");
  await using open = FakeTts.start();
  open.enqueue({});
  await client(open, { apiKey: undefined }).speak("hi");
  assert.equal(open.requests[0]?.headers.get("authorization"), null);
});

Deno.test("HTTP 500 with an OpenAI error body names the host and quotes the server", async () => {
  await using fake = FakeTts.start();
  fake.enqueue({ status: 500, body: { error: { message: "model not loaded" } } });
  const error = await failure(client(fake).speak("hi"));
  assert.equal(error.code, "http");
  assert.equal(error.message, `The text-to-speech server at ${fake.host} failed (HTTP 500: model not loaded)`);
});

Deno.test("a JSON reply instead of audio is a bad reply quoting the error it carries", async () => {
  await using fake = FakeTts.start();
  fake.enqueue({ raw: () => Response.json({ error: { message: "voice zf_xiaobei not found" } }) });
  const error = await failure(client(fake).speak("hi"));
  assert.equal(error.code, "bad_reply");
  assert.equal(
    error.message,
    `The text-to-speech server at ${fake.host} answered without a usable result: it sent application/json instead of audio (voice zf_xiaobei not found)`,
  );
});

Deno.test("a text reply or an empty body is a bad reply", async () => {
  await using fake = FakeTts.start();
  fake.enqueue({ audio: new TextEncoder().encode("OK"), contentType: "text/plain; charset=utf-8" }, {
    audio: new Uint8Array(0),
  });
  const text = await failure(client(fake).speak("hi"));
  assert.equal(text.code, "bad_reply");
  assert.match(text.message, /it sent text\/plain instead of audio$/);
  const empty = await failure(client(fake).speak("hi"));
  assert.equal(empty.code, "bad_reply");
  assert.match(empty.message, /it sent no audio$/);
});

Deno.test("audio larger than maxReplyBytes is too big", async () => {
  await using fake = FakeTts.start();
  fake.enqueue({ audio: sineWav({ ms: 2_000 }) });
  const error = await failure(client(fake, { maxReplyBytes: 10_000 }).speak("hi"));
  assert.equal(error.code, "too_big");
  assert.equal(
    error.message,
    `The text-to-speech server at ${fake.host} answered with more than 10000 bytes, the most accepted`,
  );
});

Deno.test("an endless audio stream is given up as too big without reading it all", async () => {
  await using fake = FakeTts.start();
  let sent = 0;
  const chunk = new Uint8Array(16_384);
  fake.enqueue({
    raw: () =>
      new Response(
        new ReadableStream<Uint8Array>({
          pull(controller) {
            sent += chunk.length;
            controller.enqueue(chunk.slice());
          },
        }, { highWaterMark: 0 }),
        { headers: { "content-type": "audio/wav" } },
      ),
  });
  const error = await failure(client(fake, { maxReplyBytes: 100_000 }).speak("hi"));
  assert.equal(error.code, "too_big");
  // Loopback socket buffers let the server run ahead of the reader by a few MiB, not more.
  assert.ok(sent < 16 * 1024 * 1024, `the server had sent ${sent} bytes when the client gave up`);
  await new Promise((resolve) => setTimeout(resolve, 50));
  const settled = sent;
  await new Promise((resolve) => setTimeout(resolve, 100));
  assert.equal(sent, settled, "the download was cancelled: the server stopped sending");
});

Deno.test("a hung server fails with a timeout exactly at the configured deadline", async () => {
  await using fake = FakeTts.start();
  fake.enqueue({ hang: true });
  const clock = new FakeClock();
  let settled = false;
  const call = failure(client(fake, { clock, timeoutMs: 30_000 }).speak("hi")).finally(() => (settled = true));
  await fake.received(1);
  clock.advance(29_999);
  await new Promise((resolve) => setTimeout(resolve, 30));
  assert.equal(settled, false, "still waiting 1 ms before the deadline");
  clock.advance(1);
  const error = await call;
  assert.equal(error.code, "timeout");
  assert.equal(
    error.message,
    `The text-to-speech server at ${fake.host} did not answer within 30s (speech.tts.timeout)`,
  );
});

Deno.test("the deadline covers the body too: audio that stops arriving midway times out", async () => {
  await using fake = FakeTts.start();
  const wav = sineWav();
  fake.enqueue({
    raw: () =>
      new Response(
        new ReadableStream<Uint8Array>({
          start(controller) {
            controller.enqueue(wav.slice(0, 1_000));
          },
          // The rest never comes.
          pull: () => new Promise<void>(() => {}),
        }),
        { headers: { "content-type": "audio/wav", "content-length": String(wav.length) } },
      ),
  });
  const started = performance.now();
  const error = await failure(client(fake, { timeoutMs: 200 }).speak("hi"));
  const elapsed = performance.now() - started;
  assert.equal(error.code, "timeout");
  assert.match(error.message, /did not answer within 200ms \(speech\.tts\.timeout\)$/);
  assert.ok(elapsed >= 190 && elapsed < 2_000, `gave up after ${Math.round(elapsed)} ms`);
});
