/**
 * The vision client against the strict fake vision model: the exact request (the bytes as a data URL), the key header, and every way the call can fail.
 *
 * @module
 */

import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { systemClock } from "../clock.ts";
import { FakeClock } from "../../tests/support/fake_clock.ts";
import { FakeVision, samplePng } from "../../tests/support/fake_media.ts";
import { MediaModelError } from "./model_call.ts";
import { VisionClient, type VisionClientOptions } from "./vision_client.ts";

function client(fake: FakeVision, options: Partial<VisionClientOptions> = {}): VisionClient {
  return new VisionClient({ baseUrl: fake.baseUrl, model: "vl", timeoutMs: 10_000, clock: systemClock, ...options });
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

const png = samplePng();

Deno.test("describe sends exactly the given bytes as a data URL, with the instruction, model and max_tokens", async () => {
  await using fake = FakeVision.start({ model: "vl", maxTokens: 123 });
  fake.enqueue({ description: "  A cat asleep on a red sofa.\n" });
  // 3 MiB: spreading the bytes into String.fromCharCode would overflow the stack.
  const photo = samplePng(3 * 1024 * 1024);
  const description = await client(fake, { maxTokens: 123 }).describe(
    { bytes: photo, mime: "image/png" },
    "Describe the photo.",
  );
  assert.equal(description, "A cat asleep on a red sofa.");
  const [request] = fake.requests;
  assert.equal(request?.images.length, 1);
  assert.equal(request?.images[0]?.mime, "image/png");
  assert.ok(Buffer.from(request!.images[0]!.bytes).equals(Buffer.from(photo)), "the server got the served bytes");
  assert.equal(request?.instruction, "Describe the photo.");
  assert.equal(request?.body.stream, false);
  assert.equal(request?.body.max_tokens, 123);
  assert.equal(request?.headers.get("content-type"), "application/json");
});

Deno.test("describe sends a view's own bytes, not the whole buffer under it", async () => {
  await using fake = FakeVision.start();
  fake.enqueue({ description: "A GIF." });
  const gif = new TextEncoder().encode("xxGIF89a\u0001\u0000\u0001\u0000yy");
  const view = gif.subarray(2, gif.length - 2);
  await client(fake).describe({ bytes: view, mime: "image/gif" }, "What is it?");
  assert.deepEqual(fake.requests[0]?.images, [{ mime: "image/gif", bytes: new Uint8Array(view) }]);
});

Deno.test("max_tokens defaults to 400, the vision.max_tokens default", async () => {
  await using fake = FakeVision.start({ maxTokens: 400 });
  fake.enqueue({});
  assert.equal(await client(fake).describe({ bytes: png, mime: "image/png" }, "?"), "A fake description of the image.");
});

Deno.test("the key goes as a Bearer header when set, and no Authorization header goes without one", async () => {
  await using keyed = FakeVision.start({ apiKey: "sk-vision" });
  keyed.enqueue({});
  await client(keyed, { apiKey: "sk-vision" }).describe({ bytes: png, mime: "image/png" }, "?");
  assert.equal(keyed.requests[0]?.headers.get("authorization"), "Bearer sk-vision");
  // The fake without an expected key refuses any Authorization header, so an empty key must send none.
  await using open = FakeVision.start();
  open.enqueue({});
  await client(open, { apiKey: "" }).describe({ bytes: png, mime: "image/png" }, "?");
  assert.equal(open.requests[0]?.headers.get("authorization"), null);
});

Deno.test("HTTP 500 with an OpenAI error body names the host and quotes the server", async () => {
  await using fake = FakeVision.start();
  fake.enqueue({ status: 500, body: { error: { message: "model not loaded", type: "server_error" } } });
  const error = await failure(client(fake).describe({ bytes: png, mime: "image/png" }, "?"));
  assert.equal(error.code, "http");
  assert.equal(error.status, 500);
  assert.equal(error.message, `The vision model at ${fake.host} failed (HTTP 500: model not loaded)`);
});

Deno.test("a refused key points at vision.api_key, and a 404 at the URL and the model", async () => {
  await using fake = FakeVision.start();
  fake.enqueue(
    { status: 401, body: { error: { message: "Incorrect API key provided" } } },
    { status: 404, body: "404 page not found" },
  );
  const refusedKey = await failure(client(fake).describe({ bytes: png, mime: "image/png" }, "?"));
  assert.equal(
    refusedKey.message,
    `The vision model at ${fake.host} refused the API key (HTTP 401: Incorrect API key provided); check vision.api_key`,
  );
  const notFound = await failure(client(fake).describe({ bytes: png, mime: "image/png" }, "?"));
  assert.equal(
    notFound.message,
    `The vision model at ${fake.host} does not know the request (HTTP 404: 404 page not found); check vision.base_url and vision.model`,
  );
});

Deno.test("a hung server fails with a timeout exactly at the configured deadline", async () => {
  await using fake = FakeVision.start();
  fake.enqueue({ hang: true });
  const clock = new FakeClock();
  let settled = false;
  const call = failure(client(fake, { clock, timeoutMs: 60_000 }).describe({ bytes: png, mime: "image/png" }, "?"))
    .finally(() => (settled = true));
  await fake.received(1);
  clock.advance(59_999);
  await new Promise((resolve) => setTimeout(resolve, 30));
  assert.equal(settled, false, "still waiting 1 ms before the deadline");
  clock.advance(1);
  const error = await call;
  assert.equal(error.code, "timeout");
  assert.equal(error.message, `The vision model at ${fake.host} did not answer within 60s (vision.timeout)`);
  assert.equal(clock.pendingTimers, 0, "the deadline's timer is gone");
});

Deno.test("a reply that is not JSON is a bad reply", async () => {
  await using fake = FakeVision.start();
  fake.enqueue({ raw: () => new Response("<html>Bad gateway</html>", { headers: { "content-type": "text/html" } }) });
  const error = await failure(client(fake).describe({ bytes: png, mime: "image/png" }, "?"));
  assert.equal(error.code, "bad_reply");
  assert.equal(error.message, `The vision model at ${fake.host} answered with something that is not JSON`);
});

Deno.test("an empty or missing description is a bad reply", async () => {
  await using fake = FakeVision.start();
  fake.enqueue({ description: " \n " }, { description: null }, { raw: () => Response.json({ choices: [] }) });
  const empty = await failure(client(fake).describe({ bytes: png, mime: "image/png" }, "?"));
  assert.equal(empty.code, "bad_reply");
  assert.match(empty.message, /its description is empty$/);
  const nullContent = await failure(client(fake).describe({ bytes: png, mime: "image/png" }, "?"));
  assert.match(
    nullContent.message,
    /^The vision model at 127\.0\.0\.1:\d+ answered without a usable result: its answer/,
  );
  const noChoices = await failure(client(fake).describe({ bytes: png, mime: "image/png" }, "?"));
  assert.equal(noChoices.code, "bad_reply");
});

Deno.test("a description larger than the reply limit is too big", async () => {
  await using fake = FakeVision.start();
  fake.enqueue({ description: "x".repeat(5_000) });
  const error = await failure(client(fake, { maxReplyBytes: 1_000 }).describe({ bytes: png, mime: "image/png" }, "?"));
  assert.equal(error.code, "too_big");
  assert.equal(error.message, `The vision model at ${fake.host} answered with more than 1000 bytes, the most accepted`);
});

Deno.test("the caller's abort rejects with its own reason", async () => {
  await using fake = FakeVision.start();
  fake.enqueue({ hang: true });
  const controller = new AbortController();
  const call = client(fake).describe({ bytes: png, mime: "image/png" }, "?", controller.signal);
  await fake.received(1);
  const reason = new Error("the turn was cancelled");
  controller.abort(reason);
  await assert.rejects(call, (error) => error === reason);
});

Deno.test("a server that is not there is a network error naming the host and vision.base_url", async () => {
  const gone = FakeVision.start();
  const baseUrl = gone.baseUrl;
  await gone.close();
  const vision = new VisionClient({ baseUrl, model: "vl", timeoutMs: 10_000, clock: systemClock });
  const error = await failure(vision.describe({ bytes: png, mime: "image/png" }, "?"));
  assert.equal(error.code, "network");
  assert.match(
    error.message,
    /^The vision model at 127\.0\.0\.1:\d+ could not be reached \(.+\); check vision\.base_url$/,
  );
  assert.doesNotMatch(error.message, /http:\/\//, "the URL, which may carry a key, is not in the message");
  assert.equal(vision.host, new URL(baseUrl).host);
});
