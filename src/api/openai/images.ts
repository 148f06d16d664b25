/**
 * Image parts of a turn's message (`{"type": "image_url", "image_url": {"url": …}}`) as the message's attachments,
 * so they go through the media pipeline like any channel's: a `data:` URL's bytes are held by the `openai` channel
 * for the turn (the media service asks for them with `locate`, checks them against `media.max_image_bytes`, keeps
 * them in the cache and has vision describe them); an http(s) URL is fetched under the media rules (public addresses
 * only, unless `media.allow_hosts` names the host). What cannot be taken is a 400 naming the part.
 *
 * @module
 */

import type { MessageAttachment } from "../../io/message_payload.ts";
import { sniffMedia } from "../../fs/media_type.ts";
import { decodeBase64 } from "../../text/base64.ts";
import { MAX_ATTACHMENTS } from "../chat_body.ts";
import { invalidField, shown } from "./errors.ts";

/** One image of the message: its bytes (a `data:` URL) or where they are (http or https). */
export type ImagePart =
  | { field: string; bytes: Uint8Array; mime: string }
  | { field: string; url: string };

const DATA_URL = /^data:([\w.+-]+\/[\w.+-]+)((?:;[\w.+-]+=[^;,]*)*);base64,(.*)$/s;

/**
 * Reads one `image_url` part (`index`: how many images came before it); throws a 400 naming `field`.
 *
 * @example
 * ```ts
 * readImagePart({ type: "image_url", image_url: { url: "https://example.com/cat.png" } }, "messages[0].content[1]", 0);
 * // { field: "messages[0].content[1]", url: "https://example.com/cat.png" }
 * ```
 */
export function readImagePart(part: Record<string, unknown>, field: string, index: number): ImagePart {
  if (index >= MAX_ATTACHMENTS) {
    throw invalidField(field, `Field "${field}" is image ${index + 1}; a message takes at most ${MAX_ATTACHMENTS}`);
  }
  const image = part.image_url;
  const url = typeof image === "string"
    ? image
    : image !== null && typeof image === "object" && !Array.isArray(image)
    ? (image as Record<string, unknown>).url
    : undefined;
  const where = `${field}.image_url.url`;
  if (typeof url !== "string" || url === "") {
    throw invalidField(where, `Field "${where}" must be a data: or https: URL of the image, got ${shown(url)}`);
  }
  if (url.startsWith("data:")) {
    const match = DATA_URL.exec(url);
    const bytes = match ? decodeBase64(match[3]!) : undefined;
    if (!match || !bytes) {
      throw invalidField(
        where,
        `Field "${where}" must be a base64 data URL ("data:image/png;base64,…"), got ${shown(url.slice(0, 40))}`,
      );
    }
    const sniffed = sniffMedia(bytes);
    if (sniffed.kind !== "image") {
      throw invalidField(
        where,
        `Field "${where}" is declared ${
          match[1]
        } but its bytes are ${sniffed.mime}; send a PNG, JPEG, GIF or WebP image`,
      );
    }
    return { field, bytes, mime: sniffed.mime };
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw invalidField(where, `Field "${where}" is not a URL: ${shown(url)}`);
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw invalidField(where, `Field "${where}" has the scheme ${parsed.protocol}; allowed: data:, http:, https:`);
  }
  if (parsed.username !== "" || parsed.password !== "") {
    throw invalidField(where, `Field "${where}" carries credentials; homed fetches images only without them`);
  }
  return { field, url: parsed.href };
}

/**
 * The images as the message's attachments, and the bytes the `openai` channel holds for them (by `file` name).
 *
 * @example
 * ```ts
 * const { attachments, held } = imageAttachments([{ field: "messages[0].content[1]", url: "https://example.com/a.png" }]);
 * // attachments: [{ kind: "image", url: "https://example.com/a.png" }], held: an empty Map
 * ```
 */
export function imageAttachments(
  images: readonly ImagePart[],
): { attachments: MessageAttachment[]; held: Map<string, Uint8Array> } {
  const held = new Map<string, Uint8Array>();
  const attachments = images.map((image, index): MessageAttachment => {
    if ("url" in image) return { kind: "image", url: image.url };
    const file = `openai-image-${index}`;
    held.set(file, image.bytes);
    return { kind: "image", file, size: image.bytes.length, mime: image.mime };
  });
  return { attachments, held };
}
