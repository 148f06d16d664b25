/**
 * The Telegram Bot API's formatting parsers (`parse_mode` "MarkdownV2", "HTML" and the legacy "Markdown"), written
 * for {@link ./fake_telegram.ts} from the Bot API's "Formatting options" and the behaviour of TDLib's
 * `td/telegram/MessageEntity.cpp` (which the Bot API server runs): the same reserved characters, the same entity
 * nesting, and the same error texts (`Character '.' is reserved and must be escaped with the preceding '\'`,
 * `Unsupported start tag "x" at byte offset 3`, `Can't find end of Bold entity at byte offset 0`…), byte offsets
 * counted in UTF-8 as the server counts them.
 *
 * One deliberate difference, on by default: TDLib passes a bare `&` (one that starts no entity), a bare `>` and a named
 * entity other than `&lt; &gt; &amp; &quot;` through as text, while the Bot API documentation says they must be
 * escaped. The fake refuses them ({@link ParseOptions.strictHtmlEscapes}), so homed is held to the documented rule,
 * and its description says that real Telegram is laxer.
 *
 * @module
 */

/** A `parse_mode` value (Telegram accepts any letter case). */
export type ParseMode = "HTML" | "MarkdownV2" | "Markdown";

/** A formatting entity of the parsed text, offsets and lengths in UTF-16 code units as the Bot API gives them. */
export interface TelegramEntity {
  type: string;
  offset: number;
  length: number;
  url?: string;
  language?: string;
  custom_emoji_id?: string;
}

/** The text a user sees (markup removed, entities decoded, whitespace trimmed) and its entities. */
export interface ParsedText {
  text: string;
  entities: TelegramEntity[];
}

/** How strictly to parse. */
export interface ParseOptions {
  /** Refuse a bare `&`, a bare `>` and unsupported named entities in HTML (default true; see the module comment). */
  strictHtmlEscapes?: boolean;
}

/**
 * A text Telegram refuses to parse; `message` is the part after `can't parse entities: `.
 *
 * @example
 * ```ts
 * import { EntityParseError, parseFormatted } from "./fake_telegram_format.ts";
 *
 * try {
 *   parseFormatted("<p>x</p>", "HTML");
 * } catch (error) {
 *   if (error instanceof EntityParseError) console.log(error.message); // Unsupported start tag "p" at byte offset 0
 * }
 * ```
 */
export class EntityParseError extends Error {
  override name = "EntityParseError";
}

const encoder = new TextEncoder();
/** The UTF-8 byte offset of `index` in `text`, as TDLib reports positions. */
function byteAt(text: string, index: number): number {
  return encoder.encode(text.slice(0, index)).length;
}

const reservedError = (char: string) =>
  new EntityParseError(`Character '${char}' is reserved and must be escaped with the preceding '\\'`);

/** TDLib's names of entity types, used in "Can't find end of <Type> entity" messages. */
const TYPE_NAMES: Record<string, string> = {
  bold: "Bold",
  italic: "Italic",
  underline: "Underline",
  strikethrough: "Strikethrough",
  spoiler: "Spoiler",
  text_link: "TextUrl",
  code: "Code",
  pre: "Pre",
  custom_emoji: "CustomEmoji",
  blockquote: "BlockQuote",
};

interface Open {
  type: string;
  /** Where the entity's text begins in the output. */
  start: number;
  /** Where its markup began in the source (a string index; reported in UTF-8 bytes). */
  at: number;
  language?: string;
  attribute?: string;
}

const escapable = (char: string | undefined) =>
  char !== undefined && char.charCodeAt(0) >= 1 && char.charCodeAt(0) <= 126;

/** Reads a `(...)` URL part of a MarkdownV2 link starting at `i` (the `(`); returns the URL and the `)`'s index. */
function readUrl(src: string, i: number): { url: string; end: number } {
  const begin = i + 1;
  let url = "";
  let j = begin;
  while (j < src.length && src[j] !== ")") {
    if (src[j] === "\\" && escapable(src[j + 1])) {
      url += src[j + 1];
      j += 2;
      continue;
    }
    url += src[j++];
  }
  if (j >= src.length) throw new EntityParseError(`Can't find end of a URL at byte offset ${byteAt(src, begin)}`);
  return { url, end: j };
}

