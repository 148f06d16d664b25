/**
 * The fake Telegram Bot API, driven by plain fetch: it answers a well-behaved client as Telegram does, and refuses
 * what Telegram refuses with Telegram's own descriptions, recording a violation for each thing homed must never do.
 *
 * @module
 */

import assert from "node:assert/strict";
import { FakeTelegram, type TelegramEntity } from "./fake_telegram.ts";
import { parseFormatted } from "./fake_telegram_format.ts";

interface Answer {
  ok: boolean;
  result?: unknown;
  error_code?: number;
  description?: string;
  parameters?: { retry_after?: number };
}

interface TgMessage {
  message_id: number;
  chat: { id: number; type: string; title?: string };
  from?: { id: number; is_bot: boolean; username?: string };
  text?: string;
  caption?: string;
  entities?: TelegramEntity[];
  reply_to_message?: TgMessage;
  reply_markup?: { inline_keyboard: Array<Array<{ text: string; callback_data?: string }>> };
  photo?: Array<{ file_id: string; file_size: number; width: number }>;
  voice?: { file_id: string; duration: number; mime_type: string };
  document?: { file_id: string; file_name: string; mime_type: string };
}

interface TgUpdate {
  update_id: number;
  message?: TgMessage;
  callback_query?: { id: string; data: string; from: { id: number }; message: TgMessage };
}

const ann = { id: 42, first_name: "Ann", username: "ann_at_home" };
const bo = { id: 43, first_name: "Bo" };
const dm = { id: 42, type: "private" as const };
const home = { id: -100777, type: "supergroup" as const, title: "Home" };

/** Calls a method with a JSON body (or multipart, for FormData); returns the HTTP status and the parsed answer. */
async function api(
  fake: FakeTelegram,
  method: string,
  params: Record<string, unknown> | FormData = {},
): Promise<{ status: number; body: Answer }> {
  const response = await fetch(`${fake.botUrl}/${method}`, {
    method: "POST",
    ...(params instanceof FormData
      ? { body: params }
      : { headers: { "content-type": "application/json" }, body: JSON.stringify(params) }),
  });
  return { status: response.status, body: await response.json() };
}

async function updates(fake: FakeTelegram, params: Record<string, unknown> = {}): Promise<TgUpdate[]> {
  const { status, body } = await api(fake, "getUpdates", params);
  assert.equal(status, 200, JSON.stringify(body));
  return body.result as TgUpdate[];
}

/**
 * Asserts a refusal: the status, the description matching `description`, and exactly one violation matching
 * `violation` (by default the description itself), or none when `violation` is false.
 */
async function refused(
  fake: FakeTelegram,
  call: Promise<{ status: number; body: Answer }>,
  status: number,
  description: RegExp,
  violation: RegExp | false = description,
): Promise<void> {
  const { status: got, body } = await call;
  assert.equal(got, status, JSON.stringify(body));
  assert.equal(body.ok, false);
  assert.equal(body.error_code, status);
  assert.match(String(body.description), description);
  const violations = fake.takeViolations();
  if (violation) {
    assert.equal(violations.length, 1, violations.join("\n"));
    assert.match(violations[0]!, new RegExp(violation.source.replace(/^\^/, "")));
  } else assert.deepEqual(violations, []);
}

