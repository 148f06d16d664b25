/**
 * The status page's WeChat lines (`assets/weixin_login.js`), fed the device's status as `/api/status` gives it and the
 * login's state as `GET /api/weixin/login` gives it: the channel's state, when the owner is offered a login, and the
 * login's state in words.
 */

import assert from "node:assert/strict";

const { weixinChannelState, weixinLoginText, weixinNeedsLogin } = await import("./assets/weixin_login.js") as {
  weixinChannelState: (device: unknown) => string;
  weixinNeedsLogin: (state: string) => boolean;
  weixinLoginText: (body: unknown) => { kind: string; text: string };
};

Deno.test("the WeChat channel's state: not logged in, session expired, connected, down; a login offered for the first two", () => {
  const cases: Array<[Record<string, unknown>, string, boolean]> = [
    [{ logged_in: false, connected: false, session_expired: false, last_error: null }, "loggedOut", true],
    [
      { logged_in: true, connected: false, session_expired: true, last_error: "the WeChat session expired" },
      "expired",
      true,
    ],
    [{ logged_in: true, connected: true, session_expired: false, last_error: null }, "connected", false],
    [{ logged_in: true, connected: false, session_expired: false, last_error: "HTTP 503" }, "down", false],
    [{ logged_in: true, connected: false, session_expired: false, last_error: null }, "connecting", false],
  ];
  for (const [device, state, offered] of cases) {
    assert.equal(weixinChannelState(device), state, JSON.stringify(device));
    assert.equal(weixinNeedsLogin(state), offered, state);
  }
  // Telegram's status has no login: connected, down or connecting by the same rule (the status page's line for it).
  assert.equal(weixinChannelState({ connected: true, connected_since: "2026-12-05T01:00:00.000Z" }), "connected");
  assert.equal(weixinChannelState({ connected: false, last_error: "Telegram refuses telegram.token (401)" }), "down");
});

Deno.test("a console login's state in words: waiting (renewed), scanned, confirmed with who scanned, expired, failed", () => {
  assert.deepEqual(weixinLoginText({ state: "waiting" }), { kind: "warn", text: "Waiting for the scan…" });
  assert.match(weixinLoginText({ state: "waiting", refreshes: 2 }).text, /^The code expired and was renewed \(2\)\./);
  assert.equal(weixinLoginText({ state: "scanned" }).text, "Scanned: confirm the login on the phone.");
  assert.deepEqual(weixinLoginText({ state: "confirmed", user_id: "wxid_owner@im.wechat" }), {
    kind: "ok",
    text: "Logged in. The person who scanned: wxid_owner@im.wechat.",
  });
  assert.equal(weixinLoginText({ state: "expired", error: "expired 4 times" }).kind, "error");
  assert.deepEqual(weixinLoginText({ state: "failed", error: "iLink get_bot_qrcode: HTTP 502" }), {
    kind: "error",
    text: "The login failed: iLink get_bot_qrcode: HTTP 502",
  });
});
