/**
 * The Telegram device's inputs against the strict fake Bot API: trust in private chats, addressing in groups,
 * once-only processing across a restart, media in, the owner's confirmation buttons, typing.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { FakeClock } from "../../../tests/support/fake_clock.ts";
import { FakeTelegram } from "../../../tests/support/fake_telegram.ts";
import { harness, HOME, inputsAt, JPEG, MEMBER, OWNER, private_, STRANGER, until } from "./harness_test.ts";
import { channelOf, conversationOf } from "./telegram_device.ts";

Deno.test("channels: telegram:private:<id> and telegram:group:<-id> round-trip; anything else is no chat", () => {
  assert.deepEqual(conversationOf("telegram:group:-100777"), { kind: "group", id: "-100777" });
  assert.equal(channelOf({ kind: "private", id: "42" }), "telegram:private:42");
  assert.equal(conversationOf("telegram:private:abc"), undefined);
  assert.equal(conversationOf("qq:private:10001"), undefined);
});

Deno.test("private chats: the owner is owner, a listed user household, a stranger ignored and counted", async () => {
  await using fake = FakeTelegram.start({ rateLimit: false });
  const h = await harness(fake);
  try {
    fake.userSends({ chat: private_(OWNER), from: OWNER, text: "hi <there> & you" });
    fake.userSends({ chat: private_(STRANGER), from: STRANGER, text: "let me in" });
    fake.userSends({ chat: private_(MEMBER), from: MEMBER, text: "lights?" });
    const inputs = await inputsAt(h, 2);
    await until(() => (h.device.status().ignored as number) === 1, "the stranger counted as ignored");
    assert.deepEqual(
      inputs.map((input) => [input.source, input.sender, input.trust, input.payload.text]),
      [
        ["telegram:private:42", "42", "owner", "hi <there> & you"],
        ["telegram:private:43", "43", "household", "lights?"],
      ],
    );
    assert.equal(inputs[0]!.payload.display, "Ann");
    assert.equal(inputs[0]!.handle?.chat_id, "42");
    assert.match(h.lines.join("\n"), /Ignored a Telegram \{kind\} message .*"kind":"private","userId":"44"/);
    const status = h.device.status();
    assert.equal(status.connected, true);
    assert.equal(status.bot_username, "homed_test_bot");
    assert.equal(status.inputs, 2);
    // Typing while the owner's turn runs; it stops when the turn is done.
    await until(() => fake.chatActions.some((action) => action.chat_id === 42), "a typing action in chat 42");
    assert.equal(fake.chatActions.find((action) => action.chat_id === 42)!.action, "typing");
    h.device.onTurnEvent({
      type: "done",
      eventId: inputs[0]!.id,
      result: { eventId: inputs[0]!.id, reply: "", channel: inputs[0]!.source, rounds: 1 },
    });
  } finally {
    await h.close();
  }
});

Deno.test("groups: a mention or a reply to the bot is answered (mention stripped), other chatter and unlisted groups not", async () => {
  await using fake = FakeTelegram.start({ rateLimit: false, privacyMode: false });
  const h = await harness(fake);
  try {
    fake.userSends({ chat: HOME, from: MEMBER, text: "just chatting" });
    fake.userSends({ chat: HOME, from: STRANGER, text: "is the heater on?", mentionBot: true });
    const other = { id: -100888, type: "supergroup" as const, title: "Elsewhere" };
    fake.userSends({ chat: other, from: OWNER, text: "hello", mentionBot: true });
    const [first] = await inputsAt(h, 1);
    assert.equal(first!.source, "telegram:group:-100777");
    assert.equal(first!.trust, "guest", "a listed group's unlisted member is a guest");
    assert.equal(first!.payload.text, "is the heater on?");
    // The butler answers in the group, quoting the message; a reply to that answer reaches it.
    await h.push({
      target: first!.source,
      type: "message",
      payload: { text: "It is **on**." },
      replyTo: { id: first!.id, source: first!.source, sender: first!.sender, handle: first!.handle! },
    });
    assert.equal(fake.sent[0]!.reply_to_message_id, Number(first!.handle!.message_id));
    assert.equal(fake.sent[0]!.text, "It is on.");
    fake.userSends({ chat: HOME, from: MEMBER, text: "turn it off", replyToBot: true });
    const [, second] = await inputsAt(h, 2);
    assert.equal(second!.payload.text, "turn it off");
    assert.equal(second!.trust, "household");
    await until(() => (h.device.status().ignored as number) >= 1, "the unlisted group counted");
    assert.equal(h.inputs.length, 2, "chatter and the unlisted group handed nothing in");
  } finally {
    await h.close();
  }
});

Deno.test("once only across a restart: the offset is kept on disk; nothing is handed in twice or delivered again", async () => {
  await using fake = FakeTelegram.start({ rateLimit: false });
  const first = await harness(fake);
  const a = fake.userSends({ chat: private_(OWNER), from: OWNER, text: "one" });
  const b = fake.userSends({ chat: private_(OWNER), from: OWNER, text: "two" });
  await inputsAt(first, 2);
  const offsetFile = join(first.dataDir, "offset.json");
  await until(() => {
    try {
      return JSON.parse(Deno.readTextFileSync(offsetFile)).offset === b.update_id + 1;
    } catch {
      return false;
    }
  }, "the offset kept");
  await first.close(true);
  // The fake notices the aborted poll when its connection closes: an update sent before that would be handed to the
  // abandoned poll (and counted as a delivery) by the fake, not by the device.
  await new Promise((resolve) => setTimeout(resolve, 100));
  const c = fake.userSends({ chat: private_(OWNER), from: OWNER, text: "three" });
  const second = await harness(fake, { dataDir: first.dataDir });
  try {
    await inputsAt(second, 1);
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.deepEqual(second.inputs.map((input) => input.payload.text), ["three"]);
    assert.deepEqual([a, b, c].map((update) => fake.deliveries(update.update_id)), [1, 1, 1]);
  } finally {
    await second.close();
  }
});

Deno.test("a damaged offset file is logged and polling starts from Telegram's own queue", async () => {
  await using fake = FakeTelegram.start({ rateLimit: false });
  const dataDir = await Deno.makeTempDir({ prefix: "homed-telegram-" });
  await Deno.writeTextFile(join(dataDir, "offset.json"), "{not json");
  fake.userSends({ chat: private_(OWNER), from: OWNER, text: "still here" });
  const h = await harness(fake, { dataDir });
  try {
    const [input] = await inputsAt(h, 1);
    assert.equal(input!.payload.text, "still here");
    assert.match(h.lines.join("\n"), /offset\.json holds no offset/);
  } finally {
    await h.close();
  }
});

Deno.test("media in: the largest photo size is located through getFile as bytes; no token in the attachment", async () => {
  await using fake = FakeTelegram.start({ rateLimit: false });
  const h = await harness(fake);
  try {
    fake.userSends({ chat: private_(OWNER), from: OWNER, photo: JPEG, text: "what is this?" });
    fake.userSends({
      chat: private_(OWNER),
      from: OWNER,
      document: { name: "list.txt", bytes: new TextEncoder().encode("milk"), mime: "text/plain" },
    });
    const [photo, document] = await inputsAt(h, 2);
    const attachments = photo!.payload.attachments as { kind: string; file: string }[];
    assert.equal(photo!.payload.text, "what is this?");
    assert.equal(attachments.length, 1);
    assert.equal(attachments[0]!.kind, "image");
    assert.ok(!JSON.stringify(photo).includes(fake.token), "the token is in no input");
    const bytes = await h.device.locate(photo!, attachments[0]! as { kind: "image"; file: string });
    assert.deepEqual(bytes, JPEG);
    const [file] = document!.payload.attachments as { kind: "file"; file: string; name: string }[];
    assert.equal(file!.name, "list.txt");
    assert.equal(new TextDecoder().decode(await h.device.locate(document!, file!)), "milk");
  } finally {
    await h.close();
  }
});

Deno.test("confirmation: Approve / Deny buttons; the owner's press hands in /confirm once and is answered; a member's decides nothing", async () => {
  await using fake = FakeTelegram.start({ rateLimit: false });
  const h = await harness(fake);
  try {
    fake.addChat(HOME);
    const question = "Confirm: unlock the front door? Reply 是 / yes within 5 min to do it, anything else to leave " +
      "it (or /confirm a1b2).";
    await h.push({ target: "telegram:group:-100777", type: "message", payload: { text: question } });
    const asked = fake.sent[0]!;
    assert.deepEqual(asked.reply_markup, {
      inline_keyboard: [[{ text: "✅ Approve", callback_data: "confirm:a1b2" }, {
        text: "✖️ Deny",
        callback_data: "deny:a1b2",
      }]],
    });
    fake.userPresses({ from: MEMBER, message_id: asked.message_id, data: "confirm:a1b2" });
    fake.userPresses({ from: OWNER, message_id: asked.message_id, data: "confirm:a1b2" });
    // A double tap, before the buttons went: handed in again (Confirmations runs nothing twice), never edited twice.
    fake.userPresses({ from: OWNER, message_id: asked.message_id, data: "confirm:a1b2" });
    const [input] = await inputsAt(h, 2);
    assert.deepEqual([input!.source, input!.sender, input!.trust, input!.payload.text], [
      "telegram:group:-100777",
      "42",
      "owner",
      "/confirm a1b2",
    ]);
    await until(() => fake.edits.length === 1, "the keyboard removed");
    assert.equal(fake.edits[0]!.method, "editMessageReplyMarkup");
    assert.equal(fake.sent[0]!.reply_markup, undefined);
    // Something sent in the chat after both presses: an unanswered press would now show.
    await h.push({ target: "telegram:group:-100777", type: "message", payload: { text: "Unlocked." } });
    assert.deepEqual(fake.unansweredCallbacks(), []);
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(h.inputs.length, 2, "the member's press handed nothing in, each of the owner's once");
    assert.equal(fake.edits.length, 1, "the buttons were taken away once (a second edit is refused: not modified)");
  } finally {
    await h.close();
  }
});

Deno.test("confirmation: the owner's Deny hands in /deny <id>", async () => {
  await using fake = FakeTelegram.start({ rateLimit: false });
  const h = await harness(fake);
  try {
    fake.addChat(private_(OWNER), OWNER);
    await h.push({ target: "telegram:private:42", type: "message", payload: { text: "Sure? (or /confirm 0c0ffee)" } });
    fake.userPresses({ from: OWNER, message_id: fake.sent[0]!.message_id, data: "deny:0c0ffee" });
    const [input] = await inputsAt(h, 1);
    assert.equal(input!.payload.text, "/deny 0c0ffee");
    await until(() => fake.edits.length === 1, "the keyboard removed");
  } finally {
    await h.close();
  }
});

/**
 * A Bot API server in front of `fake`: `intercept` answers what it wants to (a method the server lacks, a request that
 * hangs); the rest goes through.
 */
