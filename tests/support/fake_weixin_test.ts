import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { FakeWeixin, type FakeWeixinOptions, messageIdsOf } from "./fake_weixin.ts";
import { waitFor } from "./wait.ts";
import { aesEcbDecrypt, aesEcbEncrypt, aesEcbPaddedSize, md5Hex, parseMediaAesKey } from "./fake_weixin_media.ts";

const TOKEN = "fake-weixin-bot-token";
const ALICE = "wxid_alice@im.wechat";
const BOB = "wxid_bob@im.wechat";
const BASE_INFO = { channel_version: "2.4.9", bot_agent: "homed-test/1.0" };
const SESSION_TIMEOUT = { errcode: -14, errmsg: "session timeout" };

interface WireMedia {
  encrypt_query_param: string;
  aes_key: string;
  encrypt_type: number;
  full_url?: string;
}
interface WireItem {
  type: number;
  text_item?: { text: string };
  image_item?: { aeskey: string; media: WireMedia; mid_size: number };
  voice_item?: { media: WireMedia; text?: string; encode_type: number; playtime: number };
  file_item?: { media: WireMedia; file_name: string; len: string };
}
interface WireMessage {
  message_id: number;
  seq: number;
  from_user_id: string;
  to_user_id: string;
  message_type: number;
  message_state: number;
  session_id: string;
  create_time_ms: number;
  item_list: WireItem[];
  context_token?: string;
}
interface Updates {
  ret: number;
  msgs: WireMessage[];
  get_updates_buf: string;
  longpolling_timeout_ms: number;
}
interface Answer {
  status: number;
  text: string;
  json: Record<string, unknown>;
  headers: Headers;
}

function start(options: FakeWeixinOptions = {}): FakeWeixin {
  return FakeWeixin.start({ longPollTimeoutMs: 300, qrPollMs: 200, ...options });
}

/** The headers a polite client sends (X-WECHAT-UIN random per request). */
function botHeaders(token = TOKEN): Record<string, string> {
  return {
    "Content-Type": "application/json",
    AuthorizationType: "ilink_bot_token",
    Authorization: `Bearer ${token}`,
    "X-WECHAT-UIN": btoa(String(crypto.getRandomValues(new Uint32Array(1))[0])),
    "iLink-App-Id": "bot",
    "iLink-App-ClientVersion": "132105",
  };
}

async function answerOf(response: Response): Promise<Answer> {
  const text = await response.text();
  let json: Record<string, unknown> = {};
  try {
    json = JSON.parse(text);
  } catch {
    // Not JSON: the test reads `text`.
  }
  return { status: response.status, text, json, headers: response.headers };
}

async function call(
  fake: FakeWeixin,
  name: string,
  body: Record<string, unknown> = {},
  options: { token?: string; headers?: Record<string, string | null>; signal?: AbortSignal } = {},
): Promise<Answer> {
  const headers = new Headers(botHeaders(options.token));
  for (const [key, value] of Object.entries(options.headers ?? {})) {
    if (value === null) headers.delete(key);
    else headers.set(key, value);
  }
  const response = await fetch(`${fake.baseUrl}/ilink/bot/${name}`, {
    method: "POST",
    headers,
    // Bytes, not a string: fetch would add its own Content-Type to a string body.
    body: new TextEncoder().encode(JSON.stringify({ ...body, base_info: BASE_INFO })),
    ...(options.signal ? { signal: options.signal } : {}),
  });
  return answerOf(response);
}

async function poll(
  fake: FakeWeixin,
  buf: string,
  token = TOKEN,
): Promise<{ updates: Updates; text: string; ms: number }> {
  const started = performance.now();
  const answer = await call(fake, "getupdates", { get_updates_buf: buf }, { token });
  assert.equal(answer.status, 200);
  return { updates: answer.json as unknown as Updates, text: answer.text, ms: performance.now() - started };
}

function textItem(text: string): WireItem {
  return { type: 1, text_item: { text } };
}

function reply(
  fake: FakeWeixin,
  to: string,
  contextToken: string | undefined,
  item: WireItem | Record<string, unknown>,
  overrides: Record<string, unknown> = {},
): Promise<Answer> {
  const msg = {
    from_user_id: "",
    to_user_id: to,
    client_id: `homed-${crypto.randomUUID()}`,
    message_type: 2,
    message_state: 2,
    item_list: [item],
    ...(contextToken === undefined ? {} : { context_token: contextToken }),
    ...overrides,
  };
  return call(fake, "sendmessage", { msg });
}

