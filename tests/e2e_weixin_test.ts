/**
 * Personal WeChat end to end (issue 40): a real homed, run as users run it (a child process with its narrow
 * permission flags), against the strict fake of Tencent's iLink bot API and the fake LLM. The owner and a member are
 * answered in their own chat on their own message's `context_token`, a stranger costs nothing; a restart neither
 * repeats nor loses a message; a long reply goes out split, in order, paced and plain; images and WeChat's voice
 * transcripts reach the model and a picture the butler sends arrives byte for byte. The owner's confirmation on
 * WeChat, messages homed starts itself, session expiry and an outage are in `e2e_weixin_confirm_test.ts` and
 * `e2e_weixin_faults_test.ts`.
 */

import assert from "node:assert/strict";
import { DEFAULT_CONTRACT, TEST_KEY } from "./support/contract.ts";
import { FakeLlm } from "./support/fake_llm.ts";
import { FakeVision, samplePng } from "./support/fake_media.ts";
import { FakeWeixin } from "./support/fake_weixin.ts";
import { startHomed, workspace } from "./support/homed_process.ts";
import { pictureServer } from "./support/picture_server.ts";
import { waitFor } from "./support/wait.ts";
import {
  deliver,
  guarded,
  lastMessage,
  sentTo,
  toolResults,
  waitForSentTo,
  weixinSection,
  weixinStatus,
  WX_MEMBER,
  WX_OWNER,
  WX_STRANGER,
} from "./support/weixin_daemon.ts";

const OWNER_CHAT = `weixin:private:${WX_OWNER}`;
const MEMBER_CHAT = `weixin:private:${WX_MEMBER}`;

/** A Markdown reply of `count` numbered sections, about 700 characters each. */
function longMarkdown(count: number): string {
  return Array.from(
    { length: count },
    (_, i) => `## 第${i + 1}段\n\n**要点${i + 1}**：${"家里的事情都记下了，".repeat(60)}*结束${i + 1}*`,
  ).join("\n\n");
}

