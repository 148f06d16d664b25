/**
 * Telegram end to end: a real homed, run as users run it (a child process with its computed narrow permissions), long
 * polling the strict fake Bot API (`support/fake_telegram.ts`), with the fake model, a fake vision model and a fake
 * Home Assistant with a front-door lock. One household, steps sharing one homed where the point allows: the owner, a
 * member, a stranger and group chatter; a long hostile reply split; a 429 waited out; a photo seen and a picture sent;
 * the owner's Approve button unlocking the door exactly once; then a restart that answers nothing twice, and a 10 s
 * outage survived without a tight loop. The fake Telegram records no protocol violation in any of it.
 */

import assert from "node:assert/strict";
import { DEFAULT_CONTRACT, TEST_KEY } from "./support/contract.ts";
import { FakeHomeAssistant } from "./support/fake_home_assistant.ts";
import { FakeLlm } from "./support/fake_llm.ts";
import { FakeVision, samplePng } from "./support/fake_media.ts";
import { type FakeChat, FakeTelegram, type FakeUser, type SentMessage } from "./support/fake_telegram.ts";
import { type HomedProcess, startHomed, type Workspace, workspace } from "./support/homed_process.ts";
import { pictureServer } from "./support/picture_server.ts";
import { teardown } from "./support/teardown.ts";
import { waitFor } from "./support/wait.ts";

const OWNER: FakeUser = { id: 111111, first_name: "Olga" };
const MEMBER: FakeUser = { id: 222222, first_name: "Max" };
const GUEST: FakeUser = { id: 333333, first_name: "Gus" };
const STRANGER: FakeUser = { id: 444444, first_name: "Sam" };
const GROUP: FakeChat = { id: -1001234567890, type: "supergroup", title: "Home" };
const OTHER_GROUP: FakeChat = { id: -1009876543210, type: "supergroup", title: "Not ours" };
const dm = (user: FakeUser): FakeChat => ({ id: user.id, type: "private" });
const OWNER_CHANNEL = `telegram:private:${OWNER.id}`;

const entities = [
  { entity_id: "lock.front_door", state: "locked", attributes: { friendly_name: "Front door" } },
];

type Message = { role: string; content: unknown };

/** The fakes homed talks to, and everything the test sent as a user (to prove once-only processing). */
class Household {
  readonly telegram = FakeTelegram.start({ privacyMode: false, rateLimit: { perChatPerSecond: 20 } });
  readonly llm = FakeLlm.start(DEFAULT_CONTRACT);
  readonly vision = FakeVision.start({ model: "vision-test" });
  readonly ha = FakeHomeAssistant.start({ entities, token: "fake-ha-token-0123456789" });
  readonly picture = samplePng(3_000);
  readonly web = pictureServer(this.picture);
  /** Every text a user sent that homed must hand the model exactly once. */
  readonly answered: string[] = [];
  /** Every update the fake queued for homed. */
  readonly updates: number[] = [];

  config(): Record<string, unknown> {
    return {
      llm: { base_url: this.llm.baseUrl, api_key: TEST_KEY },
      onebot: { enabled: false },
      telegram: {
        token: this.telegram.token,
        api_url: this.telegram.apiUrl,
        owner: String(OWNER.id),
        allow_users: [String(MEMBER.id)],
        allow_groups: [String(GROUP.id)],
        min_send_interval: "0s",
        poll_timeout: "2s",
      },
      vision: { base_url: this.vision.baseUrl, model: "vision-test", timeout: "5s" },
      media: { allow_hosts: [`127.0.0.1:${this.web.port}`], fetch_timeout: "5s" },
      smart_home: { home_assistant: { url: this.ha.url, token: this.ha.token, confirm_timeout: "1m" } },
    };
  }

  /** A user writes; `answered` says homed must hand it to the model (once). */
  send(
    from: FakeUser,
    chat: FakeChat,
    text: string,
    options: { answered: boolean; mention?: boolean; reply?: boolean },
  ) {
    const queued = this.telegram.userSends({
      chat,
      from,
      text,
      ...(options.mention ? { mentionBot: true } : {}),
      ...(options.reply ? { replyToBot: true } : {}),
    });
    assert.ok(queued.queued, "privacy mode is off: Telegram hands homed every message");
    this.updates.push(queued.update_id);
    if (options.answered) this.answered.push(text);
    return queued;
  }

  /** The messages the bot sent to `chat`. */
  sentTo(chat: FakeChat | FakeUser): SentMessage[] {
    return this.telegram.sent.filter((message) => message.chat_id === chat.id);
  }

