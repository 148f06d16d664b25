// A small, safe Markdown renderer: every node is made with createElement and text with text nodes, so nothing the
// model, memory, knowledge or a plugin wrote can ever become markup — a `<script>` or `<img onerror>` in the text
// stays text. Paragraphs (a single line break kept), **bold**, *italic*, ~~struck~~, `code`, fenced code, lists
// (nested by indentation), block quotes, rules, headings, simple tables, and links to http(s) only (`rel="noopener
// noreferrer"`, a new tab); an image is shown as a link to it, never loaded. HTML comments (`<!-- … -->`, such as the
// knowledge's `learned by homed` markers) are dropped outside code.
import { badge, h } from "./dom.js";
import { t } from "./i18n.js";

/** Characters a backslash makes literal. */
const ESCAPABLE = /[!"#$%&'()*+,\-./:;<=>?@[\\\]^_`{|}~]/;
const LIST_ITEM = /^(\s*)([-*+]|\d{1,9}[.)])\s+(.*)$/;
const FENCE = /^(\s{0,3})(`{3,}|~{3,})\s*([^`\s]*)/;
const HEADING = /^\s{0,3}(#{1,6})\s+(.*?)(?:\s+#+)?\s*$/;
const RULE = /^\s{0,3}([-*_])(\s*\1){2,}\s*$/;
const QUOTE = /^\s{0,3}>\s?/;
const TABLE_RULE = /^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$/;

/** A link's target when it is an http(s) URL (normalised), else undefined. */
export function safeHref(raw) {
  const text = String(raw ?? "").trim();
  if (!/^https?:\/\//i.test(text)) return undefined;
  try {
    const url = new URL(text);
    return url.protocol === "http:" || url.protocol === "https:" ? url.href : undefined;
  } catch {
    return undefined;
  }
}

const link = (href, children) => h("a", { href, target: "_blank", rel: "noopener noreferrer" }, children);

/** Where the run of `delimiter` that closes one opened at `from` starts, or -1. */
function closing(text, delimiter, from) {
  for (let at = text.indexOf(delimiter, from); at >= 0; at = text.indexOf(delimiter, at + 1)) {
    if (at === from) continue; // nothing inside
    if (/\s/.test(text[at - 1])) continue; // "a * b": not a closing one
    if (delimiter.length === 1 && text[at + 1] === delimiter) {
      at += 1; // part of a longer run ("**"): skip it
      continue;
    }
    if (delimiter[0] === "_" && /[\p{L}\p{N}]/u.test(text[at + delimiter.length] ?? "")) continue; // snake_case
    return at;
  }
  return -1;
}

/** The bracketed part starting at `open` ("[", nested brackets allowed): the index of its "]", or -1. */
function matchBracket(text, open) {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    if (text[i] === "\\") i++;
    else if (text[i] === "[") depth++;
    else if (text[i] === "]" && --depth === 0) return i;
  }
  return -1;
}

/** Where a run of exactly `run` backticks starts at or after `from` (a code span's end), or -1. */
function closingTicks(text, from, run) {
  for (let at = text.indexOf("`", from); at >= 0; at = text.indexOf("`", at)) {
    let length = 1;
    while (text[at + length] === "`") length++;
    if (length === run) return at;
    at += length;
  }
  return -1;
}

/** The ")" that closes the "(" at `open` (nested pairs allowed, as in a URL), or -1. */
function closingParen(text, open) {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    if (text[i] === "\\") i++;
    else if (text[i] === "(") depth++;
    else if (text[i] === ")" && --depth === 0) return i;
    else if (text[i] === "\n") return -1;
  }
  return -1;
}

