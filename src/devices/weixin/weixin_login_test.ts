import assert from "node:assert/strict";
import { systemClock } from "../../clock.ts";
import { FakeWeixin } from "../../../tests/support/fake_weixin.ts";
import { waitFor } from "../../../tests/support/wait.ts";
import { weixinLogin, WeixinLoginError, type WeixinLoginStep } from "./weixin_login.ts";
import { loadWeixinLogin, saveWeixinLogin } from "./weixin_state.ts";

const OWNER = "wxid_owner@im.wechat";

Deno.test("the QR login goes wait → scanned → confirmed and returns the credentials; they are kept 0600", async () => {
  await using fake = FakeWeixin.start({ loggedIn: false, qrPollMs: 200 });
  const steps: WeixinLoginStep[] = [];
  const login = weixinLogin({ baseUrl: fake.baseUrl, clock: systemClock, onStep: (step) => steps.push(step) });
  await waitFor(() => steps.some((step) => step.state === "wait"), "the first status");
  fake.login.scan();
  await waitFor(() => steps.some((step) => step.state === "scanned"), "scanned");
  const token = fake.login.confirm({ userId: OWNER });
  const credentials = await login;
  assert.deepEqual(credentials, { botToken: token, botId: fake.botId, baseUrl: fake.baseUrl, userId: OWNER });
  assert.deepEqual(steps.map((step) => step.state), ["qrcode", "wait", "scanned", "confirmed"]);
  const first = steps[0] as Extract<WeixinLoginStep, { state: "qrcode" }>;
  assert.equal(first.qrcode, fake.login.codes[0]);
  assert.match(first.content, /^https:\/\//);
  assert.ok(!JSON.stringify(steps).includes(token), "the token is in no step (a console shows them)");
  assert.ok(fake.login.statusPolls <= 6, `${fake.login.statusPolls} status polls`);
  const dataDir = await Deno.makeTempDir({ prefix: "homed-weixin-" });
  try {
    await saveWeixinLogin(dataDir, credentials);
    assert.equal(Deno.statSync(`${dataDir}/weixin/account.json`).mode! & 0o777, 0o600);
    assert.equal(Deno.statSync(`${dataDir}/weixin`).mode! & 0o777, 0o700);
    assert.deepEqual(await loadWeixinLogin(dataDir), credentials);
  } finally {
    await Deno.remove(dataDir, { recursive: true });
  }
});

Deno.test("an expired code is refreshed; after too many the login gives up saying what to do", async () => {
  await using fake = FakeWeixin.start({ loggedIn: false, qrPollMs: 200 });
  const steps: WeixinLoginStep[] = [];
  const login = weixinLogin({
    baseUrl: fake.baseUrl,
    clock: systemClock,
    onStep: (step) => steps.push(step),
    maxRefreshes: 1,
    pollEveryMs: 50,
  });
  const failed = assert.rejects(login, (error: Error) => {
    assert.ok(error instanceof WeixinLoginError);
    assert.match(error.message, /expired 2 times.*homed weixin login/);
    return true;
  });
  await waitFor(() => fake.login.codes.length === 1 && fake.login.status === "wait", "the first code");
  fake.login.expire();
  await waitFor(() => fake.login.codes.length === 2, "a refreshed code");
  await waitFor(() => steps.filter((step) => step.state === "wait").length === 2, "the new code polled");
  fake.login.expire();
  await failed;
  assert.deepEqual(steps.map((step) => step.state), ["qrcode", "wait", "expired", "qrcode", "wait", "expired"]);
});

Deno.test("a login has a deadline and a signal", async () => {
  await using fake = FakeWeixin.start({ loggedIn: false, qrPollMs: 200 });
  await assert.rejects(
    weixinLogin({ baseUrl: fake.baseUrl, clock: systemClock, onStep: () => {}, timeoutMs: 300 }),
    /took longer than 0.3 s: run it again/,
  );
  const stop = new AbortController();
  const login = weixinLogin({ baseUrl: fake.baseUrl, clock: systemClock, onStep: () => {}, signal: stop.signal });
  await waitFor(() => fake.login.codes.length === 2, "the second login's code");
  stop.abort(new Error("cancelled by the owner"));
  await assert.rejects(login, /cancelled by the owner/);
});