/** After "```": the optional language and the one newline that follows; returns the index of the last char consumed. */
function preStart(src: string, i: number, open: Open): number {
  let end = i;
  while (end < src.length && !/\s/.test(src[end]!) && src[end] !== "`") end++;
  if (end !== i && end < src.length && src[end] !== "`") {
    open.language = src.slice(i, end);
    i = end;
  }
  if (src[i] === "\n" || src[i] === "\r") {
    i += (src[i + 1] === "\n" || src[i + 1] === "\r") && src[i] !== src[i + 1] ? 2 : 1;
  }
  return i - 1;
}

function parseMarkdownV2(src: string): ParsedText {
  let out = "";
  const entities: TelegramEntity[] = [];
  const stack: Open[] = [];
  let haveQuote = false;
  let lineStart = true;
  for (let i = 0; i < src.length; i++) {
    const c = src[i]!;
    if (c === "\\" && escapable(src[i + 1])) {
      i++;
      out += src[i];
      if (src[i] !== "\r") lineStart = src[i] === "\n";
      continue;
    }
    const top = stack.at(-1);
    // Inside code and pre only the backtick means markup; everywhere else the whole reserved set does.
    const reserved = top?.type === "code" || top?.type === "pre" ? "`" : "_*[]()~`>#+-=|{}.!\n";
    if (!reserved.includes(c)) {
      out += c;
      if (c !== "\r") lineStart = false;
      continue;
    }
    const ends = top !== undefined && (
      (haveQuote && c === "\n" && src[i + 1] !== ">") ||
      (top.type === "bold" && c === "*") ||
      (top.type === "italic" && c === "_" && src[i + 1] !== "_") ||
      (top.type === "underline" && c === "_" && src[i + 1] === "_") ||
      (top.type === "strikethrough" && c === "~") ||
      (top.type === "spoiler" && c === "|" && src[i + 1] === "|") ||
      (top.type === "code" && c === "`") ||
      (top.type === "pre" && c === "`" && src[i + 1] === "`" && src[i + 2] === "`") ||
      ((top.type === "text_link" || top.type === "custom_emoji") && c === "]")
    );
    if (!ends) {
      const open: Open = { type: "", start: 0, at: i };
      if (c === "_") {
        open.type = src[i + 1] === "_" ? "underline" : "italic";
        if (open.type === "underline") i++;
      } else if (c === "*") open.type = "bold";
      else if (c === "~") open.type = "strikethrough";
      else if (c === "[") open.type = "text_link";
      else if (c === "|" && src[i + 1] === "|") {
        open.type = "spoiler";
        i++;
      } else if (c === "!" && src[i + 1] === "[") {
        open.type = "custom_emoji";
        i++;
      } else if (c === "`") {
        open.type = src[i + 1] === "`" && src[i + 2] === "`" ? "pre" : "code";
        if (open.type === "pre") i = preStart(src, i + 3, open);
      } else if (c === "\n") {
        out += "\n";
        lineStart = true;
        continue;
      } else if (c === ">" && lineStart) {
        // A continuation line of the open quotation: its `>` is markup only.
        if (haveQuote) continue;
        open.type = "blockquote";
        haveQuote = true;
      } else throw reservedError(c);
      open.start = out.length;
      stack.push(open);
      continue;
    }
    const open = stack.pop()!;
    if (c === "\n" && open.type !== "blockquote") {
      throw new EntityParseError(
        `Can't find end of ${TYPE_NAMES[open.type]} entity at byte offset ${byteAt(src, open.at)}`,
      );
    }
    const entity: TelegramEntity = { type: open.type, offset: open.start, length: out.length - open.start };
    if (open.type === "underline" || open.type === "spoiler") i++;
    else if (open.type === "pre") {
      i += 2;
      if (open.language) entity.language = open.language;
    } else if (open.type === "text_link") {
      if (src[i + 1] === "(") {
        const { url, end } = readUrl(src, i + 1);
        entity.url = url;
        i = end;
      } else entity.url = out.slice(open.start);
    } else if (open.type === "custom_emoji") {
      if (src[i + 1] !== "(") throw new EntityParseError("The entity must contain a tg://emoji or tg://time URL");
      const { url, end } = readUrl(src, i + 1);
      const id = /^tg:\/\/emoji\?id=(\d+)$/.exec(url)?.[1];
      if (!id && !/^tg:\/\/time\?unix=\d+/.test(url)) {
        throw new EntityParseError("Invalid tg://emoji or tg://time URL specified");
      }
      if (id) entity.custom_emoji_id = id;
      i = end;
    } else if (open.type === "blockquote") {
      haveQuote = false;
      out += "\n";
      lineStart = true;
    }
    if (entity.length > 0) entities.push(entity);
  }
  if (haveQuote && stack.at(-1)?.type === "blockquote") {
    const open = stack.pop()!;
    if (out.length > open.start) {
      entities.push({ type: "blockquote", offset: open.start, length: out.length - open.start });
    }
  }
  const unclosed = stack.at(-1);
  if (unclosed) {
    throw new EntityParseError(
      `Can't find end of ${TYPE_NAMES[unclosed.type]} entity at byte offset ${byteAt(src, unclosed.at)}`,
    );
  }
  return { text: out, entities };
}

