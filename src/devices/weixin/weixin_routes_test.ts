import assert from "node:assert/strict";
import { Hono } from "hono";
import { type ApiVariables, bearerAuth } from "../../api/auth.ts";
import { systemClock } from "../../clock.ts";
import { log } from "../../log/logging.ts";
import { FakeWeixin } from "../../../tests/support/fake_weixin.ts";
import { waitFor } from "../../../tests/support/wait.ts";
import { WeixinConsoleLogin, type WeixinLoginBody } from "./weixin_routes.ts";
import { loadWeixinLogin } from "./weixin_state.ts";

const OWNER_TOKEN = "owner-token-0123456789";
const MEMBER_TOKEN = "alice-token-0123456789";
const SCANNER = "wxid_owner@im.wechat";

/** The console login's routes on an app with the API's token check, against a fake iLink; cleaned up on dispose. */
async function setup(fake: FakeWeixin, options: { maxRefreshes?: number; owner?: string } = {}) {
  const dataDir = await Deno.makeTempDir({ prefix: "homed-weixin-routes-" });
  let rechecks = 0;
  const login = new WeixinConsoleLogin({
    baseUrl: fake.baseUrl,
    dataDir,
    owner: options.owner ?? "",
    clock: systemClock,
    logger: log("weixin"),
    device: { recheckLogin: () => rechecks++ },
    pollEveryMs: 50,
    ...(options.maxRefreshes === undefined ? {} : { maxRefreshes: options.maxRefreshes }),
  });
  await login.start();
  const app = new Hono<{ Variables: ApiVariables }>();
  app.onError((error, c) => c.json({ error: { message: error.message } }, 500));
  app.use(
    "/api/*",
    bearerAuth({ ownerToken: OWNER_TOKEN, people: { alice: { token: MEMBER_TOKEN, trust: "household" } } }),
  );
  login.route().mount(app);
  const call = async (method: "GET" | "POST", path: string, token = OWNER_TOKEN) => {
    const response = await app.request(path, { method, headers: { authorization: `Bearer ${token}` } });
    return { status: response.status, body: await response.json() };
  };
  const state = async () => (await call("GET", "/api/weixin/login")).body as WeixinLoginBody;
  return {
    login,
    dataDir,
    call,
    state,
    rechecks: () => rechecks,
    async [Symbol.asyncDispose]() {
      await login.stop();
      await Deno.remove(dataDir, { recursive: true });
    },
  };
}

Deno.test("the WeChat login routes are the owner's: a member's token gets 403 naming the trust needed", async () => {
  await using fake = FakeWeixin.start({ loggedIn: false, qrPollMs: 200 });
  await using routes = await setup(fake);
  for (const [method, path] of [["POST", "/api/weixin/login"], ["GET", "/api/weixin/login"]] as const) {
    const refused = await routes.call(method, path, MEMBER_TOKEN);
    assert.equal(refused.status, 403, `${method} ${path}`);
    assert.equal(refused.body.error.code, "forbidden");
    assert.match(refused.body.error.message, /The WeChat login needs trust owner; .*"alice" \(trust household\)/);
  }
  const recheck = await routes.call("POST", "/api/weixin/recheck", MEMBER_TOKEN);
  assert.equal(recheck.status, 403);
  assert.match(recheck.body.error.message, /Re-checking the WeChat login needs trust owner/);
  assert.equal(routes.rechecks(), 0, "a refused re-check reaches no device");
  assert.equal(fake.login.codes.length, 0, "a refused start asks iLink for nothing");
  // Before any login, GET says how to start one.
  const none = await routes.call("GET", "/api/weixin/login");
  assert.equal(none.status, 404);
  assert.match(none.body.error.message, /POST \/api\/weixin\/login starts one/);
});