/** A user writes and the client receives it: the message's context token and the cursor after it. */
async function conversation(fake: FakeWeixin, from = ALICE, buf = ""): Promise<{ token: string; cursor: string }> {
  fake.userSends({ from, text: "hi" });
  const { updates } = await poll(fake, buf);
  return { token: updates.msgs[0]!.context_token!, cursor: updates.get_updates_buf };
}

function hex(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString("hex");
}

async function download(fake: FakeWeixin, param: string): Promise<Response> {
  return await fetch(`${fake.cdnBaseUrl}/download?encrypted_query_param=${encodeURIComponent(param)}`);
}

/** The polite client's upload: getuploadurl, then the ciphertext to the CDN; the download param and the key. */
async function upload(
  fake: FakeWeixin,
  bytes: Uint8Array,
  mediaType: number,
  to: string,
  tamper: { md5?: string; contentType?: string } = {},
): Promise<{ response: Response; param: string; key: Uint8Array; answer: Answer }> {
  const key = crypto.getRandomValues(new Uint8Array(16));
  const filekey = hex(crypto.getRandomValues(new Uint8Array(16)));
  const answer = await call(fake, "getuploadurl", {
    filekey,
    media_type: mediaType,
    to_user_id: to,
    rawsize: bytes.length,
    rawfilemd5: tamper.md5 ?? md5Hex(bytes),
    filesize: aesEcbPaddedSize(bytes.length),
    no_need_thumb: true,
    aeskey: hex(key),
  });
  const url = typeof answer.json.upload_full_url === "string"
    ? answer.json.upload_full_url
    : `${fake.cdnBaseUrl}/upload?encrypted_query_param=${
      encodeURIComponent(String(answer.json.upload_param))
    }&filekey=${filekey}`;
  const response = await fetch(url, {
    method: "POST",
    headers: { "Content-Type": tamper.contentType ?? "application/octet-stream" },
    body: aesEcbEncrypt(bytes, key),
  });
  await response.body?.cancel();
  return { response, param: response.headers.get("x-encrypted-param") ?? "", key, answer };
}

Deno.test("each message is delivered exactly once, in order, with uint64 ids exact in the JSON text", async () => {
  await using fake = start();
  const first = fake.userSends({ from: ALICE, text: "one" });
  const second = fake.userSends({ from: ALICE, text: "two" });
  assert.notEqual(first, second);
  assert.ok(BigInt(first) > 2n ** 53n);
  const { updates, text } = await poll(fake, "");
  assert.equal(updates.ret, 0);
  assert.deepEqual(updates.msgs.map((m) => m.item_list[0]?.text_item?.text), ["one", "two"]);
  assert.deepEqual(messageIdsOf(text), [first, second], "the ids are in the text digit for digit");
  assert.equal(fake.lastUpdatesText, text);
  assert.equal(updates.msgs[0]!.message_id, updates.msgs[1]!.message_id, "a plain JSON.parse rounds them together");
  const message = updates.msgs[0]!;
  assert.deepEqual([message.message_type, message.message_state, message.item_list.length], [1, 2, 1]);
  assert.equal(message.from_user_id, ALICE);
  assert.equal(message.to_user_id, fake.botId);
  assert.notEqual(message.context_token, updates.msgs[1]!.context_token, "a fresh context_token per message");
  assert.match(updates.get_updates_buf, /^[A-Za-z0-9+/]+=*$/, "the cursor is base64");
  const again = await poll(fake, updates.get_updates_buf);
  assert.deepEqual(again.updates.msgs, [], "delivered messages are consumed");
  assert.equal(again.updates.get_updates_buf, updates.get_updates_buf);
  assert.equal(again.updates.longpolling_timeout_ms, 300);
  assert.ok(again.ms >= 250, `the empty answer waited out the long poll (${again.ms} ms)`);
  assert.equal(fake.polls, 2);
});

Deno.test("a held poll is released as soon as a message is queued", async () => {
  await using fake = start({ longPollTimeoutMs: 5_000 });
  const polled = poll(fake, "");
  await fake.waitForPoll();
  assert.equal(fake.polling, true);
  fake.userSends({ from: BOB, text: "now" });
  const { updates, ms } = await polled;
  assert.equal(updates.msgs[0]?.item_list[0]?.text_item?.text, "now");
  assert.ok(ms < 2_000, `released early (${ms} ms)`);
  assert.equal(fake.polling, false);
});

