/**
 * WeChat messages in and out as homed reads and writes them: an inbound `WeixinMessage` as text and attachments
 * (WeChat's own voice transcript used as text, as the official client does), and a reply's Markdown as plain text —
 * WeChat renders Markdown only in part, so the markers would show as stray asterisks and hashes; the words, link
 * targets and code stay.
 *
 * @module
 */

import type { AttachmentKind } from "../../io/message_payload.ts";
import type { WireItem, WireMedia, WireMessage } from "./ilink_client.ts";
import { type InboundMedia, mediaKey } from "./weixin_media.ts";

/** An attachment of an inbound message, with where its bytes are. */
export interface InboundAttachment {
  kind: AttachmentKind;
  name?: string;
  size?: number;
  media: InboundMedia;
}

/** An inbound message, read. */
export interface Inbound {
  text: string;
  attachments: InboundAttachment[];
  /** Items homed cannot read (a video without its key, tool-call progress), by type. */
  skipped: number[];
}

function cdnMedia(media: WireMedia | undefined, hexKey?: string): InboundMedia | undefined {
  const key = mediaKey({ hexKey, aesKey: media?.aes_key });
  if (!media?.encrypt_query_param || !key) return undefined;
  return { encryptQueryParam: media.encrypt_query_param, key, ...(media.full_url ? { fullUrl: media.full_url } : {}) };
}

/**
 * Reads a message's items: text items and voice transcripts as text (in order, one per line), images, voice notes
 * without a transcript, files and videos as attachments.
 *
 * @example
 * ```ts
 * readInbound({ item_list: [{ type: 1, text_item: { text: "hello" } }] }); // { text: "hello", attachments: [], skipped: [] }
 * readInbound({ item_list: [{ type: 3, voice_item: { text: "turn on the light" } }] }).text; // "turn on the light"
 * ```
 */
export function readInbound(message: WireMessage): Inbound {
  const lines: string[] = [];
  const attachments: InboundAttachment[] = [];
  const skipped: number[] = [];
  for (const item of message.item_list ?? []) {
    const attachment = attachmentOf(item);
    if (item.type === 1 && typeof item.text_item?.text === "string") lines.push(item.text_item.text);
    else if (item.type === 3 && typeof item.voice_item?.text === "string" && item.voice_item.text.trim() !== "") {
      // WeChat transcribed it: the official client uses that and skips the download.
      lines.push(item.voice_item.text);
    } else if (attachment) attachments.push(attachment);
    else skipped.push(item.type ?? 0);
  }
  return { text: lines.join("\n").trim(), attachments, skipped };
}

function attachmentOf(item: WireItem): InboundAttachment | undefined {
  switch (item.type) {
    case 2: {
      const media = cdnMedia(item.image_item?.media, item.image_item?.aeskey);
      return media && { kind: "image", media };
    }
    case 3: {
      const media = cdnMedia(item.voice_item?.media);
      return media && { kind: "audio", media };
    }
    case 4: {
      const file = item.file_item;
      const media = cdnMedia(file?.media);
      const size = Number(file?.len);
      return media && {
        kind: "file",
        media,
        ...(file?.file_name ? { name: file.file_name } : {}),
        ...(Number.isSafeInteger(size) && size >= 0 ? { size } : {}),
      };
    }
    case 5: {
      const media = cdnMedia(item.video_item?.media);
      return media && { kind: "video", media };
    }
    default:
      return undefined;
  }
}

/**
 * A reply's Markdown as plain text: headings, emphasis, strike-through, quotes, code fences and table rules lose their
 * markers; links keep their text and target; list items become bullets.
 *
 * @example
 * ```ts
 * plainText("## Today\n**Rain** at *3 pm*, see [the forecast](https://example.com)");
 * // "Today\nRain at 3 pm, see the forecast (https://example.com)"
 * ```
 */
export function plainText(markdown: string): string {
  const out: string[] = [];
  let fenced = false;
  for (const raw of markdown.split("\n")) {
    if (/^\s*(```|~~~)/.test(raw)) {
      fenced = !fenced; // the fence line goes; the code between stays as it is
      continue;
    }
    if (fenced) {
      out.push(raw);
      continue;
    }
    if (/^\s*([-*_])(\s*\1){2,}\s*$/.test(raw)) continue; // a horizontal rule
    if (/^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$/.test(raw)) continue; // a table's rule
    let line = raw
      .replace(/^\s{0,3}#{1,6}\s+/, "")
      .replace(/^(\s*)>\s?/, "$1")
      .replace(/^(\s*)[-*+]\s+(\[[ xX]\]\s+)?/, "$1• ");
    if (/^\s*\|.*\|\s*$/.test(line)) line = line.trim().replace(/^\|\s*|\s*\|$/g, "").replace(/\s*\|\s*/g, "  ");
    out.push(inline(line));
  }
  return out.join("\n").replace(/\n{3,}/g, "\n\n").trim();
}

function inline(line: string): string {
  return line
    .replace(/!\[([^\]]*)\]\(([^)\s]+)[^)]*\)/g, (_, alt: string, url: string) => alt ? `${alt} (${url})` : url)
    .replace(
      /\[([^\]]+)\]\(([^)\s]+)[^)]*\)/g,
      (_, text: string, url: string) => text === url ? url : `${text} (${url})`,
    )
    .replace(/`([^`]+)`/g, "$1")
    .replace(/(\*\*|__)(?=\S)(.+?)(?<=\S)\1/g, "$2")
    .replace(/~~(?=\S)(.+?)(?<=\S)~~/g, "$1")
    .replace(/(^|[^\w*])\*(?=\S)([^*]+?)(?<=\S)\*(?![\w*])/g, "$1$2")
    .replace(/(^|[^\w])_(?=\S)([^_]+?)(?<=\S)_(?!\w)/g, "$1$2");
}