Deno.test("getUpdates: an offset confirms updates for good, unconfirmed ones are handed out again", async () => {
  await using fake = FakeTelegram.start({ rateLimit: false });
  const first = fake.userSends({ chat: dm, from: ann, text: "hello" });
  const second = fake.userSends({ chat: dm, from: ann, text: "lights on" });
  const batch = await updates(fake);
  assert.deepEqual(batch.map((u) => u.update_id), [first.update_id, second.update_id]);
  assert.equal(batch[0]!.message!.text, "hello");
  assert.deepEqual(batch[0]!.message!.chat, { id: 42, first_name: "Ann", username: "ann_at_home", type: "private" });
  // Without an offset (a restart that lost it) the same updates come again.
  assert.deepEqual((await updates(fake)).map((u) => u.update_id), [first.update_id, second.update_id]);
  assert.equal(fake.deliveries(first.update_id), 2);
  // Confirming the first only: the second is still handed out, once more.
  assert.deepEqual((await updates(fake, { offset: first.update_id + 1 })).map((u) => u.update_id), [second.update_id]);
  assert.deepEqual(await updates(fake, { offset: second.update_id + 1 }), []);
  assert.equal(fake.deliveries(second.update_id), 3);
  assert.deepEqual(await updates(fake, { offset: first.update_id }), [], "confirmed updates never come back");
  assert.equal(fake.deliveries(first.update_id), 2);
  // limit
  fake.userSends({ chat: dm, from: ann, text: "a" });
  const third = fake.userSends({ chat: dm, from: ann, text: "b" });
  assert.equal((await updates(fake, { limit: 1 })).length, 1);
  // An offset past updates never handed out loses them: a violation.
  assert.deepEqual(await updates(fake, { offset: third.update_id + 1 }), []);
  assert.match(fake.takeViolations().join(), new RegExp(`confirmed update\\(s\\) ${third.update_id} that were never`));
  assert.equal(fake.pendingUpdates, 0);
});

Deno.test("getUpdates: a long poll is held until an update comes, and released empty when its timeout passes", async () => {
  await using fake = FakeTelegram.start();
  const started = performance.now();
  const poll = updates(fake, { timeout: 5 });
  await new Promise((resolve) => setTimeout(resolve, 150));
  const { update_id } = fake.userSends({ chat: dm, from: ann, text: "now" });
  const got = await poll;
  const tookMs = performance.now() - started;
  assert.deepEqual(got.map((u) => u.update_id), [update_id]);
  assert.ok(tookMs >= 140 && tookMs < 2_000, `released after ${tookMs} ms`);
  const emptyStart = performance.now();
  assert.deepEqual(await updates(fake, { offset: update_id + 1, timeout: 1 }), []);
  const heldMs = performance.now() - emptyStart;
  assert.ok(heldMs >= 950 && heldMs < 2_500, `held ${heldMs} ms for timeout 1`);
});

Deno.test("getUpdates: a second poll while one is held answers the older 409 Conflict and is a violation", async () => {
  await using fake = FakeTelegram.start();
  const older = api(fake, "getUpdates", { timeout: 5 });
  await new Promise((resolve) => setTimeout(resolve, 50));
  const newer = api(fake, "getUpdates", { timeout: 5 });
  await refused(
    fake,
    older,
    409,
    /^Conflict: terminated by other getUpdates request; make sure that only one bot instance is running$/,
    /^getUpdates: a second getUpdates came while one was held/,
  );
  fake.userSends({ chat: dm, from: ann, text: "for the newer" });
  assert.equal(((await newer).body.result as TgUpdate[])[0]!.message!.text, "for the newer");
  // A client that gave up its poll (stopped, restarting) leaves nothing held: its successor is no conflict.
  const gaveUp = new AbortController();
  const abandoned = fetch(`${fake.botUrl}/getUpdates?offset=999999&timeout=5`, { signal: gaveUp.signal });
  await new Promise((resolve) => setTimeout(resolve, 50));
  gaveUp.abort();
  await assert.rejects(abandoned);
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.deepEqual(await updates(fake, { timeout: 0 }), []);
  assert.deepEqual(fake.takeViolations(), []);
});

