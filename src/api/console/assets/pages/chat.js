// Chat: the one conversation, a streamed reply per message, pushed messages (reminders) as they arrive.
import { api, mediaUrl, request } from "../api.js";
import { $, fill, fmtTime, h, load, markReady, parseJson, pretty, show, statusLine } from "../dom.js";
import { t } from "../i18n.js";
import { markdown } from "../markdown.js";
import { readSse } from "../sse.js";

let guestLog = null; // a guest has no stored conversation to reload: their log lives for the session
let currentLog = null; // the log on the page, once its history is in
const received = []; // this session's pushed messages, shown as such when the chat is opened again
let unread = 0;
let onUnread = () => {};

/** Forgets the session's messages (at logout). */
export function resetChat() {
  guestLog = null;
  currentLog = null;
  received.length = 0;
  unread = 0;
}

/** Called with the number of pushed messages not seen yet (for the nav's badge). */
export const onUnreadChange = (handler) => {
  onUnread = handler;
};

/** The attachments of a message or pushed event, as [{ media, kind, name, mime }]. */
function mediaItems(value, kind) {
  if (!value) return [];
  if (typeof value === "string") return [{ media: value, kind }];
  if (Array.isArray(value)) return value.flatMap((item) => mediaItems(item, kind));
  if (typeof value === "object") {
    const id = value.media ?? value.id;
    return typeof id === "string" || value.url
      ? [{ media: id, url: value.url, kind: value.kind ?? kind, name: value.name, mime: value.mime }]
      : [];
  }
  return [];
}

/** An <img>, <audio>, <video> or link for an attachment; media ids are fetched with the token. */
function mediaElement(item) {
  const kind = item.kind ?? (item.mime ?? "").split("/")[0];
  const name = item.name ?? item.media ?? "";
  const el = kind === "image"
    ? h("img", { class: "msg-media", alt: name || t("image") })
    : kind === "audio" || kind === "voice"
    ? h("audio", { class: "msg-media", controls: true, preload: "metadata" })
    : kind === "video"
    ? h("video", { class: "msg-media", controls: true, preload: "metadata" })
    : h("a", { class: "msg-file", download: name || "file" }, name || t("file"));
  const set = (url) => el.setAttribute(el.tagName === "A" ? "href" : "src", url);
  if (item.localUrl) set(item.localUrl);
  else if (item.media) {
    mediaUrl(item.media).then(set, (error) => el.replaceWith(h("span", { class: "msg-error" }, error.message)));
  }
  return el;
}

/** homed's markers, as `text/untrusted.ts` escapes them in what people and the model wrote (`\\[via …`). */
const ESCAPED_MARKER = /(?<!\\)((?:\\\\)*)\\([[［])(?=\s*(?:via\s|homed\b|end of homed\b|said\s+by\s))/giu;
const REFERENCE = /^\[homed reference[^\n]*\][\s\S]*?\n\[end of homed reference\]\n*/;
const TAG = /^\[via [^\]\n]*?, from [^\]\n]*?, trust (?:owner|household|guest)\] ?/;

/**
 * What someone wrote, as a stored message shows it: without the reference block and the `[via …, from …, trust …]` tag
 * homed put in front of it for the model, and with the markers it escaped in the text shown as written.
 *
 * @example shownText("[via http, from owner, trust owner] Lights \\[via x] off") // "Lights [via x] off"
 */
export function shownText(text) {
  return String(text ?? "").replace(REFERENCE, "").replace(TAG, "").replace(ESCAPED_MARKER, "$1$2");
}

/** Fills a message's text: the butler's words as Markdown (safe: nodes, never HTML), anyone else's as written. */
function setText(el, role, text) {
  const rich = role === "assistant" || role === "event";
  el.classList.toggle("md", rich);
  if (rich && text) el.replaceChildren(markdown(text, { headingOffset: 3 }));
  else el.textContent = text ?? "";
}

/** One message element: `.msg[data-role]` with a `.msg-channel`. */
function message({ role, text, channel, sender, time, media = [] }) {
  const body = h("div", { class: "msg-text" });
  setText(body, role, text);
  return h(
    "article",
    { class: `msg msg-${role}`, "data-role": role },
    h(
      "div",
      { class: "msg-meta" },
      h("span", { class: "msg-sender" }, sender ?? ""),
      h("span", { class: "msg-channel" }, channel ?? ""),
      time ? h("time", {}, fmtTime(time)) : null,
    ),
    h("div", { class: "msg-tools" }),
    body,
    media.length ? h("div", { class: "msg-attachments" }, media.map(mediaElement)) : null,
  );
}