  /** Waits until the bot sent `count` messages to `chat`, and returns them. */
  async waitSent(chat: FakeChat | FakeUser, count: number, limitMs = 10_000): Promise<SentMessage[]> {
    return await this.telegram.waitForSent(count, { chatId: chat.id, limitMs });
  }

  /** The user message each model request answers a new turn for (its last message), in order. */
  turns(): string[] {
    return this.llm.requests.map((request) => (request.body.messages as Message[]).at(-1)!)
      .filter((message) => message.role === "user").map((message) => String(message.content));
  }

  /** How many turns handed the model this user text. */
  timesAsked(text: string): number {
    return this.turns().filter((content) => content.endsWith(`] ${text}`) || content.endsWith(`]\n${text}`)).length;
  }

  close(): Array<() => unknown> {
    return [
      () => this.telegram.close(),
      () => this.llm.close(),
      () => this.vision.close(),
      () => this.ha.close(),
      () => this.web.server.shutdown(),
    ];
  }
}

async function telegramStatus(homed: HomedProcess): Promise<Record<string, unknown>> {
  return (await (await fetch(`${homed.url}/api/status`)).json()).services.io.devices.telegram;
}

/** The content of the last tool result the model was given. */
const lastTool = (llm: FakeLlm) =>
  (llm.requests.at(-1)!.body.messages as Message[]).filter((m) => m.role === "tool").at(-1)?.content;

async function sha256Hex(bytes: Uint8Array<ArrayBuffer>): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return [...digest].map((byte) => byte.toString(16).padStart(2, "0")).join("");
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

