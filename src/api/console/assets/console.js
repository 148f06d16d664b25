// The console's shell: login, language, the nav the token's trust may see, hash routing, pushed messages.
import { clearToken, forgetMedia, getToken, onUnauthorized, request, setToken } from "./api.js";
import { $, h, markReady, parseJson } from "./dom.js";
import { lang, locale, setLang, t } from "./i18n.js";
import { readSse } from "./sse.js";
import { renderConfirmations, startConfirmations, stopConfirmations } from "./confirmations.js";
import { renderModelBanner, startModelBanner, stopModelBanner } from "./model_banner.js";
import chat, { onUnreadChange, pushed, resetChat } from "./pages/chat.js";

// The chat is the first page; the others load when first opened, so the first load fetches only what it shows.
const PAGES = {
  chat: () => Promise.resolve({ default: chat }),
  memory: () => import("./pages/memory.js"),
  people: () => import("./pages/people.js"),
  knowledge: () => import("./pages/knowledge.js"),
  schedules: () => import("./pages/schedules.js"),
  system: () => import("./pages/system.js"),
  plugins: () => import("./pages/plugins.js"),
  status: () => import("./pages/status.js"),
  turns: () => import("./pages/turns.js"),
  actions: () => import("./pages/actions.js"),
};
/** Who the stored token was last time: the app shows at once while /api/whoami confirms it (the API decides anyway). */
const WHO_KEY = "homed.who";
const HOUSEHOLD = ["chat", "memory", "people", "knowledge", "schedules", "system", "plugins", "status", "actions"];
const VISIBLE = { guest: ["chat"], household: HOUSEHOLD, owner: [...HOUSEHOLD, "turns"] };

let who = null;
let listening = null;

const allowed = () => VISIBLE[who?.trust] ?? VISIBLE.guest;

/** Puts the dictionary's words on the static page. */
function translate() {
  document.documentElement.lang = locale();
  for (const el of document.querySelectorAll("[data-i18n]")) el.textContent = t(el.getAttribute("data-i18n"));
  const toggle = $("#lang-toggle");
  toggle.textContent = t("otherLanguage");
  toggle.title = t("switchLanguage");
  toggle.setAttribute("aria-label", t("switchLanguage"));
  $("#token").placeholder = t("tokenPlaceholder");
}

function buildNav() {
  const nav = $("#nav");
  nav.replaceChildren(
    ...allowed().map((name) =>
      h(
        "a",
        { href: `#${name}`, "data-page": name },
        t(`nav_${name}`),
        name === "chat" ? h("span", { class: "unread", hidden: true }) : null,
      )
    ),
  );
  $("#whoami").textContent = who ? t("signedInAs", { name: who.name, trust: t(`trust_${who.trust}`) }) : "";
}

onUnreadChange((count) => {
  const badge = $("#nav .unread");
  if (!badge) return;
  badge.hidden = count === 0;
  badge.textContent = String(count);
});

/** Shows the page the hash names (or the first one the trust may see). */
function route() {
  if (!who) return;
  let name = location.hash.slice(1);
  if (!allowed().includes(name)) {
    name = allowed()[0];
    history.replaceState(null, "", `#${name}`);
  }
  for (const link of document.querySelectorAll("#nav a")) {
    const active = link.getAttribute("data-page") === name;
    link.classList.toggle("active", active);
    if (active) {
      link.setAttribute("aria-current", "page");
      // On a phone the nav is one row that scrolls sideways: the page's link is brought into it.
      const nav = link.parentElement;
      if (nav.scrollWidth > nav.clientWidth) {
        nav.scrollLeft = link.offsetLeft - (nav.clientWidth - link.offsetWidth) / 2;
      }
    } else link.removeAttribute("aria-current");
  }
  document.title = `${t(`nav_${name}`)} · homed`;
  const root = h("section", { id: `page-${name}`, class: "page", "data-ready": "false" });
  $("#app").replaceChildren(root);
  const failed = (error) => {
    root.append(h("p", { class: "status error" }, t("pageFailed", { message: error?.message ?? String(error) })));
    root.setAttribute("data-ready", "true");
    markReady();
  };
  PAGES[name]().then((page) => {
    // Another page may have been asked for while this one loaded.
    if (root.isConnected) page.default(root, { who });
  }).catch(failed);
}