Deno.test("a client that gives up on a poll loses nothing: the abandoned poll consumes no message", async () => {
  await using fake = start({ longPollTimeoutMs: 5_000 });
  const abort = new AbortController();
  const abandoned = call(fake, "getupdates", { get_updates_buf: "" }, { signal: abort.signal });
  await fake.waitForPoll();
  abort.abort();
  await assert.rejects(abandoned);
  // A message queued in the instant before the server sees the client go is delivered to nobody, as live.
  await waitFor(() => !fake.polling, "the fake to see the abandoned poll");
  fake.userSends({ from: ALICE, text: "kept" });
  const { updates } = await poll(fake, "");
  assert.equal(updates.msgs[0]?.item_list[0]?.text_item?.text, "kept");
});

Deno.test("an older or empty cursor after a newer one is a violation, and nothing is replayed", async () => {
  const fake = start({ longPollTimeoutMs: 100 });
  const initial = (await poll(fake, "")).updates.get_updates_buf;
  fake.userSends({ from: ALICE, text: "one" });
  const newer = (await poll(fake, initial)).updates.get_updates_buf;
  await poll(fake, newer);
  assert.deepEqual(fake.violations, [], "a polite client: no violation");
  const older = await poll(fake, initial);
  assert.deepEqual(older.updates.msgs, [], "consumed messages are not replayed");
  assert.equal(older.updates.get_updates_buf, newer, "the answer carries the current cursor");
  fake.userSends({ from: ALICE, text: "two" });
  const empty = await poll(fake, "");
  assert.deepEqual(empty.updates.msgs.map((m) => m.item_list[0]?.text_item?.text), ["two"]);
  const violations = fake.takeViolations();
  assert.equal(violations.length, 2, violations.join("\n"));
  assert.match(violations[0]!, /getupdates: an older get_updates_buf .* duplicates/);
  assert.match(violations[1]!, /getupdates: an empty get_updates_buf after the client showed it holds position 1/);
  await poll(fake, "bm90IGlzc3VlZA==");
  assert.match(fake.takeViolations().join(), /get_updates_buf bm90IGlzc3VlZA== was never issued/);
  await fake.close();
});

Deno.test("replying with a delivered token shows the client holds that answer's cursor", async () => {
  const fake = start({ longPollTimeoutMs: 100 });
  const { token } = await conversation(fake);
  assert.deepEqual(await reply(fake, ALICE, token, textItem("hello")).then((a) => a.json), {});
  await poll(fake, "");
  assert.match(fake.takeViolations().join(), /an empty get_updates_buf after the client showed it holds position 1/);
  await fake.close();
});

Deno.test("two long polls at once are a violation; the second is answered at once", async () => {
  const fake = start({ longPollTimeoutMs: 1_000 });
  const first = poll(fake, "");
  await fake.waitForPoll();
  const second = await poll(fake, "");
  assert.deepEqual(second.updates.msgs, []);
  assert.ok(second.ms < 800, `answered without holding (${second.ms} ms)`);
  await first;
  assert.match(fake.takeViolations().join(), /a second long poll while one is held/);
  await fake.close();
});