function toolCallsOf(calls) {
  return h(
    "details",
    { class: "tool-calls" },
    h("summary", {}, t("toolCalls", { names: calls.map((call) => call.name).join(", ") })),
    calls.map((call) =>
      h("div", { class: "tool-call" }, h("code", {}, call.name), h("pre", {}, pretty(call.arguments)))
    ),
  );
}

/** The conversation's entries as elements; a tool result is named after the call it answers. */
function entryElements(entries, pushedTexts) {
  const callNames = new Map();
  return entries.map((entry) => {
    // A message pushed in this session is in the conversation as the butler's: shown as the pushed message it was.
    const wasPushed = entry.role === "assistant" && !entry.tool_calls?.length && pushedTexts.delete(entry.text ?? "");
    const base = {
      role: wasPushed ? "event" : entry.role,
      sender: entry.role === "assistant" ? t("butler") : entry.sender,
      channel: entry.source,
      time: entry.time,
      media: mediaItems(entry.attachments ?? entry.media),
    };
    if (entry.role === "tool") {
      const name = callNames.get(entry.tool_call_id) ?? entry.tool_call_id ?? "";
      const el = message({ ...base, sender: t("tool"), text: "" });
      el.querySelector(".msg-text").append(
        h(
          "details",
          { class: "tool-result" },
          h("summary", {}, t("toolResult", { name })),
          h("pre", {}, entry.text ?? ""),
        ),
      );
      return el;
    }
    const el = message({ ...base, text: entry.role === "tool" ? entry.text : shownText(entry.text) });
    const calls = Array.isArray(entry.tool_calls) ? entry.tool_calls : [];
    for (const call of calls) callNames.set(call.id, call.name);
    if (calls.length) el.querySelector(".msg-tools").append(toolCallsOf(calls));
    return el;
  });
}

function scrollDown(log) {
  log.scrollTop = log.scrollHeight;
}

function eventElement(data) {
  return message({
    role: "event",
    sender: t("butler"),
    channel: data.channel,
    time: data.time ?? Date.now(),
    text: data.text ?? "",
    media: mediaItems(data.media, data.type === "message" ? undefined : data.type),
  });
}

/** A pushed message (`message` of /api/events): shown in the log if the chat is open, else counted as unread. */
export function pushed(data) {
  received.push(data);
  if (received.length > 100) received.shift();
  if (currentLog?.isConnected) {
    currentLog.append(eventElement(data));
    scrollDown(currentLog);
  } else {
    unread += 1;
    onUnread(unread);
  }
}

/**
 * Makes the log as tall as the screen allows with the form below it in view (on a phone too, where the header, the
 * banners and the keyboard take their share): the log's height follows the visible viewport while the page is shown.
 */
function fitToScreen(log, form) {
  const view = globalThis.visualViewport;
  const fit = () => {
    if (!log.isConnected) {
      stop();
      return;
    }
    const height = view?.height ?? innerHeight;
    const top = log.getBoundingClientRect().top + scrollY;
    const room = Math.floor(height - top - form.offsetHeight - 12);
    log.style.height = `${Math.max(160, room)}px`;
  };
  const watched = [document.querySelector(".top"), $("#model-banner"), $("#confirmations"), form];
  const observer = new ResizeObserver(() => requestAnimationFrame(fit));
  for (const el of watched) if (el) observer.observe(el);
  (view ?? globalThis).addEventListener("resize", fit);
  function stop() {
    observer.disconnect();
    (view ?? globalThis).removeEventListener("resize", fit);
  }
  requestAnimationFrame(fit);
}

function readFile(file) {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(reader.result);
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(file);
  });
}