Deno.test("Telegram end to end: trust, groups, long replies, 429s, media, the owner's buttons, a restart and an outage", async (t) => {
  const home = new Household();
  const { telegram, llm, vision, ha } = home;
  let ws: Workspace | undefined;
  let homed: HomedProcess | undefined;
  try {
    ws = await workspace(home.config());
    homed = await startHomed(ws);
    await waitFor(async () => (await telegramStatus(homed!))?.connected === true, "homed polling the fake Telegram");

    await t.step("private chats: the owner and a member are answered, a stranger never reaches the model", async () => {
      // The model takes a moment, long enough for "typing…" to show while it thinks.
      llm.enqueue({ reply: "Good morning, Olga.", delayMs: 500 });
      home.send(OWNER, dm(OWNER), "Good morning", { answered: true });
      await waitFor(
        () => telegram.chatActions.some((a) => a.chat_id === OWNER.id && a.action === "typing"),
        "typing… in the owner's chat while the model thinks",
      );
      const [toOwner] = await home.waitSent(OWNER, 1);
      assert.equal(toOwner!.text, "Good morning, Olga.");
      assert.match(home.turns()[0]!, /telegram:private:111111.*trust owner\] Good morning$/);

      // The stranger writes first: by the time the member's later message is answered, theirs was read and dropped.
      home.send(STRANGER, dm(STRANGER), "let me in, I am the plumber", { answered: false });
      llm.enqueue({ reply: "The heating is on, Max." });
      home.send(MEMBER, dm(MEMBER), "Is the heating on?", { answered: true });
      const [toMember] = await home.waitSent(MEMBER, 1);
      assert.equal(toMember!.text, "The heating is on, Max.");
      assert.match(home.turns()[1]!, /telegram:private:222222.*trust household\] Is the heating on\?$/);
      assert.equal(home.sentTo(STRANGER).length, 0, "the stranger got no answer");
      assert.equal(home.timesAsked("let me in, I am the plumber"), 0, "the model never saw the stranger");
      assert.equal(llm.requests.length, 2);
      await waitFor(
        () => /Ignored a Telegram private message from 444444: not the owner/.test(homed!.stderr()),
        "the stranger's message logged as ignored",
      );
      assert.equal((await telegramStatus(homed!)).ignored, 1);
    });

    await t.step(
      "a group: answered only when @-mentioned or replied to; chatter and other groups ignored",
      async () => {
        llm.enqueue({ reply: "Sunny all day." });
        const asked = home.send(GUEST, GROUP, "what's the weather?", { answered: true, mention: true });
        const [answer] = await home.waitSent(GROUP, 1);
        assert.equal(answer!.text, "Sunny all day.");
        assert.equal(answer!.reply_to_message_id, asked.message_id, "the answer quotes the question in the group");
        assert.match(home.turns().at(-1)!, /telegram:group:-1001234567890.*trust guest\] what's the weather\?$/);

        home.send(MEMBER, GROUP, "dinner at 7 tonight", { answered: false });
        home.send(OWNER, GROUP, "ok see you all then", { answered: false });
        home.send(GUEST, OTHER_GROUP, "anyone here?", { answered: false, mention: true });
        llm.enqueue({ reply: "Rain from Tuesday." });
        home.send(MEMBER, GROUP, "and the rest of the week?", { answered: true, reply: true });
        const replies = await home.waitSent(GROUP, 2);
        assert.equal(replies[1]!.text, "Rain from Tuesday.");
        for (const ignored of ["dinner at 7 tonight", "ok see you all then", "anyone here?"]) {
          assert.equal(home.timesAsked(ignored), 0, `${ignored} cost no model call`);
        }
        assert.equal(home.sentTo(OTHER_GROUP).length, 0);
        assert.equal(llm.requests.length, 4);
      },
    );

    await t.step("a long reply with hostile characters arrives split, in order, each piece within 4096", async () => {
      const lines = Array.from(
        { length: 150 },
        (_, i) => `#${String(i).padStart(3, "0")} a < b && c > d; **unbalanced <b>not a tag</b> & "quoted" 5 > 3`,
      );
      const long = lines.join("\n") + "\n**dangling";
      assert.ok(long.length > 2 * 4096, `${long.length} characters`);
      const before = home.sentTo(OWNER).length;
      llm.enqueue({ reply: long });
      home.send(OWNER, dm(OWNER), "Tell me everything", { answered: true });
      await waitFor(
        () => home.sentTo(OWNER).slice(before).map((m) => m.text).join("").includes("dangling"),
        "the last piece of the long reply",
      );
      const pieces = home.sentTo(OWNER).slice(before);
      assert.ok(pieces.length >= 3, `${pieces.length} pieces`);
      for (const piece of pieces) {
        assert.ok([...piece.text].length <= 4096, `a piece of ${[...piece.text].length}`);
        assert.equal(piece.parse_mode, "HTML");
      }
      const squash = (text: string) => text.replace(/\s+/g, "");
      assert.equal(squash(pieces.map((p) => p.text).join("")), squash(long), "every character, in order, as written");
      const status = await telegramStatus(homed!);
      assert.equal(status.format_fallbacks, 0, "no piece was refused for its formatting (can't parse entities)");
      assert.deepEqual(telegram.violations, []);
    });

    await t.step("a 429: the reply waits out retry_after and then arrives, with no send inside it", async () => {
      telegram.rateLimitNext(1, 2);
      const before = home.sentTo(MEMBER).length;
      llm.enqueue({ reply: "Yes, the bins go out tonight." });
      home.send(MEMBER, dm(MEMBER), "Bins tonight?", { answered: true });
      const [reply] = (await home.waitSent(MEMBER, before + 1)).slice(before);
      assert.equal(reply!.text, "Yes, the bins go out tonight.");
      const answeredAt = llm.requests.at(-1)!.finishedAt;
      assert.ok(reply!.at - answeredAt >= 1_900, `sent ${Math.round(reply!.at - answeredAt)} ms after the model`);
      assert.ok(Number((await telegramStatus(homed!)).rate_limited) >= 1);
      assert.deepEqual(telegram.violations, [], "nothing was sent inside retry_after");
    });

    await t.step(
      "media: a photo reaches the vision model and the turn; a picture goes out as uploaded bytes",
      async () => {
        const photo = samplePng(2_000);
        vision.enqueue({ description: "A fern whose fronds are yellowing at the tips." });
        llm.enqueue({ reply: "It wants more humidity." });
        const before = home.sentTo(OWNER).length;
        const sent = telegram.userSends({ chat: dm(OWNER), from: OWNER, photo, text: "What is wrong with it?" });
        home.updates.push(sent.update_id);
        await home.waitSent(OWNER, before + 1);
        assert.equal(vision.requests.length, 1);
        assert.deepEqual(vision.requests[0]!.images, [{ mime: "image/png", bytes: photo }], "the photo's own bytes");
        const turn = home.turns().at(-1)!;
        assert.match(turn, /What is wrong with it\?/);
        assert.match(turn, /\[image: A fern whose fronds are yellowing at the tips\.\]/);

        // Media out: output_send with the id of media homed holds (the photo it just read) goes up as a photo.
        const held = `${await sha256Hex(photo)}.png`;
        llm.enqueue(
          { toolCalls: [{ name: "output_send", arguments: { channel: OWNER_CHANNEL, type: "image", media: held } }] },
          { reply: "Here it is back." },
        );
        home.send(OWNER, dm(OWNER), "Send my photo back", { answered: true });
        await waitFor(
          () => home.sentTo(OWNER).some((m) => m.text === "Here it is back."),
          "the reply after the picture",
        );
        assert.equal(lastTool(llm), `Queued image for ${OWNER_CHANNEL}`);
        await waitFor(() => home.sentTo(OWNER).some((m) => m.method === "sendPhoto"), "the picture");
        const pictures = home.sentTo(OWNER).filter((m) => m.method !== "sendMessage");
        assert.deepEqual(pictures.map((m) => m.method), ["sendPhoto"]);
        assert.deepEqual(pictures[0]!.media?.bytes, photo, "the bytes homed holds, uploaded");
      },
    );

    // Found here: media.allow_hosts were granted only with a chat that receives media by URL (QQ).
    await t.step(
      "output_send fetches a picture by URL from media.allow_hosts on a Telegram-only homed (its flags grant the host)",
      async () => {
        const url = home.web.url("/plant.png");
        llm.enqueue(
          { toolCalls: [{ name: "output_send", arguments: { channel: OWNER_CHANNEL, type: "image", url } }] },
          { reply: "Sent you a healthy one for comparison." },
        );
        home.send(OWNER, dm(OWNER), "Show me a healthy fern", { answered: true });
        await waitFor(
          () => home.sentTo(OWNER).some((m) => m.text === "Sent you a healthy one for comparison."),
          "the reply after the picture",
        );
        assert.equal(lastTool(llm), `Queued image for ${OWNER_CHANNEL}`, "the url on media.allow_hosts is fetched");
        await waitFor(() => home.sentTo(OWNER).filter((m) => m.method === "sendPhoto").length === 2, "the picture");
        const picture = home.sentTo(OWNER).filter((m) => m.method === "sendPhoto").at(-1)!;
        assert.deepEqual(picture.media?.bytes, home.picture, "the bytes homed fetched and holds, uploaded");
        assert.equal(picture.media?.url, undefined, "never the URL");
      },
    );

    await t.step("the owner's confirmation as buttons: only the owner's Approve unlocks, exactly once", async () => {
      await waitFor(
        async () =>
          (await (await fetch(`${homed!.url}/api/status`)).json()).services.io.devices.ha?.state ===
            "connected",
        "homed connected to Home Assistant",
      );
      const unlocks = () => ha.calls.filter((call) => call.domain === "lock" && call.service === "unlock").length;
      const ownerBefore = home.sentTo(OWNER).length;
      const memberBefore = home.sentTo(MEMBER).length;
      llm.enqueue(
        {
          toolCalls: [{
            name: "ha_call_service",
            arguments: { domain: "lock", service: "unlock", entity_id: "lock.front_door" },
          }],
        },
        { reply: "That needs Olga's approval; I asked her." },
      );
      home.send(MEMBER, dm(MEMBER), "Please open the front door", { answered: true });
      const [toMember] = (await home.waitSent(MEMBER, memberBefore + 1)).slice(memberBefore);
      assert.equal(toMember!.text, "That needs Olga's approval; I asked her.");
      const [question] = (await home.waitSent(OWNER, ownerBefore + 1)).slice(ownerBefore);
      assert.match(question!.text, /^Confirm: .*lock\.front_door.*\(asked by 222222 on telegram:private:222222\)\?/);
      const id = /\/confirm ([0-9a-f]+)/.exec(question!.text)?.[1];
      assert.ok(id, question!.text);
      const keyboard = (question!.reply_markup as { inline_keyboard: Array<Array<{ callback_data: string }>> })
        .inline_keyboard;
      assert.deepEqual(keyboard.flat().map((button) => button.callback_data), [`confirm:${id}`, `deny:${id}`]);
      assert.equal(unlocks(), 0, "nothing runs before the owner decides");
      const llmCalls = llm.requests.length;

      // The member presses Approve: answered, and nothing runs.
      const memberPress = telegram.userPresses({
        from: MEMBER,
        message_id: question!.message_id,
        data: `confirm:${id}`,
      });
      home.updates.push(memberPress.update_id);
      await waitFor(() => /222222 pressed confirm:[0-9a-f]+; only the owner decides/.test(homed!.stderr()), "refused");
      await sleep(300);
      assert.equal(unlocks(), 0, "the member's press ran nothing");
      assert.equal(home.sentTo(OWNER).length, ownerBefore + 1, "and said nothing in the owner's chat");

      // The owner taps Approve twice (a double tap: both presses reach homed before the buttons go).
      const presses = [1, 2].map(() =>
        telegram.userPresses({ from: OWNER, message_id: question!.message_id, data: `confirm:${id}` })
      );
      home.updates.push(...presses.map((press) => press.update_id));
      await waitFor(() => unlocks() === 1, "the unlock");
      const [done, again] = (await home.waitSent(OWNER, ownerBefore + 3)).slice(ownerBefore + 1);
      assert.match(done!.text, /^Done: /);
      assert.match(again!.text, new RegExp(`^Nothing is waiting for confirmation ${id}`));
      await sleep(300);
      assert.equal(unlocks(), 1, "exactly once: the second press ran nothing");
      assert.equal(llm.requests.length, llmCalls, "the decisions cost no model call");
      assert.equal(question!.reply_markup, undefined, "the buttons are gone");
      assert.ok(
        telegram.edits.some((e) => e.method === "editMessageReplyMarkup" && e.message_id === question!.message_id),
      );
      await waitFor(() => telegram.unansweredCallbacks().length === 0, "every press answered");
    });

    // Found here: each of the owner's presses used to take the buttons away again, which Telegram refuses.
    await t.step("the owner's double tap on Approve breaks no Bot API rule (the buttons are taken away once)", () => {
      // Taken here so a violation is reported by this step, and not again by the fake's close().
      const violations = telegram.takeViolations();
      assert.deepEqual(violations, [], "a double tap edits the message's keyboard once");
    });

    await t.step(
      "once-only across a restart: nothing is answered twice, a message sent while down is answered once",
      async () => {
        // Whatever is pending at the stop: the last updates' side effects were done; homed stops on SIGTERM.
        await sleep(200);
        assert.equal(await homed!.stop({ keep: true }), 0, homed!.stderr());
        const kept = JSON.parse(await Deno.readTextFile(`${ws!.dir}/data/telegram/offset.json`));
        assert.deepEqual(
          kept,
          { offset: Math.max(...home.updates) + 1 },
          "the offset after the last update is on disk",
        );
        const downBefore = home.sentTo(OWNER).length;
        home.send(OWNER, dm(OWNER), "Are you back?", { answered: true });
        llm.enqueue({ reply: "Back and listening." });
        homed = await startHomed(ws!);
        const [back] = (await home.waitSent(OWNER, downBefore + 1, 20_000)).slice(downBefore);
        assert.equal(back!.text, "Back and listening.");
        await sleep(2_500); // a full poll round after the restart: time enough for any redelivery to show
        for (const text of home.answered) assert.equal(home.timesAsked(text), 1, `"${text.slice(0, 30)}" asked once`);
        for (const update of home.updates) {
          assert.equal(telegram.deliveries(update), 1, `update ${update} delivered once`);
        }
        assert.equal(telegram.pendingUpdates, 0);
        assert.equal(home.sentTo(OWNER).length, downBefore + 1, "nothing sent twice");
      },
    );

    await t.step("a 10 s outage: homed survives with few calls, then answers a message sent after it", async () => {
      telegram.outage(10_000);
      await sleep(3_000);
      const during = await telegramStatus(homed!);
      assert.equal(during.connected, false);
      assert.match(String(during.last_error), /cannot reach Telegram at telegram\.api_url/);
      await sleep(7_100);
      const calls = telegram.callsDuring;
      assert.ok(calls >= 1 && calls <= 6, `${calls} calls in 10 s: a backoff, no tight loop`);
      const before = home.sentTo(MEMBER).length;
      llm.enqueue({ reply: "Still here." });
      home.send(MEMBER, dm(MEMBER), "Are you still there?", { answered: true });
      const [reply] = (await home.waitSent(MEMBER, before + 1, 30_000)).slice(before);
      assert.equal(reply!.text, "Still here.");
      assert.equal((await telegramStatus(homed!)).connected, true);
      assert.equal(home.timesAsked("Are you still there?"), 1);
    });
  } finally {
    await teardown(
      async () => homed && assert.equal(await homed.stop(), 0, homed.stderr()),
      () => ws && Deno.remove(ws.dir, { recursive: true }).catch(() => {}),
      ...home.close(),
    );
  }
});
