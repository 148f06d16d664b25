import assert from "node:assert/strict";
import type { TurnResult } from "../../io/device.ts";
import type { InputEvent, OutputEvent } from "../../io/event.ts";
import { FakeWeixin, type FakeWeixinOptions } from "../../../tests/support/fake_weixin.ts";
import { waitFor } from "../../../tests/support/wait.ts";
import { plainText } from "./weixin_messages.ts";
import { channelOf, conversationOf, type WeixinDevice, WeixinUndeliverable } from "./weixin_device.ts";
import { type DeviceOverrides, MEMBER, OWNER, recorded, startWeixinDevice, STRANGER } from "./harness_test.ts";

interface Harness {
  fake: FakeWeixin;
  dataDir: string;
  device: WeixinDevice;
  inputs: InputEvent[];
  lines: string[];
  ready: { count: number };
  /** Starts another device on the same data dir (a restart). */
  another(): Promise<WeixinDevice>;
  close(): Promise<void>;
}

async function harness(fakeOptions: FakeWeixinOptions = {}, overrides: DeviceOverrides = {}): Promise<Harness> {
  const fake = FakeWeixin.start({ longPollTimeoutMs: 400, ...fakeOptions });
  const dataDir = await Deno.makeTempDir({ prefix: "homed-weixin-" });
  const into = recorded();
  const devices: WeixinDevice[] = [];
  const make = async () => {
    const { device } = await startWeixinDevice(fake, dataDir, {
      media: { read: (id) => Promise.resolve(id === "held-image" ? IMAGE : undefined) },
      ...overrides,
    }, into);
    devices.push(device);
    return device;
  };
  const device = await make();
  return {
    fake,
    dataDir,
    device,
    ...into,
    another: make,
    async close() {
      for (const each of devices) await each.stop();
      await fake.close();
      await Deno.remove(dataDir, { recursive: true });
    },
  };
}

const IMAGE = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, ...new Array(300).fill(7)]);

function reply(to: InputEvent, text: string): OutputEvent {
  return {
    target: to.source,
    type: "message",
    payload: { text },
    replyTo: { id: to.id, source: to.source, sender: to.sender, ...(to.handle ? { handle: to.handle } : {}) },
  };
}

Deno.test("the owner and listed users become inputs with their trust; strangers and the bot's own messages do not", async () => {
  const h = await harness();
  try {
    const first = h.fake.userSends({ from: OWNER, text: "hello" });
    const second = h.fake.userSends({ from: OWNER, text: "again" });
    h.fake.userSends({ from: MEMBER, text: "from the family" });
    h.fake.userSends({ from: STRANGER, text: "let me in" });
    h.fake.botMessage(OWNER, "an echo of the bot's own");
    await waitFor(() => h.inputs.length >= 3, "three inputs");
    await waitFor(() => h.fake.pending === 0 && h.device.status().ignored === 1, "the stranger counted");
    assert.deepEqual(h.inputs.map((input) => [input.source, input.sender, input.trust, input.payload.text]), [
      [`weixin:private:${OWNER}`, OWNER, "owner", "hello"],
      [`weixin:private:${OWNER}`, OWNER, "owner", "again"],
      [`weixin:private:${MEMBER}`, MEMBER, "household", "from the family"],
    ]);
    // uint64 ids beyond 2^53 that a plain JSON.parse rounds together stay distinct, digit for digit.
    assert.deepEqual(h.inputs.slice(0, 2).map((input) => input.payload.message_id), [first, second]);
    assert.deepEqual(h.inputs.slice(0, 2).map((input) => input.handle?.message_id), [first, second]);
    assert.ok(h.inputs.every((input) => typeof input.handle?.context_token === "string"));
    assert.ok(h.lines.some((line) => line.includes("Ignored a WeChat message") && line.includes(STRANGER)));
    const status = h.device.status();
    assert.deepEqual(JSON.parse(JSON.stringify(status)), status, "status is plain JSON");
    assert.equal(status.inputs, 3);
    assert.equal(status.logged_in, true);
    assert.equal(status.connected, true);
    assert.ok(!JSON.stringify(status).includes(h.fake.botToken!), "the token is never in status");
    assert.equal(h.device.tools(), h.device.tools(), "the same tools on every call");
    assert.equal(h.device.tools()[0]?.allow, "anyone");
  } finally {
    await h.close();
  }
});

Deno.test("channels: weixin:private:<user id> only", () => {
  assert.deepEqual(conversationOf(`weixin:private:${OWNER}`), { kind: "private", id: OWNER });
  assert.equal(conversationOf("weixin:group:123"), undefined);
  assert.equal(conversationOf("weixin:private:not-a-user"), undefined);
  // Any id the config takes is a chat (a reply to it is never refused for its spelling).
  assert.deepEqual(conversationOf("weixin:private:wx.user-1@im.wechat"), {
    kind: "private",
    id: "wx.user-1@im.wechat",
  });
  assert.equal(channelOf({ kind: "private", id: OWNER }), `weixin:private:${OWNER}`);
});

