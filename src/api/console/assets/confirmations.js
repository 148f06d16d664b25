// The owner's yes in the console: actions waiting for it (a lock, a `confirm` rule, an act in a tainted turn) as cards
// above every page — what, who asked where, time left, Approve / Deny — kept live by asking GET /api/confirmations
// every few seconds while the page is visible. Owner only: the API refuses anyone else.
import { api, seg } from "./api.js";
import { $, fill, h, pollWhileVisible, show } from "./dom.js";
import { t } from "./i18n.js";

/** How often the waiting actions are asked for. */
const POLL_MS = 3000;
/** How long the line saying what a decision did stays. */
const SAID_MS = 20_000;

let polling = null;
let waiting = [];
let ticker = null;
let saidTimer = null;

const box = () => $("#confirmations");
const said = () => $("#confirmations-status");

/** "1:45" from now to `iso`; null once it is past. */
function left(iso) {
  const ms = Date.parse(iso) - Date.now();
  if (!(ms > 0)) return null;
  const seconds = Math.ceil(ms / 1000);
  return `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, "0")}`;
}

function leftText(action) {
  const time = left(action.expires_at);
  return time === null ? t("confirmExpired") : t("confirmLeft", { time });
}

function card(action) {
  const buttons = [];
  const decide = (decision) => {
    for (const button of buttons) button.disabled = true;
    decideOn(action, decision).finally(() => buttons.forEach((button) => button.disabled = false));
  };
  buttons.push(
    h("button", { type: "button", class: "confirmation-approve", onclick: () => decide("approve") }, t("approve")),
    h("button", { type: "button", class: "confirmation-deny danger", onclick: () => decide("deny") }, t("deny")),
  );
  return h(
    "article",
    { class: "confirmation card", "data-id": action.id, role: "group", "aria-label": action.summary },
    h("p", { class: "confirmation-summary" }, h("strong", {}, action.summary)),
    h(
      "p",
      { class: "meta" },
      t("confirmAsked", {
        who: action.asked_by,
        trust: t(`trust_${action.trust}`),
        where: action.asked_on,
      }),
    ),
    h(
      "p",
      { class: "meta" },
      h("span", { class: "confirmation-left", "data-expires": action.expires_at }, leftText(action)),
      " · ",
      t("confirmAskedOn", { channel: action.channel }),
    ),
    h("div", { class: "row confirmation-buttons" }, buttons),
  );
}

/** Shows the waiting actions (or hides the box when none waits and nothing was just decided). */
function render() {
  const root = box();
  if (!root) return;
  const list = $("#confirmations-list");
  fill(
    list,
    waiting.length ? h("h2", { class: "confirmations-title" }, t("confirmWaiting", { n: waiting.length })) : null,
    waiting.map(card),
  );
  root.hidden = waiting.length === 0 && said().hidden;
  clearInterval(ticker);
  ticker = waiting.length
    ? setInterval(() => {
      for (const span of root.querySelectorAll(".confirmation-left")) {
        span.textContent = leftText({ expires_at: span.getAttribute("data-expires") });
      }
    }, 1000)
    : null;
}

function say(text, kind) {
  clearTimeout(saidTimer);
  show(said(), text, kind);
  saidTimer = setTimeout(() => {
    show(said(), "");
    render();
  }, SAID_MS);
}

async function decideOn(action, decision) {
  try {
    const answer = await api.post(`/api/confirmations/${seg(action.id)}`, { decision });
    say(
      answer.outcome === "confirmed"
        ? t("confirmDone", { summary: action.summary, result: answer.result ?? "" })
        : t("confirmDenied", { summary: action.summary }),
      "ok",
    );
    dispatchEvent(new CustomEvent("homed:decided", { detail: answer }));
  } catch (error) {
    say(error?.message ?? String(error), "error");
  }
  await refresh();
}

async function refresh() {
  try {
    const body = await api.get("/api/confirmations");
    waiting = body.pending ?? [];
  } catch (error) {
    // A 401 logs out (api.js); anything else keeps the cards shown and tries again on the next round.
    if (error?.status === 403) waiting = [];
  }
  if (polling) render();
}

/** Starts showing the owner's waiting actions, live; anyone else sees none (the API would refuse them). */
export function startConfirmations(who) {
  stopConfirmations();
  if (who?.trust !== "owner") return;
  polling = pollWhileVisible(refresh, POLL_MS);
}

/** Stops asking (at logout) and empties the box. */
export function stopConfirmations() {
  polling?.();
  polling = null;
  waiting = [];
  clearInterval(ticker);
  clearTimeout(saidTimer);
  if (said()) show(said(), "");
  render();
}

/** Draws the cards again in the language now chosen. */
export const renderConfirmations = () => render();