Deno.test("each missing or wrong header is answered -14 and named in a violation", async () => {
  const fake = start();
  const cases: Array<[Record<string, string | null>, RegExp]> = [
    [{ "Content-Type": null }, /header Content-Type is missing/],
    [{ "Content-Type": "text/plain" }, /header Content-Type is text\/plain/],
    [{ AuthorizationType: null }, /header AuthorizationType is missing/],
    [{ Authorization: null }, /header Authorization is missing/],
    [{ Authorization: TOKEN }, /header Authorization is not Bearer <token>/],
    [{ "X-WECHAT-UIN": null }, /header X-WECHAT-UIN is missing/],
    [{ "X-WECHAT-UIN": btoa("12ab") }, /header X-WECHAT-UIN is MTJhYg==, not base64 of a decimal uint32/],
    [{ "X-WECHAT-UIN": btoa("4294967296") }, /header X-WECHAT-UIN .* not base64 of a decimal uint32/],
    [{ "iLink-App-Id": null }, /header iLink-App-Id is missing/],
    [{ "iLink-App-Id": "openclaw" }, /header iLink-App-Id is "openclaw", not "bot"/],
    [{ "iLink-App-ClientVersion": null }, /header iLink-App-ClientVersion is missing/],
    [{ "iLink-App-ClientVersion": "2.4.9" }, /header iLink-App-ClientVersion is "2.4.9", not a decimal uint32/],
    [{ Authorization: "Bearer someone-elses" }, /Authorization carries a token the fake never issued/],
  ];
  for (const [headers, pattern] of cases) {
    const answer = await call(fake, "getconfig", { ilink_user_id: ALICE }, { headers });
    assert.deepEqual(answer.json, SESSION_TIMEOUT, JSON.stringify(headers));
    const violations = fake.takeViolations();
    assert.equal(violations.length, 1, `${pattern}: ${violations.join(" | ")}`);
    assert.match(violations[0]!, pattern);
    assert.match(violations[0]!, /^POST ilink\/bot\/getconfig: /);
  }
  const same = { "X-WECHAT-UIN": btoa("12345") };
  await call(fake, "getconfig", { ilink_user_id: ALICE }, { headers: same });
  const repeated = await call(fake, "getconfig", { ilink_user_id: ALICE }, { headers: same });
  assert.deepEqual(repeated.json, SESSION_TIMEOUT);
  assert.match(fake.takeViolations().join(), /X-WECHAT-UIN repeats the previous request's/);
  const response = await fetch(`${fake.baseUrl}/ilink/bot/getconfig`, {
    method: "POST",
    headers: botHeaders(),
    body: JSON.stringify({ ilink_user_id: ALICE, base_info: { channel_version: "2.4.9", bot_agent: "x".repeat(300) } }),
  });
  assert.equal((await answerOf(response)).json.ret, 0, "base_info problems are recorded, not refused");
  assert.match(fake.takeViolations().join(), /base_info.bot_agent is over 256 bytes/);
  await fake.close();
});

Deno.test("accepted sends are recorded and answered {} or {ret:0,errmsg:''}", async () => {
  await using fake = start({ sendSuccess: "ret0" });
  const { token } = await conversation(fake);
  const first = await reply(fake, ALICE, token, textItem("hello"), { client_id: "c-1" });
  assert.deepEqual(first.json, { ret: 0, errmsg: "" });
  fake.sendSuccess = "empty";
  await new Promise((resolve) => setTimeout(resolve, 1_000)); // pacing
  assert.equal((await reply(fake, ALICE, token, textItem("again"))).text, "{}");
  await fake.waitForSent(2);
  assert.deepEqual(fake.sent.map((s) => [s.to, s.kind, s.text]), [[ALICE, "text", "hello"], [ALICE, "text", "again"]]);
  assert.equal(fake.sent[0]!.clientId, "c-1");
  assert.equal(fake.sent[0]!.contextToken, token);
  assert.deepEqual(fake.refusals, []);
});

Deno.test("sendmessage refuses each rule break with ret -2 and names it", async () => {
  const fake = start({ pacing: { sends: 100, windowMs: 1_000 } });
  const { token, cursor } = await conversation(fake, ALICE);
  const bob = await conversation(fake, BOB, cursor);
  await reply(fake, ALICE, token, textItem("ok"), { client_id: "used-once" });
  const carol = "wxid_carol@im.wechat";
  const cases: Array<[() => Promise<Answer>, RegExp]> = [
    [() => reply(fake, ALICE, token, textItem("x"), { client_id: "used-once" }), /client_id used-once was used before/],
    [
      () => reply(fake, ALICE, token, textItem("x"), { item_list: [textItem("a"), textItem("b")] }),
      /2 items, not exactly 1/,
    ],
    [() => reply(fake, ALICE, token, textItem("x"), { item_list: [] }), /0 items, not exactly 1/],
    [() => reply(fake, ALICE, token, textItem("x"), { message_type: 1 }), /message_type is 1, not 2/],
    [() => reply(fake, ALICE, token, textItem("x"), { message_state: 1 }), /message_state is 1, not 2/],
    [() => reply(fake, ALICE, token, textItem("x"), { from_user_id: fake.botId }), /from_user_id is .*, not ""/],
    [
      () => reply(fake, ALICE, bob.token, textItem("x")),
      /context_token was issued to wxid_bob@im.wechat, not wxid_alice/,
    ],
    [() => reply(fake, carol, token, textItem("x")), /to_user_id "wxid_carol@im.wechat" never wrote to the bot/],
    [() => reply(fake, ALICE, undefined, textItem("x")), /context_token is missing/],
    [() => reply(fake, ALICE, "bm90LWEtdG9rZW4=", textItem("x")), /context_token was never issued/],
    [() => reply(fake, ALICE, token, textItem("字".repeat(2_001))), /text is 2001 characters, over the limit of 2000/],
    [() => reply(fake, ALICE, token, { type: 9 }), /type is 9, not a known item type/],
  ];
  for (const [send, pattern] of cases) {
    const answer = await send();
    assert.deepEqual(answer.json, { ret: -2 }, pattern.source);
    const violations = fake.takeViolations();
    assert.ok(violations.some((v) => pattern.test(v)), `${pattern}: ${violations.join(" | ")}`);
  }
  assert.equal(fake.refusals.length, cases.length);
  assert.match(fake.refusals[0]!.reasons.join(), /used before/);
  assert.equal(fake.sent.length, 1, "only the first send was accepted");
  assert.equal((await reply(fake, ALICE, token, textItem("字".repeat(2_000)))).text, "{}", "2000 is allowed");
  await fake.close();
});

Deno.test("a third send within the pacing window is refused 'prepare failed'", async () => {
  const fake = start({ pacing: { sends: 2, windowMs: 400 } });
  const { token } = await conversation(fake);
  assert.equal((await reply(fake, ALICE, token, textItem("1"))).text, "{}");
  assert.equal((await reply(fake, ALICE, token, textItem("2"))).text, "{}");
  assert.deepEqual((await reply(fake, ALICE, token, textItem("3"))).json, { ret: -2, errmsg: "prepare failed" });
  assert.match(fake.takeViolations().join(), /a send within 400 ms of 2 others \(prepare failed: pace sends\)/);
  await new Promise((resolve) => setTimeout(resolve, 450));
  assert.equal((await reply(fake, ALICE, token, textItem("3 again"))).text, "{}");
  assert.deepEqual(fake.sent.map((s) => s.text), ["1", "2", "3 again"]);
  await fake.close();
});

Deno.test("a context_token carries only so many sends; the next message's token carries more", async () => {
  const fake = start({ sendsPerContextToken: 3, pacing: { sends: 100, windowMs: 1_000 } });
  const { token, cursor } = await conversation(fake);
  for (const text of ["a", "b", "c"]) assert.equal((await reply(fake, ALICE, token, textItem(text))).text, "{}");
  assert.deepEqual((await reply(fake, ALICE, token, textItem("d"))).json, { ret: -2 });
  assert.match(fake.takeViolations().join(), /context_token already carried 3 sends/);
  const next = await conversation(fake, ALICE, cursor);
  assert.equal((await reply(fake, ALICE, next.token, textItem("d"))).text, "{}");
  await fake.close();
});

Deno.test("typing takes getconfig's ticket and no context_token", async () => {
  const fake = start();
  const { token } = await conversation(fake);
  const config = await call(fake, "getconfig", { ilink_user_id: ALICE, context_token: token });
  assert.equal(config.json.ret, 0);
  const ticket = String(config.json.typing_ticket);
  assert.ok(ticket.length > 0);
  assert.deepEqual((await call(fake, "sendtyping", { ilink_user_id: ALICE, typing_ticket: ticket, status: 1 })).json, {
    ret: 0,
  });
  await call(fake, "sendtyping", { ilink_user_id: ALICE, typing_ticket: ticket, status: 2 });
  assert.deepEqual(fake.typing.map((t) => [t.user, t.status]), [[ALICE, 1], [ALICE, 2]]);
  const bad: Array<[Record<string, unknown>, RegExp]> = [
    [{ ilink_user_id: ALICE, typing_ticket: "wrong", status: 1 }, /typing_ticket is not the one getconfig gave/],
    [
      { ilink_user_id: BOB, typing_ticket: ticket, status: 1 },
      /typing_ticket is not the one getconfig gave for "wxid_bob/,
    ],
    [{ ilink_user_id: ALICE, typing_ticket: ticket, status: 3 }, /status is 3, not 1 or 2/],
    [{ ilink_user_id: ALICE, typing_ticket: ticket, status: 1, context_token: token }, /carries a context_token/],
  ];
  for (const [body, pattern] of bad) {
    assert.notEqual((await call(fake, "sendtyping", body)).json.ret, 0);
    assert.match(fake.takeViolations().join(), pattern);
  }
  assert.equal(fake.typing.length, 2);
  await fake.close();
});

Deno.test("inbound media downloads as AES-128-ECB ciphertext that both key encodings open", async () => {
  const fake = start();
  const image = crypto.getRandomValues(new Uint8Array(1_000));
  const silk = new TextEncoder().encode("\x02#!SILK_V3 fake voice");
  const file = new TextEncoder().encode("a PDF, say");
  fake.userSends({ from: ALICE, image });
  fake.userSends({ from: ALICE, voice: { silk, text: "turn on the light", playtimeMs: 2_300 } });
  fake.userSends({ from: ALICE, file: { name: "bill.pdf", bytes: file }, fullUrl: true });
  const [imageMsg, voiceMsg, fileMsg] = (await poll(fake, "")).updates.msgs;
  const imageItem = imageMsg!.item_list[0]!.image_item!;
  assert.equal(imageMsg!.item_list[0]!.type, 2);
  assert.match(imageItem.media.encrypt_query_param, /[+/=]/, "a param that needs URL-encoding");
  const sealed = new Uint8Array(await (await download(fake, imageItem.media.encrypt_query_param)).arrayBuffer());
  assert.equal(sealed.length, aesEcbPaddedSize(image.length));
  assert.equal(imageItem.mid_size, sealed.length);
  assert.match(imageItem.aeskey, /^[0-9a-f]{32}$/);
  assert.equal(atob(imageItem.media.aes_key).length, 16, "images: base64 of the raw key");
  assert.deepEqual(aesEcbDecrypt(sealed, Buffer.from(imageItem.aeskey, "hex")), image);
  assert.deepEqual(aesEcbDecrypt(sealed, parseMediaAesKey(imageItem.media.aes_key)!), image);
  const voiceItem = voiceMsg!.item_list[0]!.voice_item!;
  assert.deepEqual([voiceItem.text, voiceItem.encode_type, voiceItem.playtime], ["turn on the light", 6, 2_300]);
  assert.match(atob(voiceItem.media.aes_key), /^[0-9a-f]{32}$/, "voice: base64 of the hex key");
  const voiceBytes = new Uint8Array(await (await download(fake, voiceItem.media.encrypt_query_param)).arrayBuffer());
  assert.deepEqual(aesEcbDecrypt(voiceBytes, parseMediaAesKey(voiceItem.media.aes_key)!), silk);
  const fileItem = fileMsg!.item_list[0]!.file_item!;
  assert.deepEqual([fileItem.file_name, fileItem.len], ["bill.pdf", String(file.length)]);
  const fileBytes = new Uint8Array(await (await fetch(fileItem.media.full_url!)).arrayBuffer());
  assert.deepEqual(aesEcbDecrypt(fileBytes, parseMediaAesKey(fileItem.media.aes_key)!), file);
  fake.forgetMedia(fileItem.media.encrypt_query_param);
  const gone = await download(fake, fileItem.media.encrypt_query_param);
  await gone.body?.cancel();
  assert.equal(gone.status, 404);
  assert.deepEqual(fake.violations, [], "expired media is no violation");
  const unknown = await download(fake, "bm9wZQ==");
  await unknown.body?.cancel();
  assert.equal(unknown.status, 404);
  assert.match(fake.takeViolations().join(), /CDN download of the unknown encrypted_query_param "bm9wZQ=="/);
  await fake.close();
});

Deno.test("uploaded media reaches `sent` decrypted, with either key encoding", async () => {
  for (const uploadFullUrl of [false, true]) {
    await using fake = start({ uploadFullUrl, pacing: { sends: 100, windowMs: 1_000 } });
    const { token } = await conversation(fake);
    const picture = crypto.getRandomValues(new Uint8Array(5_000));
    const sentImage = await upload(fake, picture, 1, ALICE);
    assert.equal(sentImage.response.status, 200);
    assert.equal(typeof sentImage.answer.json.upload_full_url, uploadFullUrl ? "string" : "undefined");
    const aesHex = btoa(hex(sentImage.key)); // the official client's form
    const image = {
      type: 2,
      image_item: {
        media: { encrypt_query_param: sentImage.param, aes_key: aesHex, encrypt_type: 1 },
        mid_size: aesEcbPaddedSize(picture.length),
      },
    };
    assert.equal((await reply(fake, ALICE, token, image)).text, "{}");
    const doc = new TextEncoder().encode("minutes of the meeting");
    const sentFile = await upload(fake, doc, 3, ALICE);
    const rawKey = Buffer.from(sentFile.key).toString("base64");
    const media = { encrypt_query_param: sentFile.param, aes_key: rawKey, encrypt_type: 1 };
    const fileItem = { type: 4, file_item: { media, file_name: "minutes.txt", len: String(doc.length) } };
    assert.equal((await reply(fake, ALICE, token, fileItem)).text, "{}");
    assert.deepEqual(fake.sent.map((s) => [s.kind, s.fileName]), [["image", undefined], ["file", "minutes.txt"]]);
    assert.deepEqual(fake.sent[0]!.bytes, picture);
    assert.deepEqual(fake.sent[1]!.bytes, doc);
  }
});

Deno.test("uploads are checked against getuploadurl: sizes, MD5, content type, key, kind", async () => {
  const fake = start({ pacing: { sends: 100, windowMs: 1_000 } });
  const { token } = await conversation(fake);
  const bytes = new TextEncoder().encode("some bytes");
  const wrongMd5 = await upload(fake, bytes, 3, ALICE, { md5: "0".repeat(32) });
  assert.equal(wrongMd5.response.status, 400);
  assert.equal(wrongMd5.response.headers.get("x-error-message"), "decrypted MD5 is not rawfilemd5");
  assert.match(fake.takeViolations().join(), /CDN upload: decrypted MD5 is not rawfilemd5/);
  const wrongType = await upload(fake, bytes, 3, ALICE, { contentType: "application/json" });
  assert.equal(wrongType.response.status, 400);
  assert.match(fake.takeViolations().join(), /CDN upload: Content-Type is application\/json/);
  const declared = await call(fake, "getuploadurl", {
    filekey: "k",
    media_type: 7,
    to_user_id: ALICE,
    rawsize: 10,
    rawfilemd5: md5Hex(bytes),
    filesize: 10,
    aeskey: "not hex",
  });
  assert.equal(declared.json.upload_param, undefined);
  const problems = fake.takeViolations().join("\n");
  assert.match(problems, /media_type is 7, not 1 \(image\) … 4 \(voice\)/);
  assert.match(problems, /filesize is 10, not ceil\(\(rawsize\+1\)\/16\)\*16 = 16/);
  assert.match(problems, /aeskey is not 32 hex characters/);
  const good = await upload(fake, bytes, 3, ALICE);
  const wrongKey = btoa(hex(crypto.getRandomValues(new Uint8Array(16))));
  const asImage = {
    type: 2,
    image_item: { media: { encrypt_query_param: good.param, aes_key: wrongKey, encrypt_type: 1 } },
  };
  assert.deepEqual((await reply(fake, ALICE, token, asImage)).json, { ret: -2 });
  const refused = fake.takeViolations().join("\n");
  assert.match(refused, /image_item names a file uploaded as media_type file/);
  assert.match(refused, /image_item.media.aes_key does not decode .* to the uploaded aeskey/);
  const inbound = {
    type: 4,
    file_item: { media: { encrypt_query_param: "bm9wZQ==", aes_key: wrongKey, encrypt_type: 1 } },
  };
  assert.deepEqual((await reply(fake, ALICE, token, inbound)).json, { ret: -2 });
  assert.match(
    fake.takeViolations().join(),
    /file_item.media.encrypt_query_param is not the x-encrypted-param of an upload/,
  );
  await fake.close();
});

async function qr(fake: FakeWeixin, path: string, init: RequestInit = {}): Promise<Answer> {
  const headers = { "Content-Type": "application/json", "iLink-App-Id": "bot", "iLink-App-ClientVersion": "132105" };
  return answerOf(await fetch(`${fake.baseUrl}/ilink/bot/${path}`, { headers, ...init }));
}

function newCode(fake: FakeWeixin): Promise<Answer> {
  return qr(fake, "get_bot_qrcode?bot_type=3", { method: "POST", body: JSON.stringify({ local_token_list: [] }) });
}

Deno.test("QR login goes wait → scaned → confirmed, and the confirmed token is the bot's", async () => {
  const fake = start({ loggedIn: false });
  assert.deepEqual((await call(fake, "getconfig", { ilink_user_id: ALICE })).json, SESSION_TIMEOUT);
  assert.match(fake.takeViolations().join(), /a token the fake never issued/);
  const code = String((await newCode(fake)).json.qrcode);
  assert.ok(code.length > 0);
  const status = () => qr(fake, `get_qrcode_status?qrcode=${encodeURIComponent(code)}`).then((a) => a.json);
  assert.deepEqual(await status(), { status: "wait" });
  const held = status();
  await new Promise((resolve) => setTimeout(resolve, 50));
  fake.login.scan();
  assert.deepEqual(await held, { status: "scaned" }, "a held poll answers the change");
  const token = fake.login.confirm({ userId: "wxid_owner@im.wechat" });
  assert.deepEqual(await status(), {
    status: "confirmed",
    bot_token: token,
    ilink_bot_id: fake.botId,
    baseurl: fake.baseUrl,
    ilink_user_id: "wxid_owner@im.wechat",
  });
  assert.equal(fake.botToken, token);
  assert.equal((await call(fake, "getconfig", { ilink_user_id: ALICE }, { token })).json.ret, 0);
  assert.equal(fake.login.statusPolls, 3);
  await fake.close();
});

Deno.test("an expired QR code keeps answering expired; a new get_bot_qrcode gives a fresh one", async () => {
  const fake = start({ loggedIn: false });
  const old = String((await newCode(fake)).json.qrcode);
  fake.login.expire();
  for (let i = 0; i < 2; i++) {
    assert.deepEqual((await qr(fake, `get_qrcode_status?qrcode=${old}`)).json, { status: "expired" });
  }
  const fresh = String((await newCode(fake)).json.qrcode);
  assert.notEqual(fresh, old);
  assert.equal(fake.login.status, "wait");
  assert.deepEqual(fake.login.codes, [old, fresh]);
  await qr(fake, "get_qrcode_status?qrcode=nope");
  await qr(fake, "get_bot_qrcode?bot_type=2", { method: "POST", body: "{}" });
  const violations = fake.takeViolations().join("\n");
  assert.match(violations, /get_qrcode_status: qrcode "nope" was never issued/);
  assert.match(violations, /get_bot_qrcode: bot_type is "2", not "3"/);
  await fake.close();
});

Deno.test("an expired session answers -14 to every call and counts them until a new login", async () => {
  const fake = start({ longPollTimeoutMs: 5_000 });
  const held = poll(fake, "");
  await fake.waitForPoll();
  fake.expireSession();
  assert.deepEqual((await held).updates, SESSION_TIMEOUT as unknown as Updates, "a held poll is released with -14");
  for (let i = 0; i < 2; i++) {
    assert.deepEqual((await call(fake, "getconfig", { ilink_user_id: ALICE })).json, SESSION_TIMEOUT);
  }
  assert.equal(fake.callsWhileExpired, 2);
  await newCode(fake);
  const token = fake.login.confirm({ userId: "wxid_owner@im.wechat" });
  assert.equal((await call(fake, "getconfig", { ilink_user_id: ALICE }, { token })).json.ret, 0);
  assert.deepEqual(
    (await call(fake, "getconfig", { ilink_user_id: ALICE })).json,
    SESSION_TIMEOUT,
    "the old token is retired",
  );
  assert.equal(fake.callsWhileExpired, 3);
  assert.deepEqual(fake.violations, [], "calls with an expired or retired token are no violation");
  await fake.close();
});

Deno.test("an outage answers 503 to everything for its length and counts the calls", async () => {
  await using fake = start();
  fake.outage(300);
  assert.equal((await call(fake, "getconfig", { ilink_user_id: ALICE })).status, 503);
  assert.equal((await newCode(fake)).status, 503);
  assert.equal(fake.callsDuringOutage, 2);
  await new Promise((resolve) => setTimeout(resolve, 350));
  assert.equal((await call(fake, "getconfig", { ilink_user_id: ALICE })).json.ret, 0);
  assert.equal(fake.callsDuringOutage, 2);
});

Deno.test("notifystart/notifystop and the bot's own messages", async () => {
  await using fake = start();
  assert.deepEqual((await call(fake, "msg/notifystart")).json, { ret: 0, errmsg: "" });
  await call(fake, "msg/notifystop");
  assert.deepEqual(fake.notifications, ["start", "stop"]);
  fake.botMessage(ALICE, "echo of my own reply");
  const [echo] = (await poll(fake, "")).updates.msgs;
  assert.deepEqual([echo!.message_type, echo!.from_user_id, echo!.context_token], [2, fake.botId, undefined]);
});

Deno.test("unknown paths, methods and bodies are violations; close() fails on any left", async () => {
  const fake = start();
  const unknown = await call(fake, "sendvoice");
  assert.equal(unknown.status, 404);
  const get = await fetch(`${fake.baseUrl}/ilink/bot/getupdates`, { headers: botHeaders() });
  await get.body?.cancel();
  assert.equal(get.status, 404);
  const malformed = await fetch(`${fake.baseUrl}/ilink/bot/sendmessage`, {
    method: "POST",
    headers: botHeaders(),
    body: "{not json",
  });
  await malformed.body?.cancel();
  assert.equal(malformed.status, 400);
  assert.deepEqual(fake.violations, [
    "POST /ilink/bot/sendvoice: no such iLink call",
    "GET /ilink/bot/getupdates: no such iLink call",
    "POST ilink/bot/sendmessage: body is not a JSON object",
  ]);
  await assert.rejects(fake.close(), /the fake WeChat iLink server saw requests that break the protocol/);
  const clean = start();
  await call(clean, "sendvoice");
  assert.equal(clean.takeViolations().length, 1);
  await clean.close();
});