function showLogin(message = "") {
  who = null;
  stopConfirmations();
  stopModelBanner();
  document.body.classList.remove("signed-in");
  $("#login").hidden = false;
  $("#app").hidden = true;
  $("#app").replaceChildren();
  $("#nav").replaceChildren();
  $("#nav").hidden = true;
  $("#logout").hidden = true;
  $("#whoami").textContent = "";
  const error = $("#login-error");
  error.textContent = message;
  error.hidden = message === "";
  document.title = "homed";
  $("#token").focus();
  markReady();
}

function showApp(identity) {
  who = identity;
  document.body.classList.add("signed-in");
  $("#login").hidden = true;
  $("#app").hidden = false;
  $("#nav").hidden = false;
  $("#logout").hidden = false;
  buildNav();
  route();
  if (who.trust !== "guest") listen();
  startConfirmations(who);
  startModelBanner(who);
}

function logout(message = "") {
  listening?.abort();
  listening = null;
  stopConfirmations();
  stopModelBanner();
  clearToken();
  localStorage.removeItem(WHO_KEY);
  forgetMedia();
  resetChat();
  showLogin(message);
}

/** Checks a token with GET /api/whoami; a wrong one leaves the login page up with the API's message. */
async function signIn(token, button) {
  const error = $("#login-error");
  error.hidden = true;
  if (button) button.disabled = true;
  try {
    const identity = await request("/api/whoami", { token, quiet: true });
    setToken(token);
    localStorage.setItem(WHO_KEY, JSON.stringify({ name: identity.name, trust: identity.trust }));
    if (who?.name !== identity.name || who?.trust !== identity.trust) showApp(identity);
  } catch (failure) {
    if (failure?.status === 401 || failure?.status === 403) {
      clearToken();
      localStorage.removeItem(WHO_KEY);
    }
    const refused = failure?.status === 401 || failure?.status === 403;
    // Shown from the remembered identity and homed not answering now: the app stays, its pages say what failed.
    if (!refused && who && !button) return;
    showLogin(failure?.message ?? String(failure));
    if (!refused && getToken() !== null) {
      $("#login-error").append(" ", t("retryHint"));
    }
  } finally {
    if (button) button.disabled = false;
  }
}

const sleep = (ms, signal) =>
  new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => {
      clearTimeout(timer);
      resolve();
    }, { once: true });
  });

/** GET /api/events, read as SSE for as long as someone is logged in; reconnects with backoff when it ends. */
async function listen() {
  listening?.abort();
  const control = new AbortController();
  listening = control;
  const { signal } = control;
  let delay = 1000;
  while (!signal.aborted) {
    try {
      const response = await request("/api/events", { raw: true, signal });
      await readSse(response, ({ event, data }) => {
        if (event === "ready") delay = 1000;
        else if (event === "message") pushed(parseJson(data, { text: data }));
      });
    } catch (error) {
      if (signal.aborted || error?.status === 401 || error?.status === 403) return;
    }
    await sleep(delay + Math.random() * 500, signal);
    delay = Math.min(delay * 2, 30_000);
  }
}

onUnauthorized((error) => logout(error.message));

$("#login-form").addEventListener("submit", (event) => {
  event.preventDefault();
  signIn($("#token").value.trim(), event.submitter ?? $("#login-form button"));
});
$("#logout").addEventListener("click", () => logout());
$("#lang-toggle").addEventListener("click", () => {
  setLang(lang === "zh" ? "en" : "zh");
  translate();
  if (who) {
    buildNav();
    route();
    renderConfirmations();
    renderModelBanner();
  }
});
addEventListener("hashchange", route);

translate();
const stored = getToken();
// No token stored: with none configured (homed on loopback only) /api/whoami answers without one — straight in.
if (stored === null) request("/api/whoami", { quiet: true }).then(showApp, () => showLogin());
else {
  // The last identity of this token shows the app now; whoami, asked at the same time, corrects or ends it.
  const remembered = parseJson(localStorage.getItem(WHO_KEY) ?? "null", null);
  if (remembered && typeof remembered.name === "string" && VISIBLE[remembered.trust]) showApp(remembered);
  signIn(stored);
}
