// DOM helpers: every element is built with createElement and textContent, never from HTML text.
import { locale, t } from "./i18n.js";

const SVG = "http://www.w3.org/2000/svg";
const PROPS = new Set(["value", "checked", "disabled", "hidden", "open", "readOnly", "required", "selected"]);

/**
 * An element: `h("button", { class: "x", onclick: f, "data-id": id }, "text", child)`; a tag "svg:circle" is SVG.
 * Props that are false, null or undefined are left out; children may be nested arrays, strings, numbers or nodes.
 */
export function h(tag, props, ...children) {
  const svg = tag.startsWith("svg:");
  const el = svg ? document.createElementNS(SVG, tag.slice(4)) : document.createElement(tag);
  for (const [key, value] of Object.entries(props ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "text") el.textContent = String(value);
    else if (key.startsWith("on") && typeof value === "function") el.addEventListener(key.slice(2), value);
    else if (!svg && PROPS.has(key)) el[key] = value;
    else el.setAttribute(key, value === true ? "" : String(value));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children) {
    if (child === undefined || child === null || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else el.append(child instanceof Node ? child : String(child));
  }
}

/** Replaces the children of `el` (children as for {@link h}: null and false left out, arrays flattened). */
export function fill(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

/** The first element matching `selector`. */
export const $ = (selector, from = document) => from.querySelector(selector);

/** A status line (loading, errors, results) for a part of a page. */
export const statusLine = () => h("p", { class: "status", role: "status", hidden: true });

const pending = new WeakMap();
let marked = false;

/** Marks the moment the console first shows a usable page (`performance.mark("ready")`, for bench/console). */
export function markReady() {
  if (marked) return;
  marked = true;
  performance.mark("ready");
}

/**
 * Runs `work` for a page: `data-ready` is "false" on the page's root while any of its work runs, "true" after;
 * `status` shows "Loading…" meanwhile and the API's message if it fails. Resolves to true when it succeeded.
 */
export async function load(root, status, work) {
  pending.set(root, (pending.get(root) ?? 0) + 1);
  root.setAttribute("data-ready", "false");
  if (status) show(status, t("loading"), "loading");
  try {
    const result = await work();
    if (status && status.classList.contains("loading")) show(status, "");
    return result ?? true;
  } catch (error) {
    if (status) show(status, error?.message || String(error), "error");
    return false;
  } finally {
    const left = pending.get(root) - 1;
    pending.set(root, left);
    if (left === 0) {
      root.setAttribute("data-ready", "true");
      markReady();
    }
  }
}

/** Shows `text` in a status line (hidden when empty), with a kind: loading, error or ok. */
export function show(status, text, kind = "") {
  status.className = `status ${kind}`.trim();
  status.textContent = text;
  status.hidden = text === "";
}

const asDate = (value) => new Date(typeof value === "string" && /^\d+$/.test(value) ? Number(value) : value);

/** A time (ISO text or epoch ms) in the page's language; "—" when there is none. */
export function fmtTime(value, withSeconds = false) {
  if (value === undefined || value === null || value === "") return "—";
  const date = asDate(value);
  if (Number.isNaN(date.getTime())) return String(value);
  return date.toLocaleString(locale(), {
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
    hour: "2-digit",
    minute: "2-digit",
    ...(withSeconds ? { second: "2-digit" } : {}),
  });
}

/** A number in the page's language; "—" when it is not one. */
export function fmtNum(value, digits = 0) {
  if (typeof value !== "number" || !Number.isFinite(value)) return "—";
  return value.toLocaleString(locale(), { maximumFractionDigits: digits });
}

/** A duration in ms, as "850 ms", "12.3 s", "4 min", "3 h 20 min", "2 d 5 h". */
export function fmtDuration(ms) {
  if (typeof ms !== "number" || !Number.isFinite(ms)) return "—";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const minutes = Math.floor(ms / 60_000);
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours} h ${minutes % 60} min`;
  return `${Math.floor(hours / 24)} d ${hours % 24} h`;
}

/** A cost with its currency, or "—" without one. */
export function fmtCost(value, currency) {
  if (typeof value !== "number" || !Number.isFinite(value)) return "—";
  try {
    if (/^[A-Z]{3}$/.test(currency ?? "")) {
      return value.toLocaleString(locale(), { style: "currency", currency, maximumFractionDigits: 4 });
    }
  } catch { /* an unknown code: shown as text below */ }
  return `${fmtNum(value, 4)}${currency ? ` ${currency}` : ""}`;
}

/** Any JSON value as nested key/value lists (a service's status, a reload's result). */
export function kv(value, depth = 0) {
  if (value === null || value === undefined) return h("span", { class: "muted" }, "—");
  if (typeof value !== "object") {
    return h("span", { class: "value" }, typeof value === "number" ? fmtNum(value, 3) : String(value));
  }
  if (depth > 4) return h("code", {}, JSON.stringify(value));
  if (Array.isArray(value)) {
    if (value.length === 0) return h("span", { class: "muted" }, t("none"));
    if (value.every((item) => item === null || typeof item !== "object")) {
      return h("span", { class: "value" }, value.map((item) => String(item)).join(", "));
    }
    return h("ol", { class: "kv-list" }, value.map((item) => h("li", {}, kv(item, depth + 1))));
  }
  const entries = Object.entries(value);
  if (entries.length === 0) return h("span", { class: "muted" }, t("none"));
  return h("dl", { class: "kv" }, entries.map(([key, item]) => [h("dt", {}, key), h("dd", {}, kv(item, depth + 1))]));
}

/**
 * A table that becomes stacked cards on a phone: `columns` are [label, (row) => cell content, class?]. It comes in a
 * box that scrolls sideways should a cell's long word not fit on a wide screen; `id` is the table's.
 */
export function table(columns, rows, rowProps = () => ({}), id = undefined) {
  return h(
    "div",
    { class: "table-wrap" },
    h(
      "table",
      { class: "cards", id },
      h("thead", {}, h("tr", {}, columns.map(([label]) => h("th", { scope: "col" }, label)))),
      h(
        "tbody",
        {},
        rows.map((row) =>
          h(
            "tr",
            rowProps(row),
            columns.map(([label, cell, cls]) => h("td", { "data-label": label, class: cls }, cell(row))),
          )
        ),
      ),
    ),
  );
}

/** Text shortened to `max` characters. */
export const clip = (text, max) => {
  const value = String(text ?? "");
  return value.length > max ? `${value.slice(0, max - 1)}…` : value;
};

/** A small label ("holds", "learned", a state). */
export const badge = (text, kind = "") => h("span", { class: `badge ${kind}`.trim() }, text);

/** A section of a page with a heading. */
export const section = (title, ...children) => h("section", { class: "block" }, h("h3", {}, title), ...children);

/** Parses JSON, or gives `fallback`. */
export function parseJson(text, fallback = {}) {
  try {
    return JSON.parse(text);
  } catch {
    return fallback;
  }
}

/** JSON (or a string holding JSON) pretty-printed for a <pre>. */
export function pretty(value) {
  const parsed = typeof value === "string" ? parseJson(value, value) : value;
  return typeof parsed === "string" ? parsed : JSON.stringify(parsed, null, 2);
}

/**
 * Calls `refresh` now and every `ms` while the page is visible (and at once when it becomes visible again), never two
 * rounds at once; returns the function that stops it.
 */
export function pollWhileVisible(refresh, ms) {
  const control = new AbortController();
  let timer = null;
  const round = async () => {
    if (control.signal.aborted) return;
    if (document.visibilityState !== "hidden") await refresh();
    if (!control.signal.aborted) timer = setTimeout(round, ms);
  };
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "visible") refresh();
  }, { signal: control.signal });
  round();
  return () => {
    control.abort();
    clearTimeout(timer);
  };
}