function inFront(
  fake: FakeTelegram,
  intercept: (method: string, request: Request) => Promise<Response | undefined>,
): Deno.HttpServer<Deno.NetAddr> {
  return Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (request) => {
    const url = new URL(request.url);
    const answered = await intercept(url.pathname.split("/").at(-1)!, request);
    if (answered) return answered;
    return await fetch(`${fake.apiUrl}${url.pathname}${url.search}`, {
      method: request.method,
      headers: request.headers,
      body: request.body,
    });
  });
}

Deno.test("a Bot API server without deleteWebhook (a local one, a proxy) is polled anyway, with one warning", async () => {
  await using fake = FakeTelegram.start({ rateLimit: false });
  // deleteWebhook answers 404, as the Bot API answers an unknown method.
  const front = inFront(fake, async (method, request) => {
    if (method !== "deleteWebhook") return undefined;
    await request.body?.cancel();
    return Response.json({ ok: false, error_code: 404, description: "Not Found" }, { status: 404 });
  });
  const h = await harness(fake, { settings: { apiUrl: `http://127.0.0.1:${front.addr.port}` } });
  try {
    fake.addChat(private_(OWNER), OWNER);
    fake.userSends({ chat: private_(OWNER), from: OWNER, text: "hello" });
    const [input] = await inputsAt(h, 1);
    assert.equal(input!.payload.text, "hello");
    assert.equal(h.lines.filter((line) => line.includes("could not remove a webhook")).length, 1);
  } finally {
    await h.close();
    await front.shutdown();
  }
});

