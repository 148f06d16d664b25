/**
 * The payload of a `message` input, typed. Devices build it (a plugin's Lua too), so it is read once here, field by
 * field, and a field of the wrong type counts as absent — nothing downstream looks into `payload` by hand.
 *
 * @module
 */

/** What an attachment is, as its channel says (the bytes are sniffed before anything reads them). */
export type AttachmentKind = "image" | "audio" | "video" | "file";

const KINDS: ReadonlySet<string> = new Set<AttachmentKind>(["image", "audio", "video", "file"]);

/**
 * An image, voice note, video or file that came with a message. The channel that authenticated the sender builds it
 * from the attachment's own part of the message (a QQ segment, an HTTP upload) — never from words in the text — so
 * `url` is a place that channel vouches for.
 */
export interface MessageAttachment {
  kind: AttachmentKind;
  /** Where the bytes are: an http(s) URL the channel's implementation gave for this attachment. */
  url?: string;
  /** The bytes are already in homed's media cache (an upload): its id. */
  media?: string;
  /** The channel's own name for it (QQ's `file`), to ask the implementation for it when there is no URL. */
  file?: string;
  /** The file name the sender's app gave. */
  name?: string;
  /** The size the channel declared, in bytes (not trusted: fetching stops at the limit whatever it says). */
  size?: number;
  /** The MIME type, when known: sniffed from the bytes of an upload; a channel's declared one is never trusted. */
  mime?: string;
  /** The implementation's own address: its URLs may be on the LAN (`media.allow_hosts` for other private hosts). */
  via?: string;
}

/** What a `message` input carries. */
export interface MessagePayload {
  /** The words; "" when there are none (the turn then refuses it as `bad_input`). */
  text: string;
  /** The device shows the reply as it is produced (`/api/chat/stream`). */
  stream: boolean;
  /** A name the sender gave themself (shown as such, never taken as their identity). */
  display?: string;
  attachments: MessageAttachment[];
}

/**
 * Reads a message payload; fields of the wrong type are left out, attachments without a known kind or without any
 * of `url`, `media` and `file` dropped.
 *
 * @example
 * ```ts
 * readMessage({ text: "hi", stream: true, attachments: [{ kind: "image", url: "https://x/1.png" }, 7] });
 * // { text: "hi", stream: true, attachments: [{ kind: "image", url: "https://x/1.png" }] }
 * readMessage({ text: 42 }); // { text: "", stream: false, attachments: [] }
 * ```
 */
export function readMessage(payload: Readonly<Record<string, unknown>>): MessagePayload {
  const attachments: MessageAttachment[] = [];
  for (const item of Array.isArray(payload.attachments) ? payload.attachments : []) {
    const attachment = readAttachment(item);
    if (attachment) attachments.push(attachment);
  }
  return {
    text: typeof payload.text === "string" ? payload.text : "",
    stream: payload.stream === true,
    ...(typeof payload.display === "string" ? { display: payload.display } : {}),
    attachments,
  };
}

function readAttachment(item: unknown): MessageAttachment | undefined {
  if (!item || typeof item !== "object") return undefined;
  const fields = item as Record<string, unknown>;
  if (typeof fields.kind !== "string" || !KINDS.has(fields.kind)) return undefined;
  const attachment: MessageAttachment = { kind: fields.kind as AttachmentKind };
  for (const key of ["url", "media", "file", "name", "via", "mime"] as const) {
    const value = fields[key];
    if (typeof value === "string" && value !== "") attachment[key] = value;
  }
  if (typeof fields.size === "number" && Number.isSafeInteger(fields.size) && fields.size >= 0) {
    attachment.size = fields.size;
  }
  return attachment.url || attachment.media || attachment.file ? attachment : undefined;
}