Deno.test("a long reply is split in order within 2000 characters, paced, one item per send, with the message's token", async () => {
  const h = await harness();
  try {
    h.fake.userSends({ from: OWNER, text: "tell me a long story" });
    await waitFor(() => h.inputs.length === 1, "the input");
    const paragraphs = Array.from({ length: 5 }, (_, n) => `## Part ${n}\n**${n}** ${"word ".repeat(180)}`);
    const markdown = paragraphs.join("\n\n");
    await h.device.send(reply(h.inputs[0]!, markdown));
    const sent = h.fake.sent;
    assert.ok(sent.length >= 3, `${sent.length} sends`);
    assert.ok(sent.every((each) => [...each.text!].length <= 2_000));
    const words = (text: string) => text.replace(/\s+/g, " ").trim();
    assert.equal(words(sent.map((each) => each.text).join(" ")), words(plainText(markdown)), "in order, nothing lost");
    assert.ok(!sent.some((each) => /\*\*|^##/m.test(each.text!)), "no Markdown markers");
    assert.equal(new Set(sent.map((each) => each.clientId)).size, sent.length, "a fresh client_id each");
    assert.ok(sent.every((each) => each.contextToken === h.inputs[0]!.handle!.context_token));
    for (let i = 1; i < sent.length; i++) {
      assert.ok(sent[i]!.at - sent[i - 1]!.at >= 550, `paced: ${sent[i]!.at - sent[i - 1]!.at} ms`);
    }
    assert.deepEqual(h.fake.refusals, []);
    assert.equal(h.device.status().sent, sent.length);
  } finally {
    await h.close();
  }
});

Deno.test("a message homed starts uses the latest token; past its limit, or to someone who never wrote, it is undeliverable", async () => {
  const h = await harness({ sendsPerContextToken: 3, pacing: { sends: 100, windowMs: 1_000 } }, {
    settings: { minSendIntervalMs: 50 },
    sendsPerToken: 3,
  });
  try {
    h.fake.userSends({ from: OWNER, text: "first" });
    h.fake.userSends({ from: OWNER, text: "second" });
    await waitFor(() => h.inputs.length === 2, "two inputs");
    const latest = h.inputs[1]!.handle!.context_token;
    const notice = (text: string): OutputEvent => ({
      target: channelOf({ kind: "private", id: OWNER }),
      type: "message",
      payload: { text },
    });
    for (const text of ["reminder 1", "reminder 2", "reminder 3"]) await h.device.send(notice(text));
    assert.deepEqual(h.fake.sent.map((each) => each.contextToken), [latest, latest, latest], "the latest token");
    // A reply to the first message still has its own token's sends.
    await h.device.send(reply(h.inputs[0]!, "answer to the first"));
    assert.equal(h.fake.sent.at(-1)!.contextToken, h.inputs[0]!.handle!.context_token);
    await assert.rejects(h.device.send(notice("reminder 4")), (error: Error) => {
      assert.ok(error instanceof WeixinUndeliverable);
      assert.match(error.message, new RegExp(`${OWNER}.*only within a while after the person's last message`));
      return true;
    });
    await assert.rejects(
      h.device.send({ target: channelOf({ kind: "private", id: MEMBER }), type: "message", payload: { text: "hi" } }),
      /wxid_member@im\.wechat.*have not written/,
    );
    const status = h.device.status();
    assert.equal(status.undeliverable, 2);
    assert.ok(h.lines.filter((line) => line.includes("Could not deliver")).length === 2, "each one logged");
    assert.deepEqual(h.fake.refusals, [], "the device knew the limit: the service refused nothing");
  } finally {
    await h.close();
  }
});

Deno.test("a token the service refuses (ret -2) makes a homed-started message undeliverable, naming the user", async () => {
  const h = await harness({ sendsPerContextToken: 1, pacing: { sends: 100, windowMs: 1_000 } }, {
    settings: { minSendIntervalMs: 50 },
  });
  try {
    h.fake.userSends({ from: OWNER, text: "hi" });
    await waitFor(() => h.inputs.length === 1, "the input");
    const notice = {
      target: channelOf({ kind: "private", id: OWNER }),
      type: "message" as const,
      payload: { text: "x" },
    };
    await h.device.send(notice);
    await assert.rejects(h.device.send(notice), new RegExp(`${OWNER}.*written as much as WeChat allows`));
    assert.equal(h.device.status().undeliverable, 1);
    const violations = h.fake.takeViolations();
    assert.equal(violations.length, 1, violations.join("\n"));
    assert.match(violations[0]!, /already carried 1 sends/);
  } finally {
    await h.close();
  }
});

Deno.test("typing shows when an input is handed in and stops when its turn is done, without a context token", async () => {
  const h = await harness();
  try {
    h.fake.userSends({ from: OWNER, text: "think about it" });
    await waitFor(() => h.fake.typing.length === 1, "typing on");
    const result: TurnResult = { eventId: h.inputs[0]!.id, reply: "done", channel: h.inputs[0]!.source, rounds: 1 };
    h.device.onTurnEvent({ type: "done", eventId: h.inputs[0]!.id, result });
    await waitFor(() => h.fake.typing.length === 2, "typing off");
    assert.deepEqual(h.fake.typing.map((each) => [each.user, each.status]), [[OWNER, 1], [OWNER, 2]]);
  } finally {
    await h.close();
  }
});

Deno.test("media in: images and files decrypted through locate (both key encodings); a voice transcript is text", async () => {
  const h = await harness();
  try {
    const file = new TextEncoder().encode("the lease, page 1");
    const silk = new Uint8Array([0x02, ...new TextEncoder().encode("#!SILK_V3"), 1, 2, 3]);
    h.fake.userSends({ from: OWNER, image: IMAGE });
    h.fake.userSends({ from: OWNER, file: { name: "lease.txt", bytes: file }, fullUrl: true });
    h.fake.userSends({ from: OWNER, voice: { silk, text: "turn on the light" } });
    h.fake.userSends({ from: OWNER, voice: { silk } });
    await waitFor(() => h.inputs.length === 4, "four inputs");
    const [image, document, spoken, voice] = h.inputs;
    const attachment = (input: InputEvent) => (input.payload.attachments as Record<string, unknown>[])[0]!;
    assert.equal(attachment(image!).kind, "image");
    assert.deepEqual(await h.device.locate(image!, { kind: "image", file: String(attachment(image!).file) }), IMAGE);
    assert.deepEqual([attachment(document!).kind, attachment(document!).name, attachment(document!).size], [
      "file",
      "lease.txt",
      file.length,
    ]);
    assert.deepEqual(
      await h.device.locate(document!, { kind: "file", file: String(attachment(document!).file) }),
      file,
    );
    assert.equal(spoken!.payload.text, "turn on the light");
    assert.equal(spoken!.payload.attachments, undefined, "WeChat's transcript: nothing to download");
    assert.equal(attachment(voice!).kind, "audio");
    assert.deepEqual(await h.device.locate(voice!, { kind: "audio", file: String(attachment(voice!).file) }), silk);
    assert.equal(await h.device.locate(voice!, { kind: "audio", file: "unknown" }), undefined);
  } finally {
    await h.close();
  }
});

Deno.test("media out: an image is uploaded encrypted and reaches WeChat as the same bytes, then its caption", async () => {
  const h = await harness({ uploadFullUrl: false });
  try {
    h.fake.userSends({ from: OWNER, text: "show me" });
    await waitFor(() => h.inputs.length === 1, "the input");
    await h.device.send({
      ...reply(h.inputs[0]!, "the **camera**"),
      type: "image",
      payload: { media: "held-image", text: "the **camera**" },
    });
    assert.deepEqual(h.fake.sent.map((each) => each.kind), ["image", "text"]);
    assert.deepEqual(h.fake.sent[0]!.bytes, IMAGE);
    assert.equal(h.fake.sent[1]!.text, "the camera");
    await assert.rejects(
      h.device.send({ ...reply(h.inputs[0]!, ""), type: "image", payload: { media: "gone" } }),
      /"gone" is not held by homed/,
    );
  } finally {
    await h.close();
  }
});

Deno.test("without a token the device starts, says how to log in, and polls nothing", async () => {
  const h = await harness({ loggedIn: false }, { settings: { token: "" } });
  try {
    await new Promise((resolve) => setTimeout(resolve, 300));
    const status = h.device.status();
    assert.equal(status.logged_in, false);
    assert.match(String(status.problem), /not logged in: run `homed weixin login`/);
    assert.equal(h.fake.polls, 0);
    assert.equal(h.device.canSend({ target: `weixin:private:${OWNER}`, type: "message", payload: {} }), false);
    await assert.rejects(
      h.device.send({ target: `weixin:private:${OWNER}`, type: "message", payload: { text: "x" } }),
      /not logged in: run `homed weixin login`/,
    );
    await assert.rejects(
      h.device.send({ target: "weixin", type: "message", payload: { text: "x" } }),
      /weixin:private:/,
    );
  } finally {
    await h.close();
  }
});