function parseLegacyMarkdown(src: string): ParsedText {
  let out = "";
  const entities: TelegramEntity[] = [];
  for (let i = 0; i < src.length; i++) {
    const c = src[i]!;
    if (c === "\\" && "_*`[".includes(src[i + 1] ?? "x")) {
      out += src[++i];
      continue;
    }
    if (!"_*`[".includes(c)) {
      out += c;
      continue;
    }
    // No escaping and no nesting inside an entity: it runs to the first closing character.
    const begin = i;
    const endChar = c === "[" ? "]" : c;
    const open: Open = { type: "", start: 0, at: i };
    const pre = c === "`" && src[i + 1] === "`" && src[i + 2] === "`";
    i = pre ? preStart(src, i + 3, open) + 1 : i + 1;
    const start = out.length;
    while (i < src.length && (src[i] !== endChar || (pre && !(src[i + 1] === "`" && src[i + 2] === "`")))) {
      out += src[i++];
    }
    if (i >= src.length) {
      throw new EntityParseError(`Can't find end of the entity starting at byte offset ${byteAt(src, begin)}`);
    }
    const entity: TelegramEntity = {
      type: c === "_" ? "italic" : c === "*" ? "bold" : c === "[" ? "text_link" : pre ? "pre" : "code",
      offset: start,
      length: out.length - start,
    };
    if (c === "[") {
      if (src[i + 1] === "(") {
        const close = src.indexOf(")", i + 2);
        entity.url = src.slice(i + 2, close < 0 ? src.length : close);
        i = close < 0 ? src.length : close;
      } else entity.url = out.slice(start);
    }
    if (pre) {
      i += 2;
      if (open.language) entity.language = open.language;
    }
    if (entity.length > 0) entities.push(entity);
  }
  return { text: out, entities };
}

const HTML_TAGS = new Set([
  "a",
  "b",
  "strong",
  "i",
  "em",
  "s",
  "strike",
  "del",
  "u",
  "ins",
  "tg-spoiler",
  "tg-emoji",
  "tg-time",
  "span",
  "pre",
  "code",
  "blockquote",
]);
const HTML_TYPES: Record<string, string> = {
  b: "bold",
  strong: "bold",
  i: "italic",
  em: "italic",
  u: "underline",
  ins: "underline",
  s: "strikethrough",
  strike: "strikethrough",
  del: "strikethrough",
  "tg-spoiler": "spoiler",
  span: "spoiler",
  a: "text_link",
  code: "code",
  pre: "pre",
  blockquote: "blockquote",
  "tg-emoji": "custom_emoji",
  "tg-time": "date_time",
};
const NAMED_ENTITIES: Record<string, string> = { lt: "<", gt: ">", amp: "&", quot: '"' };

