/**
 * The Telegram device's outputs and failures against the strict fake Bot API: long replies split in order, hostile
 * text escaped, 429 honoured, media out, an outage survived without a tight loop, a revoked token.
 */

import assert from "node:assert/strict";
import { FakeTelegram } from "../../../tests/support/fake_telegram.ts";
import { harness, HOME, JPEG, OWNER, private_, until } from "./harness_test.ts";

Deno.test("a long reply is split in order, every message within 4096, no tag across two", async () => {
  await using fake = FakeTelegram.start({ rateLimit: false });
  fake.addChat(private_(OWNER), OWNER);
  const h = await harness(fake);
  try {
    const paragraphs = Array.from({ length: 30 }, (_, i) => `**Part ${i}**: ${"word ".repeat(60).trim()} & more.`);
    const text = paragraphs.join("\n\n");
    await h.push({ target: "telegram:private:42", type: "message", payload: { text } });
    assert.ok(fake.sent.length >= 3, `${fake.sent.length} messages`);
    for (const message of fake.sent) {
      assert.ok([...message.text].length <= 4096);
      assert.equal(message.parse_mode, "HTML");
    }
    const seen = fake.sent.map((message) => message.text).join("\n\n");
    assert.equal(seen, text.replaceAll("**", ""), "every word, in order, the bold markers turned into formatting");
    assert.equal(fake.sent[0]!.entities.filter((entity) => entity.type === "bold").length > 0, true);
    assert.equal(h.device.status().sent, fake.sent.length);
  } finally {
    await h.close();
  }
});

Deno.test("hostile text is escaped: Telegram sees the very characters, and never a parse error", async () => {
  await using fake = FakeTelegram.start({ rateLimit: false });
  fake.addChat(private_(OWNER), OWNER);
  const h = await harness(fake);
  try {
    const hostile = [
      "<script>alert(1)</script>",
      "a & b, 1 < 2 > 0, &amp; &lt; &#x26; AT&T",
      "**unbalanced and *half _open `tick",
      '[click](javascript:alert(1)) [ok](https://example.com/?a=1&b="2") <b>not bold</b>',
      "```\nif (a < b && c > d) {}\n```",
    ];
    for (const text of hostile) {
      await h.push({ target: "telegram:private:42", type: "message", payload: { text } });
    }
    assert.deepEqual(fake.sent.map((message) => message.text), [
      "<script>alert(1)</script>",
      "a & b, 1 < 2 > 0, &amp; &lt; &#x26; AT&T",
      "**unbalanced and *half _open `tick",
      "[click](javascript:alert(1)) ok <b>not bold</b>",
      "if (a < b && c > d) {}",
    ]);
    const link = fake.sent[3]!.entities.find((entity) => entity.type === "text_link");
    assert.equal(link?.url, 'https://example.com/?a=1&b="2"');
    assert.equal(fake.sent[4]!.entities[0]!.type, "pre");
    assert.equal(h.device.status().format_fallbacks, 0);
  } finally {
    await h.close();
  }
});

Deno.test("429: retry_after is waited out on the clock, then the same piece goes; no violation", async () => {
  await using fake = FakeTelegram.start({ rateLimit: false });
  fake.addChat(private_(OWNER), OWNER);
  const h = await harness(fake);
  try {
    fake.rateLimitNext(1, 1);
    const started = performance.now();
    await h.push({ target: "telegram:private:42", type: "message", payload: { text: "after the wait" } });
    assert.ok(performance.now() - started >= 1_000, "sent only after retry_after");
    assert.deepEqual(fake.sent.map((message) => message.text), ["after the wait"]);
    assert.equal(h.device.status().rate_limited, 1);
  } finally {
    await h.close();
  }
});

Deno.test("pacing keeps within the fake's default flood limits (1 per second per chat)", async () => {
  await using fake = FakeTelegram.start();
  fake.addChat(HOME);
  const h = await harness(fake, { settings: { minSendIntervalMs: 1_000, splitAt: 100 } });
  try {
    await h.push({ target: "telegram:group:-100777", type: "message", payload: { text: "x ".repeat(120) } });
    assert.equal(fake.sent.length, 3);
    assert.equal(h.device.status().rate_limited, 0);
  } finally {
    await h.close();
  }
});