Deno.test("group updates: mentions and replies reach the bot with Telegram's shapes, other chatter does not", async () => {
  await using fake = FakeTelegram.start({ botUsername: "homed_bot", rateLimit: false });
  const chatter = fake.userSends({ chat: home, from: bo, text: "dinner at 7" });
  assert.equal(chatter.queued, false, "privacy mode: plain group chatter is not delivered");
  const mention = fake.userSends({ chat: home, from: bo, text: "is the door locked?", mentionBot: true });
  const [update] = await updates(fake);
  assert.equal(update!.update_id, mention.update_id);
  const message = update!.message!;
  assert.equal(message.text, "@homed_bot is the door locked?");
  assert.deepEqual(message.entities, [{ type: "mention", offset: 0, length: 10 }]);
  assert.deepEqual(message.chat, { id: -100777, title: "Home", type: "supergroup" });
  const { body } = await api(fake, "sendMessage", { chat_id: home.id, text: "Yes, locked." });
  const botMessage = body.result as TgMessage;
  assert.equal(botMessage.from?.is_bot, true);
  const reply = fake.userSends({ chat: home, from: bo, text: "thanks", replyToBot: true });
  assert.ok(reply.queued);
  const [replyUpdate] = await updates(fake, { offset: mention.update_id + 1 });
  assert.equal(replyUpdate!.message!.reply_to_message?.message_id, botMessage.message_id);
  assert.equal(replyUpdate!.message!.reply_to_message?.from?.username, "homed_bot");
  assert.ok(fake.userSends({ chat: home, from: bo, text: "/status@homed_bot" }).queued, "commands reach the bot");
  assert.throws(
    () => fake.userSends({ chat: { id: -5, type: "group" }, from: bo, text: "x", replyToBot: true }),
    /no bot message/,
  );
});

Deno.test("MarkdownV2: correct escaping is accepted and recorded as the user sees it", async () => {
  await using fake = FakeTelegram.start({ rateLimit: false });
  fake.addChat(dm, ann);
  const text = "*Living room* is 21\\.5 °C \\(target 22\\)\\! _cozy_ [graph](https://ha.local/h?x=1\\)) " +
    "`a \\` tick` ~old~ ||secret||\n>quoted\n```ts\nconst x = 1;\n```";
  const { status, body } = await api(fake, "sendMessage", { chat_id: 42, text, parse_mode: "MarkdownV2" });
  assert.equal(status, 200, body.description);
  const sent = fake.sent[0]!;
  assert.equal(
    sent.text,
    "Living room is 21.5 °C (target 22)! cozy graph a ` tick old secret\nquoted\nconst x = 1;",
  );
  assert.equal(sent.raw, text);
  assert.equal(sent.parse_mode, "MarkdownV2");
  const types = sent.entities.map((e) => e.type);
  for (const type of ["bold", "italic", "text_link", "code", "strikethrough", "spoiler", "blockquote", "pre"]) {
    assert.ok(types.includes(type), `${type} in ${types.join(",")}`);
  }
  assert.equal(sent.entities.find((e) => e.type === "text_link")?.url, "https://ha.local/h?x=1)");
  assert.equal(sent.entities.find((e) => e.type === "pre")?.language, "ts");
});