Deno.test("start: the first poll is answered at once, so a quiet bot is up when start returns (not after its long poll)", async () => {
  await using fake = FakeTelegram.start({ rateLimit: false });
  // A poll timeout longer than start's wait: a held first poll would leave the device unconnected when start returns.
  const h = await harness(fake, { settings: { pollTimeoutMs: 20_000 } });
  try {
    assert.equal(h.device.status().connected, true);
  } finally {
    await h.close();
  }
});

Deno.test("typing never holds the poll: a message comes in while the typing request of the one before still hangs", async () => {
  await using fake = FakeTelegram.start({ rateLimit: false });
  const release: Array<() => void> = [];
  const front = inFront(fake, async (method, request) => {
    if (method !== "sendChatAction") return undefined;
    await request.body?.cancel();
    await new Promise<void>((resolve) => release.push(resolve));
    return Response.json({ ok: true, result: true });
  });
  // On a clock that does not move, a typing request's own deadline never ends it: only a poll loop that does not wait
  // for it takes the second message.
  const h = await harness(fake, {
    settings: { apiUrl: `http://127.0.0.1:${front.addr.port}` },
    clock: new FakeClock(),
  });
  try {
    fake.addChat(private_(OWNER), OWNER);
    fake.addChat(private_(MEMBER), MEMBER);
    fake.userSends({ chat: private_(OWNER), from: OWNER, text: "first" });
    await until(() => release.length === 1, "the first message's typing request, hanging");
    fake.userSends({ chat: private_(MEMBER), from: MEMBER, text: "second" });
    const inputs = await inputsAt(h, 2);
    assert.deepEqual(inputs.map((input) => input.payload.text), ["first", "second"]);
  } finally {
    const closing = h.close();
    for (const resolve of release.splice(0)) resolve();
    await closing;
    for (const resolve of release.splice(0)) resolve();
    await front.shutdown();
  }
});