Deno.test("media out: a photo, a voice (OGG) and a WAV and a file as documents, bytes and captions reach Telegram", async () => {
  await using fake = FakeTelegram.start({ rateLimit: false });
  fake.addChat(private_(OWNER), OWNER);
  const ogg = new TextEncoder().encode("OggS\0\u0002 opus voice");
  const wav = new TextEncoder().encode("RIFF\u0024\0\0\0WAVEfmt ");
  const held = new Map([["m-photo", JPEG], ["m-ogg", ogg], ["m-wav", wav], [
    "m-txt",
    new TextEncoder().encode("milk"),
  ]]);
  const h = await harness(fake, { media: { read: (id) => Promise.resolve(held.get(id)) } });
  try {
    const to = "telegram:private:42";
    await h.push({ target: to, type: "image", payload: { media: "m-photo", text: "The **porch** now" } });
    await h.push({ target: to, type: "audio", payload: { media: "m-ogg" } });
    await h.push({ target: to, type: "audio", payload: { media: "m-wav" } });
    await h.push({ target: to, type: "file", payload: { media: "m-txt", name: "list.txt", text: "x".repeat(1100) } });
    assert.deepEqual(fake.sent.map((message) => [message.method, message.media?.filename ?? null]), [
      ["sendPhoto", "image.jpg"],
      ["sendVoice", "voice.ogg"],
      ["sendDocument", "voice.wav"],
      ["sendDocument", "list.txt"],
      ["sendMessage", null],
    ]);
    assert.deepEqual(fake.sent[0]!.media?.bytes, JPEG);
    assert.equal(fake.sent[0]!.text, "The porch now");
    assert.deepEqual(fake.sent[3]!.media?.bytes, new TextEncoder().encode("milk"));
    assert.equal(fake.sent[4]!.text.length, 1100, "a caption over 1024 goes as a text after the file");
    await assert.rejects(
      h.device.send({ target: to, type: "image", payload: { url: "https://example.com/a.jpg" } }),
      /payload\.media/,
    );
  } finally {
    await h.close();
  }
});

Deno.test("outage: polls back off (a few calls), replies wait in the queue and go once Telegram is back", async () => {
  await using fake = FakeTelegram.start({ rateLimit: false });
  fake.addChat(private_(OWNER), OWNER);
  fake.outage(3_000);
  const h = await harness(fake);
  try {
    await until(() => h.device.status().connected === false, "the outage noticed");
    assert.match(String(h.device.status().last_error), /telegram\.api_url/);
    assert.equal(h.device.canSend({ target: "telegram:private:42", type: "message", payload: {} }), false);
    const reply = h.push({ target: "telegram:private:42", type: "message", payload: { text: "held" } });
    assert.equal(fake.sent.length, 0);
    await reply;
    assert.deepEqual(fake.sent.map((message) => message.text), ["held"]);
    assert.ok(fake.callsDuring <= 4, `${fake.callsDuring} calls during a 3 s outage`);
    assert.equal(h.device.status().connected, true);
    assert.ok(h.readyAgain >= 1);
  } finally {
    await h.close();
  }
});

Deno.test("revoked token: status and log name telegram.token and what to do; no retry within the minute", async () => {
  await using fake = FakeTelegram.start({ rateLimit: false });
  const h = await harness(fake);
  try {
    fake.revokeToken();
    await until(() => /telegram\.token/.test(String(h.device.status().last_error)), "the 401 in status");
    const status = h.device.status();
    assert.match(String(status.last_error), /401 Unauthorized.*@BotFather.*telegram\.token/);
    assert.ok(!JSON.stringify(status).includes(fake.token));
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    assert.ok(fake.revokedCalls <= 1, `${fake.revokedCalls} calls after the token was revoked`);
    assert.match(h.lines.join("\n"), /401 Unauthorized/);
    assert.ok(!h.lines.join("\n").includes(fake.token), "the token is in no log line");
  } finally {
    await h.close();
  }
});

Deno.test("a channel that is no Telegram chat is refused, naming the form", async () => {
  await using fake = FakeTelegram.start({ rateLimit: false });
  const h = await harness(fake);
  try {
    await assert.rejects(
      h.device.send({ target: "telegram:chat:1", type: "message", payload: { text: "x" } }),
      /telegram:private:<chat id>.*"telegram:chat:1"/,
    );
  } finally {
    await h.close();
  }
});