Deno.test("WeChat: owner and member answered on their message's token, a stranger never; long replies split and paced; media in and out; a restart repeats and loses nothing", async () => {
  const llm = FakeLlm.start(DEFAULT_CONTRACT);
  const vision = FakeVision.start({ model: "vision-test" });
  const fake = FakeWeixin.start();
  const png = samplePng(3_000);
  const web = pictureServer(png);
  const ws = await workspace({
    llm: { base_url: llm.baseUrl, api_key: TEST_KEY },
    weixin: weixinSection(fake),
    vision: { base_url: vision.baseUrl, model: "vision-test", timeout: "5s" },
    media: { allow_hosts: [`127.0.0.1:${web.port}`], fetch_timeout: "5s" },
  });
  let homed = await startHomed(ws);
  await guarded(
    async () => {
      // 1. Owner, member and stranger write at once (one getupdates answer): two answers, each in its chat, each on the
      // token of the message it answers; the stranger costs no model call and gets nothing.
      const answer = (request: { body: Record<string, unknown> }) => {
        const asked = (request.body.messages as Array<{ content: string }>).at(-1)!.content;
        return { reply: asked.includes(`from ${WX_OWNER}`) ? "主人好，家里一切正常。" : "你好，我记下了。" };
      };
      llm.enqueue({ from: answer }, { from: answer });
      const [owner, member, stranger] = await deliver(
        fake,
        { from: WX_OWNER, text: "家里怎么样？" },
        { from: WX_MEMBER, text: "我今晚晚点回来" },
        { from: WX_STRANGER, text: "你好，我是陌生人" },
      );
      const [toOwner] = await waitForSentTo(fake, WX_OWNER, 1);
      const [toMember] = await waitForSentTo(fake, WX_MEMBER, 1);
      assert.deepEqual([toOwner!.text, toOwner!.contextToken], ["主人好，家里一切正常。", owner!.token]);
      assert.deepEqual([toMember!.text, toMember!.contextToken], ["你好，我记下了。", member!.token]);
      assert.notEqual(owner!.token, member!.token);
      const asked = [lastMessage(llm, 0), lastMessage(llm, 1)].sort();
      assert.match(
        asked.find((text) => text.includes(WX_OWNER))!,
        /\[via weixin:private:wxid_owner@im\.wechat, from wxid_owner@im\.wechat, trust owner\] 家里怎么样？$/,
      );
      assert.match(
        asked.find((text) => text.includes(WX_MEMBER))!,
        /\[via weixin:private:wxid_member@im\.wechat, from wxid_member@im\.wechat, trust household\] 我今晚晚点回来$/,
      );
      await waitFor(
        () => /Ignored a WeChat message from wxid_stranger@im\.wechat/.test(homed.stderr()),
        "the stranger ignored in the log",
      );
      assert.ok(stranger!.token !== "");
      assert.equal(llm.requests.length, 2, "the stranger cost no model call");
      assert.deepEqual(sentTo(fake, WX_STRANGER), [], "the stranger got nothing");
      // The fake records a send when it arrives; homed counts it when the answer is back, a moment later.
      await waitFor(async () => (await weixinStatus(homed)).sent === 2, "both answers counted as sent");
      const status = await weixinStatus(homed);
      assert.deepEqual([status.connected, status.inputs, status.ignored, status.sent], [true, 2, 1, 2]);
      assert.ok(fake.typing.some((typing) => typing.user === WX_OWNER && typing.status === 1), "typing shown");

      // 2. A long Markdown reply: split in order, each piece within 2000 characters, never three sends within a second,
      // the markers gone, every piece on the token of the question.
      const markdown = longMarkdown(7);
      assert.ok(markdown.length > 4_000, String(markdown.length));
      llm.enqueue({ reply: markdown });
      const [question] = await deliver(fake, { from: WX_OWNER, text: "把家里的情况详细说说" });
      const pieces = (await waitForSentTo(fake, WX_OWNER, 4, 15_000)).slice(1);
      await new Promise((resolve) => setTimeout(resolve, 1_200));
      assert.equal(sentTo(fake, WX_OWNER).length, 4, "three pieces, no more");
      const texts = pieces.map((piece) => piece.text!);
      assert.ok(texts.every((text) => [...text].length <= 2_000), JSON.stringify(texts.map((text) => text.length)));
      const whole = texts.join("\n");
      const at = Array.from({ length: 7 }, (_, i) => whole.indexOf(`第${i + 1}段`));
      assert.ok(at.every((index, i) => index >= 0 && (i === 0 || index > at[i - 1]!)), `in order: ${at}`);
      for (let i = 1; i <= 7; i++) {
        assert.equal(whole.split(`要点${i}：`).length, 2, `section ${i} once`);
        assert.ok(whole.includes(`结束${i}`), `section ${i} whole`);
      }
      assert.ok(!/[*#]/.test(whole), "Markdown markers stripped");
      assert.ok(pieces.every((piece) => piece.contextToken === question!.token));
      for (let i = 1; i < pieces.length; i++) {
        assert.ok(pieces[i]!.at - pieces[i - 1]!.at >= 900, `paced: ${pieces[i]!.at - pieces[i - 1]!.at} ms`);
      }
      assert.deepEqual(fake.refusals, [], "no send refused (pacing, length)");

      // 3. Media in: a photo goes through the CDN (decrypted) to the vision model, its description to the main model;
      // a voice note with WeChat's own transcript reaches the model as that text (no download, no speech-to-text).
      vision.enqueue({ description: "A monstera with brown leaf edges." });
      llm.enqueue({ reply: "叶子边缘发黄，多喷点水。" });
      await deliver(fake, { from: WX_OWNER, image: png });
      await waitForSentTo(fake, WX_OWNER, 5);
      assert.deepEqual(vision.requests[0]!.images, [{ mime: "image/png", bytes: png }]);
      assert.match(
        lastMessage(llm, 3),
        /from wxid_owner@im\.wechat, trust owner\] \(sent an attachment\)\n\[image: A monstera with brown leaf edges\.\]$/,
      );
      assert.ok(!lastMessage(llm, 3).includes("base64"), "no bytes reach the main model");
      llm.enqueue({ reply: "好的，明早七点叫你。" });
      await deliver(fake, {
        from: WX_MEMBER,
        voice: { silk: new Uint8Array([2, 35, 33, 83, 73, 76, 75]), text: "明天早上七点叫我起床" },
      });
      await waitForSentTo(fake, WX_MEMBER, 2);
      assert.match(lastMessage(llm, 4), /from wxid_member@im\.wechat, trust household\] 明天早上七点叫我起床$/);

      // Media out: a picture the butler sends (output_send, fetched by homed under media.allow_hosts) is uploaded
      // encrypted and arrives decrypted byte for byte.
      llm.enqueue(
        {
          toolCalls: [{
            name: "output_send",
            arguments: { channel: OWNER_CHAT, type: "image", url: web.url("/plant.png") },
          }],
        },
        { reply: "照片发给你了。" },
      );
      await deliver(fake, { from: WX_OWNER, text: "把植物的照片发给我" });
      const out = await waitForSentTo(fake, WX_OWNER, 7);
      assert.equal(toolResults(llm, 6)[0], `Queued image for ${OWNER_CHAT}`);
      const image = out.find((sent) => sent.kind === "image");
      assert.ok(image, JSON.stringify(out.map((sent) => sent.kind)));
      assert.deepEqual(image.bytes, png, "the picture arrived decrypted, byte-identical");
      assert.deepEqual(web.asked, ["/plant.png"]);

      // 4. A restart (SIGTERM, the data dir kept): what was answered is not answered again; a message sent while homed
      // was down is answered after it, once.
      const before = { sent: fake.sent.length, llm: llm.requests.length };
      assert.equal(await homed.stop({ keep: true }), 0, homed.stderr());
      fake.userSends({ from: WX_MEMBER, text: "你还在吗？" });
      llm.enqueue({ reply: "我在，刚才重启了一下。" });
      homed = await startHomed(ws);
      await waitForSentTo(fake, WX_MEMBER, 3);
      await new Promise((resolve) => setTimeout(resolve, 2_500)); // a poll or two more: nothing else may come
      assert.equal(fake.sent.length, before.sent + 1, "only the message sent while down was answered");
      assert.equal(llm.requests.length, before.llm + 1);
      assert.match(
        lastMessage(llm, before.llm),
        new RegExp(`\\[via ${MEMBER_CHAT}, from ${WX_MEMBER}, trust household\\] 你还在吗？$`),
      );
      assert.equal(sentTo(fake, WX_MEMBER).at(-1)!.text, "我在，刚才重启了一下。");
      assert.deepEqual(fake.refusals, []);
    },
    async () => assert.equal(await homed.stop(), 0, homed.stderr()),
    () => web.server.shutdown(),
    () => fake.close(),
    () => vision.close(),
    () => llm.close(),
  );
});
