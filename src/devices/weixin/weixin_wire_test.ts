import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { systemClock } from "../../clock.ts";
import { parseConfig } from "../../config/load.ts";
import { FakeWeixin, messageIdsOf } from "../../../tests/support/fake_weixin.ts";
import {
  aesEcbDecrypt as fakeDecrypt,
  aesEcbEncrypt as fakeEncrypt,
} from "../../../tests/support/fake_weixin_media.ts";
import { IlinkApiError, IlinkClient, IlinkTransportError, isSessionExpired, parseIlinkJson } from "./ilink_client.ts";
import { checkWeixin, weixinKind } from "./kind.ts";
import { plainText, readInbound } from "./weixin_messages.ts";
import { aesEcbDecrypt, aesEcbEncrypt, mediaKey } from "./weixin_media.ts";

Deno.test("uint64 ids are parsed digit for digit; other numbers and look-alikes inside strings are left alone", () => {
  const text = '{"msgs":[{"message_id":7350000000000000001,"seq":1,"item_list":[{"msg_id":7350000000000000002,' +
    '"text_item":{"text":"\\"message_id\\":5"}}]},{"message_id":7350000000000000003}],"ret":0,"svr_id":9}';
  const parsed = parseIlinkJson(text) as {
    msgs: { message_id: string; seq: number; item_list: { msg_id: string; text_item: { text: string } }[] }[];
    svr_id: string;
  };
  assert.deepEqual(parsed.msgs.map((m) => m.message_id), messageIdsOf(text));
  assert.equal(parsed.msgs[0]!.item_list[0]!.msg_id, "7350000000000000002");
  assert.equal(parsed.msgs[0]!.item_list[0]!.text_item.text, '"message_id":5');
  assert.equal(parsed.msgs[0]!.seq, 1);
  assert.equal(parsed.svr_id, "9");
});

Deno.test("the client's headers and base_info pass the strict fake; ret/errcode errors and HTTP failures are told apart", async () => {
  await using fake = FakeWeixin.start({ longPollTimeoutMs: 200 });
  const client = new IlinkClient({ baseUrl: fake.baseUrl, token: () => fake.botToken, clock: systemClock });
  const empty = await client.getUpdates("", 200);
  assert.deepEqual(empty.msgs, []);
  assert.equal(empty.longpolling_timeout_ms, 200);
  await assert.rejects(
    client.sendMessage({ to_user_id: "wxid_nobody@im.wechat" }),
    (error: Error) =>
      error instanceof IlinkApiError && error.code === -2 && /sendmessage answered ret -2/.test(error.message),
  );
  fake.takeViolations(); // provoked on purpose: a send to nobody
  const stale = new IlinkClient({ baseUrl: fake.baseUrl, token: () => fake.botToken, clock: systemClock });
  fake.expireSession();
  await assert.rejects(stale.getUpdates(empty.get_updates_buf ?? "", 200), (error: Error) => isSessionExpired(error));
  fake.outage(500);
  await assert.rejects(
    client.getTypingTicket("wxid_a@im.wechat"),
    (error: Error) =>
      error instanceof IlinkTransportError && !error.timedOut && /getconfig: HTTP 503/.test(error.message),
  );
  const none = new IlinkClient({ baseUrl: fake.baseUrl, token: () => undefined, clock: systemClock });
  await assert.rejects(none.getUpdates("", 200), /no WeChat bot token: run `homed weixin login`/);
});

Deno.test("AES-128-ECB matches the fake's; a media key is read in both encodings", () => {
  const key = crypto.getRandomValues(new Uint8Array(16));
  const plain = new TextEncoder().encode("sixteen bytes!!!");
  const sealed = aesEcbEncrypt(plain, key);
  assert.equal(sealed.length, 32, "PKCS#7 adds a whole block to 16 bytes");
  assert.deepEqual(fakeDecrypt(sealed, key), plain);
  assert.deepEqual(aesEcbDecrypt(fakeEncrypt(plain, key), key), plain);
  const hex = Buffer.from(key).toString("hex");
  assert.deepEqual(mediaKey({ aesKey: Buffer.from(key).toString("base64") }), key, "base64 of the raw bytes");
  assert.deepEqual(mediaKey({ aesKey: Buffer.from(hex).toString("base64") }), key, "base64 of the hex string");
  assert.deepEqual(mediaKey({ hexKey: hex, aesKey: "bm90IGEga2V5" }), key, "image_item.aeskey first");
  assert.equal(mediaKey({ aesKey: "bm90IGEga2V5" }), undefined);
});

Deno.test("Markdown becomes plain text that keeps the words; inbound items are read in order", () => {
  assert.equal(
    plainText(
      "# Plan\n\n- **buy** milk\n- call _mum_\n\n> quoted\n\n```\nconst x = 1;\n```\n| a | b |\n|---|---|\n| 1 | 2 |",
    ),
    "Plan\n\n• buy milk\n• call mum\n\nquoted\n\nconst x = 1;\na  b\n1  2",
  );
  assert.equal(plainText("snake_case_name and 2*3*4 stay"), "snake_case_name and 2*3*4 stay");
  assert.equal(
    plainText("see [docs](https://x.example/a) and ~~old~~ `code`"),
    "see docs (https://x.example/a) and old code",
  );
  const read = readInbound({
    item_list: [{ type: 1, text_item: { text: "look" } }, { type: 11 }, {
      type: 3,
      voice_item: { text: "and listen" },
    }],
  });
  assert.deepEqual(read, { text: "look\nand listen", attachments: [], skipped: [11] });
});

Deno.test("the kind: rights name both hosts, the token is a secret, doctor says how to log in", async () => {
  const { config } = parseConfig({
    text: `weixin: ${weixinKind.example}\ndaemon: { data_dir: /tmp/homed-weixin-doctor-none }`,
    location: { path: undefined, origin: "embedded defaults" },
    readEnv: () => "a-token-of-twenty-characters",
    cwd: "/",
  });
  const section = weixinKind.section(config)!;
  assert.deepEqual(weixinKind.rights!(section, config).net, [
    "ilinkai.weixin.qq.com:443",
    "novac2c.cdn.weixin.qq.com:443",
  ]);
  assert.deepEqual(weixinKind.secrets!(section), ["a-token-of-twenty-characters"]);
  assert.deepEqual((await checkWeixin(section, config.daemon.data_dir)).map((check) => check.ok), [true]);
  const [missing] = await checkWeixin({ ...section, token: "" }, config.daemon.data_dir);
  assert.equal(missing!.ok, false);
  assert.match(missing!.detail, /run `homed weixin login`.*weixin\.token/);
});