/** A bare URL at `at`: its end (trailing punctuation and unmatched parentheses left out). */
function urlEnd(text, at) {
  let end = at;
  while (end < text.length && /[\x21-\x7e]/.test(text[end]) && text[end] !== "<" && text[end] !== ">") end++;
  while (end > at && /[.,;:!?'"*_~]/.test(text[end - 1])) end--;
  const url = text.slice(at, end);
  if (url.endsWith(")") && (url.match(/\(/g) ?? []).length < (url.match(/\)/g) ?? []).length) end--;
  return end;
}

/**
 * Inline Markdown as nodes: code spans, strong, emphasis, strikethrough, links (http(s) only), autolinks and bare
 * URLs, backslash escapes, line breaks.
 *
 * @example inline("**hi** <b>") // [<strong>hi</strong>, " <b>"] — the "<b>" is text
 */
export function inline(text) {
  const out = [];
  let buffer = "";
  const flush = () => {
    if (buffer) out.push(buffer);
    buffer = "";
  };
  const push = (node) => {
    flush();
    out.push(node);
  };
  for (let i = 0; i < text.length;) {
    const c = text[i];
    if (c === "\\" && ESCAPABLE.test(text[i + 1] ?? "")) {
      buffer += text[i + 1];
      i += 2;
      continue;
    }
    if (c === "\n") {
      push(h("br", {}));
      i += 1;
      continue;
    }
    if (c === "`") {
      let run = 1;
      while (text[i + run] === "`") run++;
      const end = closingTicks(text, i + run, run);
      if (end >= 0) {
        let code = text.slice(i + run, end).replace(/\n/g, " ");
        if (/^ .*[^ ].* $/.test(code)) code = code.slice(1, -1);
        push(h("code", {}, code));
        i = end + run;
        continue;
      }
      buffer += "`".repeat(run);
      i += run;
      continue;
    }
    if (c === "*" || c === "_" || c === "~") {
      const double = text[i + 1] === c;
      const delimiter = double ? c + c : c;
      const opensWord = !/\s/.test(text[i + delimiter.length] ?? " ");
      const afterWord = c === "_" && /[\p{L}\p{N}]/u.test(text[i - 1] ?? "");
      if ((c !== "~" || double) && opensWord && !afterWord) {
        const end = closing(text, delimiter, i + delimiter.length);
        if (end > 0) {
          const inner = inline(text.slice(i + delimiter.length, end));
          push(h(c === "~" ? "del" : double ? "strong" : "em", {}, inner));
          i = end + delimiter.length;
          continue;
        }
      }
      buffer += delimiter;
      i += delimiter.length;
      continue;
    }
    const image = c === "!" && text[i + 1] === "[";
    if (c === "[" || image) {
      const open = image ? i + 1 : i;
      const close = matchBracket(text, open);
      if (close > 0 && text[close + 1] === "(") {
        const end = closingParen(text, close + 1);
        if (end > 0) {
          const [target] = text.slice(close + 2, end).trim().split(/\s+/);
          const href = safeHref(target?.replace(/^<|>$/g, ""));
          const label = text.slice(open + 1, close);
          const children = image ? [label || href || ""] : inline(label);
          push(href ? link(href, children) : h("span", {}, children));
          i = end + 1;
          continue;
        }
      }
      buffer += image ? "![" : "[";
      i = open + 1;
      continue;
    }
    if (c === "<") {
      const end = text.indexOf(">", i + 1);
      const href = end > 0 ? safeHref(text.slice(i + 1, end)) : undefined;
      if (href && !/\s/.test(text.slice(i + 1, end))) {
        push(link(href, text.slice(i + 1, end)));
        i = end + 1;
        continue;
      }
    }
    // A bare URL, unless it continues a word (Chinese runs into one without a space: "链接https://…" is linked).
    if (
      (c === "h" || c === "H") && /^https?:\/\//i.test(text.slice(i, i + 8)) && !/[A-Za-z0-9]/.test(text[i - 1] ?? "")
    ) {
      const end = urlEnd(text, i);
      const href = safeHref(text.slice(i, end));
      if (href) {
        push(link(href, text.slice(i, end)));
        i = end;
        continue;
      }
    }
    buffer += c;
    i += 1;
  }
  flush();
  return out;
}

/** `text` with its HTML comments removed, except inside fenced code (a comment left open stays as text). */
export function dropComments(text) {
  const lines = text.split("\n");
  const out = [];
  let chunk = [];
  let fence = null;
  const flushChunk = () => {
    if (chunk.length) out.push(...chunk.join("\n").replace(/<!--[\s\S]*?-->/g, "").split("\n"));
    chunk = [];
  };
  for (const line of lines) {
    const open = FENCE.exec(line);
    if (fence) {
      out.push(line);
      if (line.trim().startsWith(fence)) fence = null;
    } else if (open) {
      flushChunk();
      out.push(line);
      fence = open[2];
    } else chunk.push(line);
  }
  flushChunk();
  return out.join("\n");
}

/** A line that starts a block other than a paragraph. */
const startsBlock = (line) =>
  FENCE.test(line) || HEADING.test(line) || RULE.test(line) || QUOTE.test(line) || LIST_ITEM.test(line);

const indentOf = (line) => line.replace(/\t/g, "    ").match(/^ */)[0].length;

const cells = (line) => {
  const trimmed = line.trim().replace(/^\|/, "").replace(/(?<!\\)\|$/, "");
  return trimmed.split(/(?<!\\)\|/).map((cell) => cell.trim().replace(/\\\|/g, "|"));
};

/** Renders block-level Markdown of `lines` into `add`, with `options` (headingOffset, learned). */
function blocks(lines, add, options) {
  for (let i = 0; i < lines.length;) {
    const line = lines[i];
    if (line.trim() === "") {
      i += 1;
      continue;
    }
    const fence = FENCE.exec(line);
    if (fence) {
      const code = [];
      for (i += 1; i < lines.length && !lines[i].trim().startsWith(fence[2]); i += 1) code.push(lines[i]);
      i += 1;
      add(h("pre", {}, h("code", fence[3] ? { "data-lang": fence[3] } : {}, code.join("\n"))));
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading) {
      const title = heading[2];
      const learned = options.learned?.has(title) ?? false;
      if (options.learned) options.inLearned = learned;
      const level = Math.min(heading[1].length + options.headingOffset, 6);
      add(h(`h${level}`, {}, inline(title), learned ? badge(t("learned"), "learned-badge") : null));
      i += 1;
      continue;
    }
    if (RULE.test(line)) {
      add(h("hr", {}));
      i += 1;
      continue;
    }
    if (QUOTE.test(line)) {
      const quoted = [];
      for (; i < lines.length && QUOTE.test(lines[i]); i += 1) quoted.push(lines[i].replace(QUOTE, ""));
      const quote = h("blockquote", {});
      blocks(quoted, (el) => quote.append(el), { ...options, learned: undefined });
      add(quote);
      continue;
    }
    if (LIST_ITEM.test(line)) {
      const [list, next] = listAt(lines, i, options);
      add(list);
      i = next;
      continue;
    }
    if (line.includes("|") && i + 1 < lines.length && TABLE_RULE.test(lines[i + 1]) && lines[i + 1].includes("-")) {
      const head = cells(line);
      const rows = [];
      for (i += 2; i < lines.length && lines[i].includes("|") && lines[i].trim() !== ""; i += 1) {
        rows.push(cells(lines[i]));
      }
      add(h(
        "div",
        { class: "table-wrap" },
        h(
          "table",
          { class: "md-table" },
          h("thead", {}, h("tr", {}, head.map((cell) => h("th", { scope: "col" }, inline(cell))))),
          h("tbody", {}, rows.map((row) => h("tr", {}, head.map((_, n) => h("td", {}, inline(row[n] ?? "")))))),
        ),
      ));
      continue;
    }
    const para = [];
    for (; i < lines.length && lines[i].trim() !== "" && (para.length === 0 || !startsBlock(lines[i])); i += 1) {
      para.push(lines[i].trim());
    }
    add(h("p", {}, inline(para.join("\n"))));
  }
}

/** The list starting at line `start`: [element, the index after it]; deeper-indented items nest in the last item. */
function listAt(lines, start, options) {
  const first = LIST_ITEM.exec(lines[start]);
  const base = indentOf(lines[start]);
  const ordered = /\d/.test(first[2]);
  const number = ordered ? parseInt(first[2], 10) : 1;
  const list = h(ordered ? "ol" : "ul", ordered && number !== 1 ? { start: number } : {});
  let item = null;
  let text = [];
  const close = () => {
    if (item) item.prepend(...inline(text.join("\n")));
    text = [];
  };
  let i = start;
  while (i < lines.length) {
    const line = lines[i];
    const match = LIST_ITEM.exec(line);
    if (line.trim() === "") {
      // A blank line ends the list unless an item of it (or deeper) follows.
      const next = lines.slice(i + 1).find((l) => l.trim() !== "");
      if (!next || indentOf(next) < base || (!LIST_ITEM.test(next) && indentOf(next) <= base)) break;
      i += 1;
      continue;
    }
    if (match && indentOf(line) >= base && indentOf(line) < base + 2) {
      if (/\d/.test(match[2]) !== ordered) break;
      close();
      item = h("li", {});
      list.append(item);
      text = [match[3]];
      i += 1;
      continue;
    }
    if (match && indentOf(line) >= base + 2 && item) {
      close();
      const [nested, next] = listAt(lines, i, options);
      item.append(nested);
      i = next;
      continue;
    }
    if (indentOf(line) < base || (!match && startsBlock(line) && indentOf(line) <= base)) break;
    if (indentOf(line) > base && item) {
      text.push(line.trim());
      i += 1;
      continue;
    }
    if (item && !startsBlock(line)) {
      text.push(line.trim()); // a lazy continuation line
      i += 1;
      continue;
    }
    break;
  }
  close();
  return [list, i];
}

/**
 * Markdown as a `div.markdown` of nodes. Options: `headingOffset` (added to a heading's level, so `#` is below the
 * page's own headings; default 2), `learned` (headings of sections the butler wrote: marked, with what follows).
 *
 * @example markdown("Hi <img src=x onerror=alert(1)>") // <div class="markdown"><p>Hi &lt;img …&gt;</p></div>
 */
export function markdown(text, options = {}) {
  const out = h("div", { class: "markdown" });
  const state = { headingOffset: options.headingOffset ?? 2, learned: options.learned, inLearned: false };
  const source = dropComments(String(text ?? "").replace(/\r\n?/g, "\n"));
  blocks(source.split("\n"), (el) => {
    if (state.inLearned) el.classList.add("learned-section");
    out.append(el);
  }, state);
  return out;
}