Deno.test("MarkdownV2 and Markdown: each kind of error is refused with Telegram's description", async () => {
  await using fake = FakeTelegram.start({ rateLimit: false });
  fake.addChat(dm, ann);
  const cases: Array<[string, string, RegExp]> = [
    [
      "MarkdownV2",
      "Done.",
      /^Bad Request: can't parse entities: Character '\.' is reserved and must be escaped with the preceding '\\'$/,
    ],
    ["MarkdownV2", "21-22 °C", /Character '-' is reserved/],
    ["MarkdownV2", "(ok)", /Character '\(' is reserved/],
    ["MarkdownV2", "a > b", /Character '>' is reserved/],
    ["MarkdownV2", "#1 + 2 = 3", /Character '#' is reserved/],
    ["MarkdownV2", "a|b", /Character '\|' is reserved/],
    ["MarkdownV2", "*bold", /^Bad Request: can't parse entities: Can't find end of Bold entity at byte offset 0$/],
    ["MarkdownV2", "für _kursiv", /Can't find end of Italic entity at byte offset 5$/],
    ["MarkdownV2", "[link](https://x.y", /Can't find end of a URL at byte offset 7$/],
    ["MarkdownV2", "`code", /Can't find end of Code entity at byte offset 0/],
    [
      "Markdown",
      "*bold",
      /^Bad Request: can't parse entities: Can't find end of the entity starting at byte offset 0$/,
    ],
    ["markdownv3", "x", /^Bad Request: unsupported parse_mode$/],
  ];
  for (const [mode, text, description] of cases) {
    await refused(fake, api(fake, "sendMessage", { chat_id: 42, text, parse_mode: mode }), 400, description);
  }
  assert.equal(fake.sent.length, 0);
  // Legacy Markdown leaves the MarkdownV2-reserved characters alone.
  assert.equal(
    (await api(fake, "sendMessage", { chat_id: 42, text: "*Done.* (21-22)", parse_mode: "Markdown" })).status,
    200,
  );
  assert.equal(fake.sent[0]!.text, "Done. (21-22)");
});

Deno.test("HTML: the allowed tags and entities are accepted; each kind of error is refused", async () => {
  await using fake = FakeTelegram.start({ rateLimit: false });
  fake.addChat(dm, ann);
  const good = "<b>bold</b> <strong>s</strong> <i>i</i> <em>e</em> <u>u</u> <ins>n</ins> <s>s</s> <strike>k</strike> " +
    '<del>d</del> <span class="tg-spoiler">sp</span> <tg-spoiler>t</tg-spoiler> ' +
    '<a href="https://ha.local/?a=1&amp;b=2">link</a> &lt;3 &gt; &amp; &quot;q&quot; &#128161; ' +
    '<code>x</code> <pre><code class="language-ts">let y;</code></pre> <blockquote>q</blockquote> ' +
    '<tg-emoji emoji-id="5368324170671202286">👍</tg-emoji>';
  const { status, body } = await api(fake, "sendMessage", { chat_id: 42, text: good, parse_mode: "HTML" });
  assert.equal(status, 200, body.description);
  assert.equal(fake.sent[0]!.text, 'bold s i e u n s k d sp t link <3 > & "q" 💡 x let y; q 👍');
  assert.equal(fake.sent[0]!.entities.find((e) => e.type === "text_link")?.url, "https://ha.local/?a=1&b=2");
  assert.equal(fake.sent[0]!.entities.find((e) => e.type === "pre")?.language, "ts");
  const cases: Array<[string, RegExp]> = [
    ["<p>para</p>", /^Bad Request: can't parse entities: Unsupported start tag "p" at byte offset 0$/],
    ["1 < 2", /Unsupported start tag "" at byte offset 2$/],
    ["<b>open", /^Bad Request: can't parse entities: Can't find end tag corresponding to start tag "b"$/],
    ["<b><i>x</b></i>", /Unmatched end tag at byte offset 7, expected "<\/i>", found "<\/b>"$/],
    ["x</b>", /Unexpected end tag at byte offset 1$/],
    ["<b", /Unclosed start tag at byte offset 0$/],
    ['<span class="x">s</span>', /Tag "span" must have class "tg-spoiler" at byte offset 0$/],
    ["AT&T", /Character '&' at byte offset 2 must be replaced with &amp;/],
    ["a &nbsp; b", /Unsupported HTML entity "&nbsp;" at byte offset 2/],
    ["2 > 1", /Character '>' at byte offset 2 must be replaced with &gt;/],
  ];
  for (const [text, description] of cases) {
    await refused(fake, api(fake, "sendMessage", { chat_id: 42, text, parse_mode: "HTML" }), 400, description);
  }
  assert.equal(fake.sent.length, 1);
});

Deno.test("the 4096 limit counts the text after parsing, in code points", async () => {
  await using fake = FakeTelegram.start({ rateLimit: false });
  fake.addChat(dm, ann);
  const escaped = "\\.".repeat(4096); // 8192 characters sent, 4096 shown
  assert.equal((await api(fake, "sendMessage", { chat_id: 42, text: escaped, parse_mode: "MarkdownV2" })).status, 200);
  assert.equal((await api(fake, "sendMessage", { chat_id: 42, text: "🏠".repeat(4096) })).status, 200);
  await refused(
    fake,
    api(fake, "sendMessage", { chat_id: 42, text: "x".repeat(4097) }),
    400,
    /^Bad Request: message is too long$/,
  );
  await refused(
    fake,
    api(fake, "sendMessage", { chat_id: 42, text: `<b>${"y".repeat(4097)}</b>`, parse_mode: "HTML" }),
    400,
    /^Bad Request: message is too long$/,
  );
  assert.equal(fake.sent.length, 2);
  await refused(
    fake,
    api(fake, "sendMessage", { chat_id: 42, text: "  \n " }),
    400,
    /^Bad Request: message text is empty$/,
  );
  await refused(fake, api(fake, "sendMessage", { chat_id: 999, text: "hi" }), 400, /^Bad Request: chat not found$/);
  await refused(fake, api(fake, "sendMessage", { text: "hi" }), 400, /^Bad Request: chat_id is empty$/);
});

Deno.test("rate limits: 429 with retry_after, a violation when the client ignores it, accepted after it", async () => {
  await using fake = FakeTelegram.start({ rateLimit: { retryAfterS: 1 } });
  fake.addChat(dm, ann);
  assert.equal((await api(fake, "sendMessage", { chat_id: 42, text: "one" })).status, 200);
  const { status, body } = await api(fake, "sendMessage", { chat_id: 42, text: "two" });
  assert.equal(status, 429);
  assert.equal(body.description, "Too Many Requests: retry after 1");
  assert.deepEqual(body.parameters, { retry_after: 1 });
  assert.deepEqual(fake.takeViolations(), [], "a 429 itself is Telegram's doing, not the client's");
  await refused(
    fake,
    api(fake, "sendMessage", { chat_id: 42, text: "two again" }),
    429,
    /^Too Many Requests: retry after 1$/,
    /^sendMessage: sent to chat 42 \d+ ms before a 429's retry_after elapsed$/,
  );
  await new Promise((resolve) => setTimeout(resolve, 1_050));
  assert.equal((await api(fake, "sendMessage", { chat_id: 42, text: "two, later" })).status, 200);
  // Forced 429s, for any chat.
  fake.addChat(home);
  fake.rateLimitNext(2, 3);
  const forced = await api(fake, "sendMessage", { chat_id: home.id, text: "x" });
  assert.equal(forced.status, 429);
  assert.equal(forced.body.parameters?.retry_after, 3);
  assert.deepEqual(fake.sent.map((m) => m.text), ["one", "two, later"]);
});

Deno.test("callbacks: a press reaches the bot once answered; a second answer or an unknown id is refused", async () => {
  await using fake = FakeTelegram.start({ rateLimit: false });
  fake.addChat(dm, ann);
  const keyboard = {
    inline_keyboard: [[{ text: "Yes", callback_data: "unlock:yes" }, { text: "No", callback_data: "unlock:no" }]],
  };
  const { body } = await api(fake, "sendMessage", { chat_id: 42, text: "Unlock the door?", reply_markup: keyboard });
  const asked = body.result as TgMessage;
  assert.deepEqual(asked.reply_markup, keyboard);
  assert.throws(
    () => fake.userPresses({ from: ann, message_id: asked.message_id, data: "unlock:maybe" }),
    /no inline button/,
  );
  const press = fake.userPresses({ from: ann, message_id: asked.message_id, data: "unlock:yes" });
  const [update] = await updates(fake);
  assert.equal(update!.callback_query!.id, press.callback_query_id);
  assert.equal(update!.callback_query!.data, "unlock:yes");
  assert.equal(update!.callback_query!.message.message_id, asked.message_id);
  // The bot acts on it but has not answered yet: the user's spinner turns.
  assert.equal((await api(fake, "editMessageReplyMarkup", { chat_id: 42, message_id: asked.message_id })).status, 200);
  assert.deepEqual(fake.unansweredCallbacks().map((c) => c.id), [press.callback_query_id]);
  assert.equal(fake.sent[0]!.reply_markup, undefined, "the keyboard is gone");
  assert.throws(
    () => fake.userPresses({ from: ann, message_id: asked.message_id, data: "unlock:yes" }),
    /no inline button/,
  );
  const answered = await api(fake, "answerCallbackQuery", {
    callback_query_id: press.callback_query_id,
    text: "Unlocked",
  });
  assert.equal(answered.status, 200);
  assert.deepEqual(fake.unansweredCallbacks(), []);
  const invalid = /^Bad Request: query is too old and response timeout expired or query ID is invalid$/;
  await refused(
    fake,
    api(fake, "answerCallbackQuery", { callback_query_id: press.callback_query_id }),
    400,
    invalid,
    /callback query \d+ answered twice/,
  );
  await refused(fake, api(fake, "answerCallbackQuery", { callback_query_id: "12345" }), 400, invalid);
  await refused(
    fake,
    api(fake, "sendMessage", {
      chat_id: 42,
      text: "?",
      reply_markup: { inline_keyboard: [[{ text: "x", callback_data: "d".repeat(65) }]] },
    }),
    400,
    /^Bad Request: BUTTON_DATA_INVALID$/,
  );
  await refused(
    fake,
    api(fake, "editMessageReplyMarkup", { chat_id: 42, message_id: asked.message_id }),
    400,
    /^Bad Request: message is not modified: specified new message content and reply markup are exactly the same/,
  );
  assert.equal(
    (await api(fake, "editMessageText", { chat_id: 42, message_id: asked.message_id, text: "Unlocked ✓" })).status,
    200,
  );
  assert.equal(fake.sent[0]!.text, "Unlocked ✓");
  assert.deepEqual(fake.edits.map((e) => e.method), ["editMessageReplyMarkup", "editMessageText"]);
});

const png = Uint8Array.from([
  0x89,
  0x50,
  0x4e,
  0x47,
  0x0d,
  0x0a,
  0x1a,
  0x0a,
  0,
  0,
  0,
  13,
  0x49,
  0x48,
  0x44,
  0x52,
  0,
  0,
  0,
  64,
  0,
  0,
  0,
  48,
  8,
  2,
  0,
  0,
  0,
]);
const ogg = new TextEncoder().encode("OggS\0\x02 opus voice bytes");

function form(
  fields: Record<string, string>,
  part?: { name: string; bytes: Uint8Array<ArrayBuffer>; filename?: string; type?: string },
): FormData {
  const data = new FormData();
  for (const [name, value] of Object.entries(fields)) data.append(name, value);
  if (part) data.append(part.name, new Blob([part.bytes], { type: part.type ?? "" }), part.filename);
  return data;
}

Deno.test("media out: multipart photo, voice and document uploads are recorded with their bytes; a URL as a URL", async () => {
  await using fake = FakeTelegram.start({ rateLimit: false });
  fake.addChat(dm, ann);
  const photo = await api(
    fake,
    "sendPhoto",
    form({ chat_id: "42", caption: "*Front door*", parse_mode: "MarkdownV2" }, {
      name: "photo",
      bytes: png,
      filename: "door.png",
      type: "image/png",
    }),
  );
  assert.equal(photo.status, 200, photo.body.description);
  assert.equal((photo.body.result as TgMessage).caption, "Front door");
  assert.equal((photo.body.result as TgMessage).photo?.[0]?.width, 64);
  const voice = await api(
    fake,
    "sendVoice",
    form({ chat_id: "42", voice: "attach://clip" }, { name: "clip", bytes: ogg, filename: "reply.ogg" }),
  );
  assert.equal(voice.status, 200, voice.body.description);
  const pdf = new TextEncoder().encode("%PDF-1.7 report");
  const doc = await api(
    fake,
    "sendDocument",
    form({ chat_id: "42" }, { name: "document", bytes: pdf, filename: "report.pdf", type: "application/pdf" }),
  );
  assert.equal((doc.body.result as TgMessage).document?.file_name, "report.pdf");
  const byUrl = await api(fake, "sendPhoto", { chat_id: 42, photo: "https://cam.local/snap.jpg" });
  assert.equal(byUrl.status, 200);
  assert.deepEqual(fake.sent.map((m) => [m.method, m.media?.field, m.media?.filename ?? m.media?.url]), [
    ["sendPhoto", "photo", "door.png"],
    ["sendVoice", "voice", "reply.ogg"],
    ["sendDocument", "document", "report.pdf"],
    ["sendPhoto", "photo", "https://cam.local/snap.jpg"],
  ]);
  assert.deepEqual(fake.sent[0]!.media?.bytes, png);
  assert.deepEqual(fake.sent[1]!.media?.bytes, ogg);
  assert.equal(fake.sent[2]!.media?.mime, "application/pdf");
  // Refusals.
  await refused(
    fake,
    api(fake, "sendPhoto", form({ chat_id: "42" }, { name: "picture", bytes: png, filename: "a.png" })),
    400,
    /^Bad Request: there is no photo in the request$/,
  );
  await refused(
    fake,
    api(
      fake,
      "sendDocument",
      form({ chat_id: "42" }, { name: "document", bytes: new Uint8Array(), filename: "e.txt" }),
    ),
    400,
    /^Bad Request: file must be non-empty$/,
  );
  await refused(
    fake,
    api(fake, "sendPhoto", form({ chat_id: "42" }, { name: "photo", bytes: pdf, filename: "x.png" })),
    400,
    /^Bad Request: IMAGE_PROCESS_FAILED$/,
  );
  await refused(
    fake,
    api(fake, "sendVoice", form({ chat_id: "42" }, { name: "voice", bytes: pdf, filename: "x.ogg" })),
    400,
    /voice is not OGG\/Opus/,
  );
  await refused(
    fake,
    api(
      fake,
      "sendPhoto",
      form({ chat_id: "42", caption: "c".repeat(1025) }, { name: "photo", bytes: png, filename: "a.png" }),
    ),
    400,
    /^Bad Request: message caption is too long$/,
  );
  await refused(
    fake,
    api(fake, "sendPhoto", { chat_id: 42, photo: "not-a-file-id" }),
    400,
    /^Bad Request: wrong file identifier\/HTTP URL specified$/,
  );
  const unnamed = await api(fake, "sendDocument", form({ chat_id: "42" }, { name: "document", bytes: pdf }));
  assert.equal(unnamed.status, 200);
  const leftover = fake.takeViolations();
  assert.deepEqual(leftover, ["sendDocument: the document part has no filename"]);
});

Deno.test("media in: getFile resolves a user's photo, voice and document for download; an unknown file_id is refused", async () => {
  await using fake = FakeTelegram.start();
  const pdf = new TextEncoder().encode("%PDF-1.7 bill");
  fake.userSends({ chat: dm, from: ann, photo: png, text: "look" });
  fake.userSends({ chat: dm, from: ann, voice: ogg, voiceDurationS: 3 });
  fake.userSends({ chat: dm, from: ann, document: { name: "bill.pdf", bytes: pdf, mime: "application/pdf" } });
  const [photo, voice, doc] = (await updates(fake)).map((u) => u.message!);
  assert.equal(photo!.caption, "look");
  assert.equal(photo!.photo!.length, 2, "a small and a full size");
  assert.equal(voice!.voice!.duration, 3);
  assert.equal(voice!.voice!.mime_type, "audio/ogg");
  for (
    const [fileId, bytes] of [[photo!.photo!.at(-1)!.file_id, png], [voice!.voice!.file_id, ogg], [
      doc!.document!.file_id,
      pdf,
    ]] as const
  ) {
    const { body } = await api(fake, "getFile", { file_id: fileId });
    const file = body.result as { file_id: string; file_unique_id: string; file_size: number; file_path: string };
    assert.equal(file.file_id, fileId);
    assert.equal(file.file_size, bytes.length);
    assert.ok(file.file_unique_id);
    const download = await fetch(`${fake.apiUrl}/file/bot${fake.token}/${file.file_path}`);
    assert.equal(download.status, 200);
    assert.deepEqual(new Uint8Array(await download.arrayBuffer()), bytes);
  }
  await refused(fake, api(fake, "getFile", { file_id: "AgACnope" }), 400, /^Bad Request: invalid file_id$/);
  const missing = await fetch(`${fake.apiUrl}/file/bot${fake.token}/photos/none.jpg`);
  assert.equal(missing.status, 404);
  await missing.body?.cancel();
  assert.match(fake.takeViolations().join(), /no file at photos\/none\.jpg/);
});

Deno.test("outage answers 502 with nginx's page and counts calls; a revoked token answers 401 and counts", async () => {
  await using fake = FakeTelegram.start();
  const held = fetch(`${fake.botUrl}/getUpdates?timeout=5`);
  await new Promise((resolve) => setTimeout(resolve, 50));
  fake.outage(300);
  assert.equal((await held).status, 502, "a held poll is cut by the outage");
  await (await held).body?.cancel();
  for (let i = 0; i < 3; i++) {
    const response = await fetch(`${fake.botUrl}/getMe`);
    assert.equal(response.status, 502);
    assert.match(response.headers.get("content-type") ?? "", /text\/html/);
    assert.match(await response.text(), /502 Bad Gateway/);
  }
  assert.equal(fake.callsDuring, 3);
  await new Promise((resolve) => setTimeout(resolve, 350));
  const me = await api(fake, "getMe");
  assert.equal((me.body.result as { username: string }).username, "homed_test_bot");
  fake.revokeToken();
  await refused(fake, api(fake, "getUpdates"), 401, /^Unauthorized$/, false);
  await refused(fake, api(fake, "sendMessage", { chat_id: 1, text: "x" }), 401, /^Unauthorized$/, false);
  assert.equal(fake.revokedCalls, 2);
});

Deno.test("wire: unknown methods are 404, a wrong token 401, both violations; GET, urlencoded and any letter case work", async () => {
  await using fake = FakeTelegram.start({ rateLimit: false });
  fake.addChat(dm, ann);
  await refused(fake, api(fake, "sendSticker", { chat_id: 42 }), 404, /^Not Found$/);
  const wrong = await fetch(`${fake.apiUrl}/bot1:wrong/getMe`);
  assert.deepEqual(await wrong.json(), { ok: false, error_code: 401, description: "Unauthorized" });
  assert.match(fake.takeViolations().join(), /wrong bot token/);
  const viaGet = await fetch(`${fake.botUrl}/sendMessage?chat_id=42&text=hi%20there`);
  assert.equal(viaGet.status, 200, await viaGet.text());
  const viaForm = await fetch(`${fake.botUrl}/SENDMESSAGE`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      chat_id: "42",
      text: "<b>form</b>",
      parse_mode: "html",
      reply_parameters: JSON.stringify({ message_id: 1 }),
    }),
  });
  assert.equal(viaForm.status, 200, await viaForm.text());
  assert.deepEqual(fake.sent.map((m) => [m.text, m.reply_to_message_id]), [["hi there", undefined], ["form", 1]]);
  await refused(
    fake,
    api(fake, "sendMessage", { chat_id: 42, text: "x", reply_parameters: { message_id: 999 } }),
    400,
    /^Bad Request: message to be replied not found$/,
  );
  const typing = await api(fake, "sendChatAction", { chat_id: 42, action: "typing" });
  assert.equal(typing.status, 200, JSON.stringify(typing.body));
  assert.deepEqual(fake.chatActions.map((a) => [a.chat_id, a.action]), [[42, "typing"]]);
  await refused(
    fake,
    api(fake, "sendChatAction", { chat_id: 42, action: "dancing" }),
    400,
    /^Bad Request: wrong parameter action in request$/,
  );
});

Deno.test("close fails while a violation is left", async () => {
  const fake = FakeTelegram.start();
  await (await fetch(`${fake.botUrl}/noSuchMethod`)).body?.cancel();
  await assert.rejects(fake.close(), /noSuchMethod: Not Found/);
});

Deno.test("parseFormatted trims like Telegram and keeps entity offsets in UTF-16 units", () => {
  const parsed = parseFormatted("  🏠 <b>home</b>  ", "HTML");
  assert.equal(parsed.text, "🏠 home");
  assert.deepEqual(parsed.entities, [{ type: "bold", offset: 3, length: 4 }]);
});