/** Decodes the character reference at `src[i] === "&"`: the character and the index after it, or undefined. */
function htmlEntity(src: string, i: number): { char: string; next: number; named?: string } | undefined {
  const numeric = /^&#(x[0-9a-fA-F]*|[0-9]*)(;?)/.exec(src.slice(i, i + 12));
  if (numeric) {
    const digits = numeric[1]!;
    const code = digits.startsWith("x") ? parseInt(digits.slice(1) || "0", 16) : parseInt(digits || "0", 10);
    if (!code || code >= 0x10ffff || numeric[0].length - numeric[2]!.length >= 10) return undefined;
    return { char: String.fromCodePoint(code), next: i + numeric[0].length };
  }
  const named = /^&([a-zA-Z]*)(;?)/.exec(src.slice(i, i + 40))!;
  const char = NAMED_ENTITIES[named[1]!];
  if (char !== undefined) return { char, next: i + named[0].length };
  // "&name;" is an entity Telegram does not know; "&T" in "AT&T" is a bare ampersand.
  return named[1] && named[2] ? { char: "", next: -1, named: named[1] } : undefined;
}

const LAX = "(the fake holds homed to the Bot API docs; real Telegram passes it through)";

function parseHtml(src: string, strict: boolean): ParsedText {
  let out = "";
  const entities: TelegramEntity[] = [];
  const stack: Open[] = [];
  const at = (i: number) => `at byte offset ${byteAt(src, i)}`;
  for (let i = 0; i < src.length; i++) {
    const c = src[i]!;
    if (c === "&") {
      const decoded = htmlEntity(src, i);
      if (decoded && decoded.next > 0) {
        out += decoded.char;
        i = decoded.next - 1;
        continue;
      }
      if (strict) {
        throw new EntityParseError(
          decoded?.named
            ? `Unsupported HTML entity "&${decoded.named};" ${at(i)}; only &lt; &gt; &amp; &quot; are supported ${LAX}`
            : `Character '&' ${at(i)} must be replaced with &amp; ${LAX}`,
        );
      }
    }
    if (c === ">" && strict) throw new EntityParseError(`Character '>' ${at(i)} must be replaced with &gt; ${LAX}`);
    if (c !== "<") {
      out += c;
      continue;
    }
    const begin = i++;
    if (src[i] !== "/") {
      while (i < src.length && !/\s/.test(src[i]!) && src[i] !== ">") i++;
      if (i >= src.length) throw new EntityParseError(`Unclosed start tag ${at(begin)}`);
      const tag = src.slice(begin + 1, i).toLowerCase();
      if (!HTML_TAGS.has(tag)) throw new EntityParseError(`Unsupported start tag "${tag}" ${at(begin)}`);
      const open: Open = { type: tag, start: out.length, at: begin };
      while (src[i] !== ">") {
        while (i < src.length && /\s/.test(src[i]!)) i++;
        if (src[i] === ">") break;
        const nameStart = i;
        while (i < src.length && !/[\s=>/"']/.test(src[i]!)) i++;
        const name = src.slice(nameStart, i);
        if (!name) throw new EntityParseError(`Empty attribute name in the tag "${tag}" ${at(begin)}`);
        while (i < src.length && /\s/.test(src[i]!)) i++;
        if (i >= src.length) throw new EntityParseError(`Unclosed start tag "${tag}" ${at(begin)}`);
        if (src[i] !== "=") {
          if (tag === "blockquote" && name === "expandable") open.attribute = "expandable";
          continue;
        }
        i++;
        while (i < src.length && /\s/.test(src[i]!)) i++;
        if (i >= src.length) throw new EntityParseError(`Unclosed start tag "${tag}" ${at(begin)}`);
        let value = "";
        if (src[i] !== '"' && src[i] !== "'") {
          const tokenStart = i;
          while (i < src.length && /[A-Za-z0-9.-]/.test(src[i]!)) i++;
          value = src.slice(tokenStart, i).toLowerCase();
          if (i < src.length && !/[\s>]/.test(src[i]!)) {
            throw new EntityParseError(`Unexpected end of name token ${at(tokenStart)}`);
          }
        } else {
          const quote = src[i++];
          while (i < src.length && src[i] !== quote) {
            const decoded = src[i] === "&" ? htmlEntity(src, i) : undefined;
            if (decoded && decoded.next > 0) {
              value += decoded.char;
              i = decoded.next;
            } else value += src[i++];
          }
          if (src[i] === quote) i++;
        }
        if (i >= src.length) throw new EntityParseError(`Unclosed start tag ${at(begin)}`);
        if (tag === "a" && name === "href") open.attribute = value;
        else if (tag === "code" && name === "class" && value.startsWith("language-")) open.language = value.slice(9);
        else if (tag === "span" && name === "class" && value.startsWith("tg-")) open.attribute = value.slice(3);
        else if (tag === "tg-emoji" && name === "emoji-id") open.attribute = value;
      }
      if (tag === "span" && open.attribute !== "spoiler") {
        throw new EntityParseError(`Tag "span" must have class "tg-spoiler" ${at(begin)}`);
      }
      stack.push(open);
      continue;
    }
    if (stack.length === 0) throw new EntityParseError(`Unexpected end tag ${at(begin)}`);
    while (i < src.length && !/\s/.test(src[i]!) && src[i] !== ">") i++;
    const endTag = src.slice(begin + 2, i).toLowerCase();
    while (i < src.length && /\s/.test(src[i]!)) i++;
    if (src[i] !== ">") throw new EntityParseError(`Unclosed end tag ${at(begin)}`);
    const open = stack.pop()!;
    if (endTag && endTag !== open.type) {
      throw new EntityParseError(
        `Unmatched end tag ${at(begin)}, expected "</${open.type}>", found "</${endTag}>"`,
      );
    }
    if (out.length === open.start) continue;
    const entity: TelegramEntity = {
      type: HTML_TYPES[open.type]!,
      offset: open.start,
      length: out.length - open.start,
    };
    if (open.type === "a") entity.url = open.attribute || out.slice(open.start);
    if (open.type === "blockquote" && open.attribute) entity.type = "expandable_blockquote";
    if (open.type === "tg-emoji") {
      if (!/^[1-9]\d*$/.test(open.attribute ?? "")) {
        throw new EntityParseError("Invalid custom emoji identifier specified");
      }
      entity.custom_emoji_id = open.attribute!;
    }
    // <pre><code class="language-x">…</code></pre> is one pre entity with a language.
    const last = entities.at(-1);
    if (
      open.type === "pre" && last?.type === "code" && last.offset === entity.offset && last.length === entity.length
    ) {
      last.type = "pre";
      continue;
    }
    if (open.type === "code" && open.language) entity.language = open.language;
    entities.push(entity);
  }
  const unclosed = stack.at(-1);
  if (unclosed) {
    throw new EntityParseError(`Can't find end tag corresponding to start tag "${unclosed.type}"`);
  }
  for (const entity of entities) if (entity.type === "code") delete entity.language;
  return { text: out, entities };
}

/**
 * Parses `raw` as Telegram does for `parse_mode` (undefined: plain text), then trims surrounding whitespace as the
 * server does, moving the entities with it. Throws {@link EntityParseError} with Telegram's message, or a plain
 * `Error("Unsupported parse_mode")`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 *
 * assert.equal(parseFormatted("*Hi* there\\!", "MarkdownV2").text, "Hi there!");
 * assert.throws(() => parseFormatted("Done.", "MarkdownV2"), /Character '\.' is reserved/);
 * ```
 */
export function parseFormatted(raw: string, parseMode: string | undefined, options: ParseOptions = {}): ParsedText {
  const mode = (parseMode ?? "").toLowerCase();
  let parsed: ParsedText;
  if (mode === "" || mode === "none") parsed = { text: raw, entities: [] };
  else if (mode === "markdownv2") parsed = parseMarkdownV2(raw);
  else if (mode === "markdown") parsed = parseLegacyMarkdown(raw);
  else if (mode === "html") parsed = parseHtml(raw, options.strictHtmlEscapes ?? true);
  else throw new Error("Unsupported parse_mode");
  const lead = parsed.text.length - parsed.text.trimStart().length;
  const text = parsed.text.trim();
  const entities = parsed.entities
    .map((e) => {
      const start = Math.max(0, e.offset - lead);
      return { ...e, offset: start, length: Math.min(text.length, e.offset - lead + e.length) - start };
    })
    .filter((e) => e.length > 0)
    .sort((a, b) => a.offset - b.offset || b.length - a.length);
  return { text, entities };
}