/** The chat page. */
export default function chat(root, ctx) {
  const guest = ctx.who.trust === "guest";
  const log = guest ? (guestLog ??= h("div", { id: "chat-log", class: "chat-log", "aria-live": "polite" })) : h("div", {
    id: "chat-log",
    class: "chat-log",
    "aria-live": "polite",
  });
  currentLog = null;
  unread = 0;
  onUnread(0);
  const status = statusLine();
  const input = h("textarea", {
    id: "chat-input",
    rows: 2,
    placeholder: t("chatPlaceholder"),
    "aria-label": t("message"),
  });
  const file = h("input", { type: "file", id: "chat-file", accept: "image/*,audio/*", multiple: true, hidden: true });
  const send = h("button", { type: "submit", id: "chat-send" }, t("send"));
  const chips = h("div", { class: "chips" });
  const pending = [];
  let busy = false;

  const renderChips = () =>
    fill(
      chips,
      ...pending.map((item, index) =>
        h(
          "span",
          { class: "chip" },
          item.name,
          h("button", {
            type: "button",
            class: "chip-remove",
            "aria-label": t("remove"),
            onclick: () => {
              pending.splice(index, 1);
              renderChips();
            },
          }, "×"),
        )
      ),
    );

  file.addEventListener("change", async () => {
    for (const picked of file.files ?? []) {
      const kind = picked.type.split("/")[0];
      if (kind !== "image" && kind !== "audio") {
        show(status, t("attachKinds", { name: picked.name }), "error");
        continue;
      }
      try {
        pending.push({ name: picked.name, data: await readFile(picked), kind, localUrl: URL.createObjectURL(picked) });
      } catch {
        show(status, t("fileReadFailed", { name: picked.name }), "error");
      }
    }
    file.value = "";
    renderChips();
  });

  async function submit() {
    const text = input.value;
    if (busy || (!text.trim() && pending.length === 0)) return;
    busy = true;
    send.disabled = true;
    show(status, "");
    const attachments = pending.splice(0);
    renderChips();
    input.value = "";
    const mine = message({
      role: "user",
      sender: ctx.who.name,
      channel: "http",
      time: Date.now(),
      text,
      media: attachments,
    });
    const reply = message({ role: "assistant", sender: t("butler"), channel: "", text: "" });
    reply.classList.add("streaming");
    log.append(mine, reply);
    scrollDown(log);
    const replyText = reply.querySelector(".msg-text");
    const fail = (why) => replyText.append(h("p", { class: "msg-error" }, why));
    // The reply so far, drawn as Markdown at most once a frame while it streams.
    let sofar = "";
    let drawing = 0;
    const draw = () => {
      drawing = 0;
      setText(replyText, "assistant", sofar);
      scrollDown(log);
    };
    const settle = () => {
      if (!drawing) return;
      cancelAnimationFrame(drawing);
      draw();
    };
    try {
      const response = await request("/api/chat/stream", {
        method: "POST",
        raw: true,
        body: {
          text,
          ...(attachments.length ? { attachments: attachments.map(({ data, name }) => ({ data, name })) } : {}),
        },
      });
      let ended = false;
      await readSse(response, ({ event, data }) => {
        const body = parseJson(data);
        if (event === "delta") {
          sofar += body.text ?? "";
          drawing ||= requestAnimationFrame(draw);
        } else if (event === "tool") {
          const line = message({ role: "tool", sender: t("tool"), channel: "", text: "" });
          line.querySelector(".msg-text").append(
            h(
              "details",
              { class: `tool-event ${body.ok === false ? "failed" : "ok"}` },
              h("summary", {}, t(body.ok === false ? "toolFailed" : "toolOk", { name: body.name ?? "" })),
              h("pre", {}, pretty(body)),
            ),
          );
          log.insertBefore(line, reply);
        } else if (event === "done") {
          ended = true;
          cancelAnimationFrame(drawing);
          drawing = 0;
          if (typeof body.reply === "string") sofar = body.reply;
          setText(replyText, "assistant", sofar);
          reply.querySelector(".msg-channel").textContent = body.channel ?? "";
          reply.querySelector(".msg-meta").append(h("time", {}, fmtTime(Date.now())));
        } else if (event === "error") {
          ended = true;
          settle();
          reply.classList.add("failed");
          fail(body.message ?? body.code ?? t("failed"));
        }
        scrollDown(log);
      });
      settle();
      if (!ended) fail(t("streamEnded"));
    } catch (error) {
      settle();
      reply.classList.add("failed");
      fail(error.message);
    } finally {
      busy = false;
      send.disabled = false;
      reply.classList.remove("streaming");
      scrollDown(log);
    }
  }

  input.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing && event.keyCode !== 229) {
      event.preventDefault();
      submit();
    }
  });
  const form = h(
    "form",
    {
      class: "chat-form",
      onsubmit: (event) => {
        event.preventDefault();
        submit();
      },
    },
    chips,
    input,
    h(
      "div",
      { class: "row" },
      h("button", { type: "button", id: "chat-attach", class: "secondary", onclick: () => file.click() }, t("attach")),
      file,
      h("span", { class: "hint" }, t("enterHint")),
      send,
    ),
  );
  root.append(h("h2", { class: "chat-title" }, t("nav_chat")), status, log, form);
  fitToScreen(log, form);

  if (guest) {
    currentLog = log;
    root.setAttribute("data-ready", "true");
    markReady();
    scrollDown(log);
    return;
  }
  load(root, status, async () => {
    // Pushed messages that came before (or while) the history loads are shown after it, unless it holds them.
    const pushedTexts = new Set(received.map((data) => data.text ?? ""));
    try {
      const body = await api.get("/api/conversation?limit=50");
      log.prepend(...entryElements(body.entries ?? [], pushedTexts));
    } catch (error) {
      if (error.status !== 403) throw error;
    } finally {
      log.append(...received.filter((data) => pushedTexts.has(data.text ?? "")).map(eventElement));
      currentLog = log;
      unread = 0;
      onUnread(0);
      scrollDown(log);
    }
  });
}
