/**
 * OneBot V11 messages: the segment array and the CQ-code string, parsed into one shape and built back. Values in an
 * array are literal; in a CQ string, `&`, `[`, `]` (and `,` inside parameters) are escaped, `&` first.
 *
 * @module
 */

import type { AttachmentKind, MessageAttachment } from "../../io/message_payload.ts";

/** One message segment: `{type, data}` with string values (as the spec has them; numbers are turned to strings). */
export interface Segment {
  type: string;
  data: Record<string, string>;
}

/**
 * Escapes plain text for a CQ string.
 *
 * @example
 * ```ts
 * escapeText("[CQ:at,qq=all] & more"); // "&#91;CQ:at,qq=all&#93; &amp; more"
 * ```
 */
export function escapeText(text: string): string {
  return text.replaceAll("&", "&amp;").replaceAll("[", "&#91;").replaceAll("]", "&#93;");
}

/** Escapes a CQ parameter value (text rules plus `,`). */
export function escapeValue(value: string): string {
  return escapeText(value).replaceAll(",", "&#44;");
}

/** Reverses {@link escapeText}; `&amp;` last. */
export function unescapeText(text: string): string {
  return text.replaceAll("&#91;", "[").replaceAll("&#93;", "]").replaceAll("&amp;", "&");
}

/** Reverses {@link escapeValue}. */
export function unescapeValue(value: string): string {
  return unescapeText(value.replaceAll("&#44;", ","));
}

const CQ = /\[CQ:([A-Za-z0-9_.-]+)((?:,[^,\]=]+=[^,\]]*)*)\]/g;

/**
 * Parses a CQ string into segments; text between codes becomes `text` segments.
 *
 * @example
 * ```ts
 * parseCq("&#91;hi&#93;[CQ:face,id=123]"); // [{type:"text",data:{text:"[hi]"}}, {type:"face",data:{id:"123"}}]
 * ```
 */
export function parseCq(message: string): Segment[] {
  const segments: Segment[] = [];
  let last = 0;
  for (const match of message.matchAll(CQ)) {
    if (match.index > last) segments.push(textSegment(unescapeText(message.slice(last, match.index))));
    const data: Record<string, string> = {};
    for (const part of match[2]!.split(",").slice(1)) {
      const eq = part.indexOf("=");
      data[part.slice(0, eq)] = unescapeValue(part.slice(eq + 1));
    }
    segments.push({ type: match[1]!, data });
    last = match.index + match[0].length;
  }
  if (last < message.length) segments.push(textSegment(unescapeText(message.slice(last))));
  return segments;
}

/**
 * Renders segments as a CQ string (text escaped, never a `[CQ:text]`).
 *
 * @example
 * ```ts
 * toCq([{ type: "text", data: { text: "[x]" } }, { type: "at", data: { qq: "1" } }]); // "&#91;x&#93;[CQ:at,qq=1]"
 * ```
 */
export function toCq(segments: readonly Segment[]): string {
  return segments.map((segment) =>
    segment.type === "text"
      ? escapeText(segment.data.text ?? "")
      : `[CQ:${segment.type}${Object.entries(segment.data).map(([k, v]) => `,${k}=${escapeValue(v)}`).join("")}]`
  ).join("");
}

/** A text segment. */
export function textSegment(text: string): Segment {
  return { type: "text", data: { text } };
}

/**
 * Any `message` value an implementation sends — a CQ string, a segment array, or one segment object — as segments;
 * `undefined` when it is none of these (the caller reports the frame).
 *
 * @example
 * ```ts
 * normalizeMessage([{ type: "text", data: { text: "hi" } }]); // [{ type: "text", data: { text: "hi" } }]
 * ```
 */
export function normalizeMessage(message: unknown): Segment[] | undefined {
  if (typeof message === "string") return parseCq(message);
  const list = Array.isArray(message) ? message : message && typeof message === "object" ? [message] : undefined;
  if (!list) return undefined;
  const segments: Segment[] = [];
  for (const item of list) {
    if (!item || typeof item !== "object" || typeof (item as { type?: unknown }).type !== "string") return undefined;
    const raw = (item as { data?: unknown }).data;
    const data: Record<string, string> = {};
    if (raw && typeof raw === "object") {
      for (const [key, value] of Object.entries(raw)) {
        if (typeof value === "string" || typeof value === "number" || typeof value === "boolean") {
          data[key] = String(value);
        }
      }
    }
    segments.push({ type: (item as { type: string }).type, data });
  }
  return segments;
}

const ATTACHMENT: Record<string, AttachmentKind> = {
  image: "image",
  record: "audio",
  video: "video",
  file: "file",
};

/** What the butler reads of a message: its text, whom it mentions, what it replies to, and attachments. */
export interface ReadMessage {
  text: string;
  mentions: string[];
  replyTo: string | undefined;
  attachments: MessageAttachment[];
}

/**
 * Reads segments: text joined (mentions of others shown as `@<qq>`, faces as `[face]`), the ids it @-mentions, the
 * message it replies to, and attachments with their URL.
 *
 * @example
 * ```ts
 * readSegments(parseCq("[CQ:at,qq=42] lights off")).mentions; // ["42"]
 * ```
 */
export function readSegments(segments: readonly Segment[], selfId?: string): ReadMessage {
  const parts: string[] = [];
  const mentions: string[] = [];
  const attachments: MessageAttachment[] = [];
  let replyTo: string | undefined;
  for (const segment of segments) {
    const data = segment.data;
    switch (segment.type) {
      case "text":
        parts.push(data.text ?? "");
        break;
      case "at":
        if (data.qq !== undefined) mentions.push(data.qq);
        if (data.qq !== selfId) parts.push(data.qq === "all" ? "@all" : `@${data.name ?? data.qq}`);
        break;
      case "reply":
        if (data.id !== undefined) replyTo = data.id;
        break;
      case "face":
        parts.push("[face]");
        break;
      default: {
        const kind = ATTACHMENT[segment.type];
        const attachment = kind ? attachmentOf(kind, data) : undefined;
        if (kind && attachment) {
          attachments.push(attachment);
          parts.push(`[${kind}]`);
        } else {
          parts.push(`[${segment.type}]`);
        }
      }
    }
  }
  return { text: parts.join("").trim(), mentions, replyTo, attachments };
}

/**
 * An attachment from its segment's data: `url` only when it is an http(s) URL (NapCat and Lagrange serve media so;
 * `file` may be a name, a path or a URL and is kept as the implementation's name for it, for `get_image` /
 * `get_record`); the declared size from `file_size`.
 */
function attachmentOf(kind: AttachmentKind, data: Readonly<Record<string, string>>): MessageAttachment | undefined {
  const web = (value: string | undefined) => value !== undefined && /^https?:\/\//i.test(value) ? value : undefined;
  const url = web(data.url) ?? web(data.file);
  const file = data.file && !web(data.file) ? data.file : undefined;
  if (!url && !file) return undefined;
  const size = data.file_size === undefined ? undefined : Number(data.file_size);
  return {
    kind,
    ...(url ? { url } : {}),
    ...(file ? { file } : {}),
    ...(data.name ? { name: data.name } : {}),
    ...(size !== undefined && Number.isSafeInteger(size) && size >= 0 ? { size } : {}),
  };
}
