// The WeChat channel on the status page: its state (logged in, connected, session expired) and, for the owner, the QR
// login — "Log in to WeChat" starts one (POST /api/weixin/login), the code is shown as a picture (the SVG the API drew,
// in an <img>, where it can run nothing) with its link as text, and its state is read again every 2 s until it ends.
// The login box outlives the status card's redraws, so a login goes on while the page refreshes.
import { api } from "./api.js";
import { badge, fill, fmtTime, h, pollWhileVisible } from "./dom.js";
import { t } from "./i18n.js";

/** The channel's state from the device's status: "connected", "connecting", "down", "expired" or "loggedOut". */
export function weixinChannelState(device) {
  if (device?.session_expired) return "expired";
  if (device?.logged_in === false) return "loggedOut";
  if (device?.connected) return "connected";
  if (device?.last_error) return "down";
  return "connecting";
}

/** Whether the owner should be offered a login: never logged in, or the session expired. */
export const weixinNeedsLogin = (state) => state === "expired" || state === "loggedOut";

const CHANNEL_KIND = { connected: "ok", connecting: "warn", down: "error", expired: "error", loggedOut: "warn" };

/** A login still going: waiting for the scan, or scanned and waiting for the confirmation. */
const going = (state) => state === "waiting" || state === "scanned";

/** A login's state in words, and how it reads ("ok", "warn", "error"). */
export function weixinLoginText(body) {
  switch (body?.state) {
    case "waiting":
      return {
        kind: "warn",
        text: body.refreshes
          ? `${t("weixinRenewed", { n: body.refreshes })} ${t("weixinLogin_waiting")}`
          : t("weixinLogin_waiting"),
      };
    case "scanned":
      return { kind: "warn", text: t("weixinLogin_scanned") };
    case "confirmed":
      return { kind: "ok", text: t("weixinLogin_confirmed", { user: body.user_id || "?" }) };
    case "expired":
      return { kind: "error", text: t("weixinLogin_expired") };
    default:
      return { kind: "error", text: t("weixinLogin_failed", { error: body?.error ?? "?" }) };
  }
}

/** The SVG the API drew, as a picture's address; none unless it is an SVG document. */
const svgAddress = (svg) =>
  typeof svg === "string" && svg.startsWith("<svg ")
    ? `data:image/svg+xml;charset=utf-8,${encodeURIComponent(svg)}`
    : null;

let box = null;

/** The one login box (its button, its state, the code), made once and moved into each redraw of the card. */
function loginBox() {
  if (box) return box;
  const result = h("div", { class: "weixin-login-result", "aria-live": "polite" });
  const button = h("button", { type: "button", id: "weixin-login", class: "weixin-login-start" }, t("weixinLogin"));
  box = {
    el: h("div", { class: "weixin-login" }, button, result),
    button,
    result,
    going: false,
    stop: null,
    done: null,
  };
  button.addEventListener("click", () => start());
  return box;
}

/** Shows and follows a login started elsewhere (another window) that `/api/status` says goes on. */
function join(serviceState) {
  if (box.going || !going(serviceState)) return;
  box.going = true;
  api.get("/api/weixin/login").then((body) => {
    render(body);
    if (going(body.state)) follow();
  }, () => {
    box.going = false;
  });
}

function render(body) {
  const { kind, text } = weixinLoginText(body);
  const picture = going(body.state) ? svgAddress(body.qr_svg) : null;
  const link = going(body.state) && typeof body.qr_text === "string" ? body.qr_text : "";
  fill(
    box.result,
    h("p", { class: `weixin-login-state status ${kind}`, "data-state": body.state }, text),
    body.error && body.state !== "failed" ? h("p", { class: "meta" }, body.error) : null,
    picture
      ? h(
        "figure",
        { class: "weixin-qr" },
        h("img", { src: picture, alt: t("weixinQrAlt"), width: 240, height: 240 }),
        h("figcaption", { class: "meta" }, t("weixinScanHint")),
      )
      : null,
    link
      ? h(
        "p",
        { class: "meta weixin-link" },
        t("weixinLinkHint"),
        " ",
        /^https:\/\//.test(link)
          ? h("a", { href: link, target: "_blank", rel: "noopener noreferrer" }, link)
          : h("code", {}, link),
      )
      : null,
    body.state === "confirmed" && body.owner_unset && body.user_id
      ? h("p", { class: "meta weixin-owner-hint" }, t("weixinOwnerHint", { user: body.user_id }))
      : null,
  );
  box.going = going(body.state);
  box.button.hidden = box.going || body.state === "confirmed";
  box.button.disabled = false;
}

/** Reads the login's state every 2 s while the box is on the page and the login goes on. */
function follow() {
  box.stop?.();
  let stopPolling = null;
  let stopped = false;
  const stop = () => {
    stopped = true;
    stopPolling?.();
  };
  stopPolling = pollWhileVisible(async () => {
    if (stopped) return;
    if (!box.el.isConnected) return stop();
    try {
      const body = await api.get("/api/weixin/login");
      render(body);
      if (!going(body.state)) {
        stop();
        if (body.state === "confirmed") setTimeout(() => box.done?.(), 1_500);
      }
    } catch (error) {
      fill(box.result, h("p", { class: "status error" }, error?.message ?? String(error)));
      box.going = false;
      box.button.hidden = false;
      stop();
    }
  }, 2_000);
  if (stopped) stopPolling();
  box.stop = stop;
}

async function start() {
  box.button.disabled = true;
  fill(box.result, h("p", { class: "status loading" }, t("loading")));
  let body;
  try {
    body = await api.post("/api/weixin/login");
  } catch (error) {
    // One login at a time: one already going is followed, not refused.
    if (error?.status === 409) {
      body = await api.get("/api/weixin/login").catch(() => null);
    }
    if (!body) {
      fill(box.result, h("p", { class: "status error" }, error?.message ?? String(error)));
      box.button.disabled = false;
      return;
    }
  }
  render(body);
  if (going(body.state)) follow();
}

/**
 * The WeChat device's lines on the status page: its state with since when, the last message and the last error;
 * for the owner, "Log in to WeChat" when it is not logged in or the session expired, and a login going on wherever it
 * was started (`login`: the state `/api/status` gives under `services.weixin_login.login`). `onLoggedIn` redraws the
 * page once a login is confirmed.
 */
export function weixinView(device, { owner, onLoggedIn, login: loginState }) {
  const state = weixinChannelState(device);
  const head = chatStateLine(device);
  if (!owner) return [head];
  const login = loginBox();
  login.done = onLoggedIn;
  join(loginState);
  if (!login.going) login.button.hidden = !weixinNeedsLogin(state);
  return [head, login.el];
}

/**
 * A long-polling chat's state in a line (WeChat, Telegram): connected since, the last message, and why not when it is
 * not.
 */
export function chatStateLine(device) {
  const state = weixinChannelState(device);
  return h(
    "p",
    { class: "weixin-state", "data-state": state },
    badge(t(`weixinState_${state}`), CHANNEL_KIND[state]),
    state === "connected" && device.connected_since
      ? ` ${t("sinceTime", { time: fmtTime(device.connected_since) })}`
      : "",
    device.last_message_at
      ? h("span", { class: "meta block-line" }, t("weixinLastMessage", { time: fmtTime(device.last_message_at) }))
      : null,
    state !== "connected" && device.last_error ? h("span", { class: "meta block-line" }, device.last_error) : null,
  );
}
