/**
 * Personal WeChat end to end (issue 40), the service's bad days: a real homed against the strict fake iLink API, the
 * fake LLM, and the owner's QQ (a simulated NapCat) as the other chat homed can tell the owner on. A 10 s outage costs
 * a handful of calls and the next message is answered; an expired session is shown in `/api/status`, told to the
 * owner on QQ and not hammered; a new QR login with `homed weixin login` (run as a child with its own flags: the token
 * kept in the data dir, the running homed asked to re-check) brings WeChat back — and what was written while the
 * session was stale is answered.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { loadWeixinLogin, saveWeixinLogin } from "../src/devices/weixin/weixin_state.ts";
import { DEFAULT_CONTRACT, TEST_KEY } from "./support/contract.ts";
import { FakeLlm } from "./support/fake_llm.ts";
import { FakeWeixin } from "./support/fake_weixin.ts";
import { childEnv, REPO, startHomed, taskFlags, workspace } from "./support/homed_process.ts";
import { OneBotSim } from "./support/onebot_sim.ts";
import { waitFor } from "./support/wait.ts";
import {
  deliver,
  guarded,
  lastMessage,
  sentTo,
  waitForSentTo,
  weixinSection,
  weixinStatus,
  WX_OWNER,
} from "./support/weixin_daemon.ts";

const QQ_OWNER = "20002000";
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

Deno.test("WeChat: a 10 s outage and an expired session cost few calls; after a new login homed answers again, nothing lost", async () => {
  const llm = FakeLlm.start(DEFAULT_CONTRACT);
  const fake = FakeWeixin.start();
  // The token a login stored, not weixin.token: homed uses weixin.token before any login (`homed weixin login` says to
  // remove it), so a stale one set there would keep a new login unused until the 10-minute re-check.
  const ws = await workspace({
    llm: { base_url: llm.baseUrl, api_key: TEST_KEY },
    weixin: weixinSection(fake, {}, { token: false }),
    onebot: { owner: QQ_OWNER, min_send_interval: "0s" },
  });
  const dataDir = join(ws.dir, "data");
  await saveWeixinLogin(dataDir, {
    botToken: fake.botToken!,
    botId: fake.botId,
    baseUrl: fake.baseUrl,
    userId: WX_OWNER,
  });
  const homed = await startHomed(ws);
  let sim: OneBotSim | undefined;
  await guarded(
    async () => {
      sim = await OneBotSim.connect(`${homed.url.replace("http", "ws")}/onebot/v11/ws`);
      llm.enqueue({ reply: "在。" });
      await deliver(fake, { from: WX_OWNER, text: "在吗" });
      await waitForSentTo(fake, WX_OWNER, 1);

      // 1. A 10 s outage (every call answered HTTP 503): a few calls meanwhile, the channel shown down; the next message
      // after it is answered (within the backoff's longest wait, 30 s).
      const outageStart = performance.now();
      fake.outage(10_000);
      await waitFor(async () => (await weixinStatus(homed)).connected === false, "the channel down in status");
      const down = await weixinStatus(homed);
      assert.match(down.problem, /^not connected: .*HTTP 503/);
      await sleep(10_000 - (performance.now() - outageStart));
      assert.ok(
        fake.callsDuringOutage >= 1 && fake.callsDuringOutage <= 6,
        `calls during the outage: ${fake.callsDuringOutage}`,
      );
      llm.enqueue({ reply: "恢复了。" });
      fake.userSends({ from: WX_OWNER, text: "现在呢" });
      const [, afterOutage] = await waitForSentTo(fake, WX_OWNER, 2, 35_000);
      assert.equal(afterOutage!.text, "恢复了。");
      assert.equal((await weixinStatus(homed)).connected, true);

      // 2. The session expires: seen, in status, told to the owner on QQ (WeChat cannot carry it), and not hammered —
      // over 10 s a few calls at most. A message written meanwhile waits at the service.
      fake.expireSession();
      await waitFor(async () => (await weixinStatus(homed)).session_expired === true, "the session expired in status");
      const expiredAt = performance.now();
      const expired = await weixinStatus(homed);
      assert.equal(expired.connected, false);
      assert.match(expired.problem, /session expired: run `homed weixin login` again/);
      assert.match(homed.stderr(), /The WeChat session expired/);
      const [told] = await sim.waitForActions("send_private_msg");
      assert.equal(told!.params.user_id, Number(QQ_OWNER));
      assert.match(JSON.stringify(told!.params.message), /homed weixin login/);
      const llmCalls = llm.requests.length;
      const pollsBefore = fake.polls;
      fake.userSends({ from: WX_OWNER, text: "过期的时候发的消息" });
      // A tight loop would make hundreds of calls in 5 s; homed checks again only every 10 minutes (or after a login).
      await sleep(5_000 - (performance.now() - expiredAt));
      assert.ok(fake.callsWhileExpired <= 2, `calls while expired: ${fake.callsWhileExpired}`);
      assert.equal(fake.polls, pollsBefore, "no poll with the stale token got through");
      assert.equal(fake.pending, 1, "the message waits at the service");
      assert.equal(llm.requests.length, llmCalls);

      // 3. `homed weixin login`, run as users run it (its own narrow flags): the QR code scanned and confirmed on the
      // phone, the token kept in the data dir, the running homed asked to re-check. WeChat comes back, and the message
      // written while it was stale is answered, once.
      llm.enqueue({ reply: "我回来了。" });
      const flags = await taskFlags("weixin", ws.env);
      const login = new Deno.Command(Deno.execPath(), {
        args: ["run", ...flags, "src/main.ts", "weixin", "login"],
        cwd: REPO,
        env: childEnv(ws.env),
        clearEnv: true,
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
      }).output();
      await waitFor(() => fake.login.codes.length > 0, "homed weixin login to fetch a QR code", { limitMs: 15_000 });
      fake.login.scan();
      const newToken = fake.login.confirm({ userId: WX_OWNER });
      const ran = await login;
      const [out, err] = [new TextDecoder().decode(ran.stdout), new TextDecoder().decode(ran.stderr)];
      assert.equal(ran.code, 0, `${out}\n${err}`);
      const stored = await loadWeixinLogin(dataDir);
      assert.equal(stored?.botToken, newToken, "the new token kept in the data dir");
      assert.ok(!out.includes(newToken) && !err.includes(newToken), "the token is never printed");
      // The login asked the running homed to pick the new token up now (not at its 10-minute re-check).
      const said = out.trim().split("\n").at(-1)!;
      assert.match(said, /picks up the new token now/, out);
      const [, , back] = await waitForSentTo(fake, WX_OWNER, 3, 10_000);
      assert.equal(back!.text, "我回来了。");
      assert.match(lastMessage(llm, llmCalls), /trust owner\] 过期的时候发的消息$/);
      const resumed = await weixinStatus(homed);
      assert.deepEqual([resumed.connected, resumed.session_expired, resumed.problem], [true, false, null]);
      await sleep(1_500);
      assert.equal(sentTo(fake, WX_OWNER).length, 3, "answered once");
      assert.deepEqual(fake.refusals, []);
    },
    async () => await sim?.close(),
    async () => assert.equal(await homed.stop(), 0, homed.stderr()),
    () => fake.close(),
    () => llm.close(),
  );
});