Deno.test("a console login: start shows the QR code, one at a time, scanned, confirmed → the token kept and re-checked", async () => {
  await using fake = FakeWeixin.start({ loggedIn: false, qrPollMs: 200 });
  await using routes = await setup(fake);
  const started = await routes.call("POST", "/api/weixin/login");
  assert.equal(started.status, 200);
  assert.equal(started.body.state, "waiting");
  assert.match(started.body.qr_text, /^https:\/\//);
  assert.match(started.body.qr_svg, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg" viewBox="0 0 \d+ \d+"/);
  assert.doesNotMatch(started.body.qr_svg, /<script|on\w+=|href/i, "the SVG is drawing only");
  // One at a time: a second start while the first waits is refused, and issues no second code.
  const again = await routes.call("POST", "/api/weixin/login");
  assert.equal(again.status, 409);
  assert.equal(again.body.error.code, "conflict");
  assert.match(again.body.error.message, /already waiting.*GET \/api\/weixin\/login/);
  assert.equal(fake.login.codes.length, 1);
  assert.deepEqual(await routes.state(), started.body, "GET shows the same login");
  fake.login.scan();
  await waitFor(async () => (await routes.state()).state === "scanned", "scanned");
  const token = fake.login.confirm({ userId: SCANNER });
  await waitFor(async () => (await routes.state()).state === "confirmed", "confirmed");
  const confirmed = await routes.state();
  assert.equal(confirmed.user_id, SCANNER);
  assert.equal(confirmed.bot_id, fake.botId);
  assert.equal(confirmed.owner_unset, true);
  assert.equal(confirmed.qr_svg, undefined, "no code once it is used");
  assert.equal(routes.rechecks(), 1, "the device was told to look for the new token");
  assert.equal((await loadWeixinLogin(routes.dataDir))?.botToken, token);
  assert.equal(Deno.statSync(`${routes.dataDir}/weixin/account.json`).mode! & 0o777, 0o600);
  for (const body of [started.body, confirmed]) assert.ok(!JSON.stringify(body).includes(token), "no token shown");
  assert.deepEqual(routes.login.status(), { login: "confirmed" });
  // A re-check asked for directly (what `homed weixin login` does) reaches the device too.
  const recheck = await routes.call("POST", "/api/weixin/recheck");
  assert.deepEqual(recheck, { status: 200, body: { rechecking: true } });
  assert.equal(routes.rechecks(), 2);
  assert.deepEqual(fake.violations, []);
});

Deno.test("a console login renews an expired code, and after too many says expired; a new one may start then", async () => {
  await using fake = FakeWeixin.start({ loggedIn: false, qrPollMs: 200 });
  await using routes = await setup(fake, { maxRefreshes: 1 });
  const first = await routes.call("POST", "/api/weixin/login");
  assert.equal(first.status, 200);
  await waitFor(() => fake.login.status === "wait", "the first code polled");
  fake.login.expire();
  await waitFor(() => fake.login.codes.length === 2, "a renewed code");
  await waitFor(async () => (await routes.state()).qr_text !== first.body.qr_text, "the renewed code shown");
  const renewed = await routes.state();
  assert.equal(renewed.state, "waiting");
  assert.equal(renewed.refreshes, 1);
  await waitFor(() => fake.login.status === "wait", "the renewed code polled");
  fake.login.expire();
  await waitFor(async () => (await routes.state()).state === "expired", "given up");
  const ended = await routes.state();
  assert.match(ended.error!, /expired 2 times/);
  assert.equal(ended.qr_svg, undefined);
  assert.equal(routes.rechecks(), 0);
  assert.equal(await loadWeixinLogin(routes.dataDir), undefined, "nothing kept");
  const next = await routes.call("POST", "/api/weixin/login");
  assert.equal(next.status, 200, "a login that ended does not block the next");
  assert.equal(next.body.state, "waiting");
});

Deno.test("stopping homed ends a console login still waiting; a start after the stop is refused", async () => {
  await using fake = FakeWeixin.start({ loggedIn: false, qrPollMs: 200 });
  await using routes = await setup(fake);
  assert.equal((await routes.call("POST", "/api/weixin/login")).status, 200);
  await routes.login.stop();
  const ended = await routes.state();
  assert.equal(ended.state, "failed");
  assert.match(ended.error!, /stopped \(homed is stopping\)/);
  const refused = await routes.call("POST", "/api/weixin/login");
  assert.equal(refused.status, 503);
});
