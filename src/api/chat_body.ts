/**
 * Validation of the chat request body: JSON `{"text": "...", "user"?: "...", "attachments"?: [{"data": "data:<type>;
 * base64,<bytes>", "name"?: "..."}]}`, or `multipart/form-data` with the fields `text`, `user` and one `file` part per
 * image or audio clip. An attachment's bytes decide what it is (sniffed; the declared type must agree), each within
 * its limit (`media.max_image_bytes`, `media.max_audio_bytes`); at most {@link MAX_ATTACHMENTS} a message.
 *
 * @module
 */

import { decodeBase64 } from "../text/base64.ts";
import { sniffMedia } from "../fs/media_type.ts";
import { ApiError } from "./api_error.ts";

/** An image or audio clip that came with a chat request, checked. */
export interface ChatUpload {
  kind: "image" | "audio";
  /** The sniffed type. */
  mime: string;
  bytes: Uint8Array;
  name?: string;
}

/** A valid chat request. */
export interface ChatBody {
  text: string;
  /** The `user` field: a display name the caller gives, never their identity (that comes from the token). */
  display: string | undefined;
  uploads: ChatUpload[];
}

/** The media limits a chat request's attachments are held to. */
export interface UploadLimits {
  maxImageBytes: number;
  maxAudioBytes: number;
}

/** Most attachments one message may carry. */
export const MAX_ATTACHMENTS = 4;

const NO_UPLOADS: UploadLimits = { maxImageBytes: 0, maxAudioBytes: 0 };

/** Longest message accepted, in characters. */
export const MAX_TEXT_CHARS = 32_000;
const USER = /^[\p{L}\p{N}_.@:-]{1,64}$/u;

/**
 * Reads a chat request by its content type (JSON or `multipart/form-data`); throws {@link ApiError} naming the
 * field and the bad value (400), an attachment of a type homed cannot use (415), or one over its limit (413).
 *
 * @example
 * ```ts
 * const request = new Request("http://127.0.0.1:8080/api/chat", {
 *   method: "POST",
 *   headers: { "content-type": "application/json" },
 *   body: '{"text":"hi"}',
 * });
 * await readChatRequest(request, { maxImageBytes: 10_485_760, maxAudioBytes: 10_485_760 });
 * // { text: "hi", display: undefined, uploads: [] }
 * ```
 */
export async function readChatRequest(request: Request, limits: UploadLimits): Promise<ChatBody> {
  const type = (request.headers.get("content-type") ?? "").toLowerCase();
  if (!type.startsWith("multipart/form-data")) return parseChatBody(await request.text(), limits);
  let form: FormData;
  try {
    form = await request.formData();
  } catch (error) {
    throw new ApiError(400, "bad_request", `The multipart body could not be read: ${(error as Error).message}`);
  }
  const fields: Record<string, unknown> = {};
  const uploads: ChatUpload[] = [];
  for (const [key, value] of form.entries()) {
    if (key === "file") {
      if (typeof value === "string") {
        throw new ApiError(400, "bad_request", 'Field "file" must be a file part (with a filename), got a text field');
      }
      countAttachment(uploads.length, "file");
      const field = `file[${uploads.length}]`;
      uploads.push(checkUpload(new Uint8Array(await value.arrayBuffer()), value.type, field, limits, value.name));
    } else if (key === "text" || key === "user") {
      if (typeof value !== "string") throw new ApiError(400, "bad_request", `Field "${key}" must be a text field`);
      fields[key] = value;
    } else {
      throw new ApiError(400, "bad_request", `Unknown field "${key}"; allowed fields: text, user, file`);
    }
  }
  return { ...checkFields(fields, uploads.length > 0), uploads };
}

/**
 * Parses and checks a JSON body; throws {@link ApiError} as {@link readChatRequest} does. Without `limits`, no
 * attachment is accepted.
 *
 * @example
 * ```ts
 * parseChatBody('{"text":"hi","user":"alice"}'); // { text: "hi", display: "alice", uploads: [] }
 * ```
 */
export function parseChatBody(raw: string, limits: UploadLimits = NO_UPLOADS): ChatBody {
  let body: unknown;
  try {
    body = JSON.parse(raw);
  } catch (error) {
    throw new ApiError(400, "bad_json", `The body is not valid JSON: ${(error as Error).message}`);
  }
  if (body === null || typeof body !== "object" || Array.isArray(body)) {
    throw new ApiError(400, "bad_request", `The body must be a JSON object, got ${JSON.stringify(body)?.slice(0, 60)}`);
  }
  const record = body as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    if (key !== "text" && key !== "user" && key !== "attachments") {
      throw new ApiError(400, "bad_request", `Unknown field "${key}"; allowed fields: text, user, attachments`);
    }
  }
  const uploads = readAttachments(record.attachments, limits);
  return { ...checkFields(record, uploads.length > 0), uploads };
}

function readAttachments(value: unknown, limits: UploadLimits): ChatUpload[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) {
    throw new ApiError(
      400,
      "bad_request",
      `Field "attachments" must be a list of {"data": "data:<type>;base64,…", "name"?}, got ${
        JSON.stringify(value)?.slice(0, 60)
      }`,
    );
  }
  const uploads: ChatUpload[] = [];
  value.forEach((item, index) => {
    countAttachment(index, "attachments");
    const field = `attachments[${index}]`;
    if (item === null || typeof item !== "object" || Array.isArray(item)) {
      throw new ApiError(400, "bad_request", `Field "${field}" must be an object with "data", got ${typeof item}`);
    }
    const { data, name, ...rest } = item as Record<string, unknown>;
    const extra = Object.keys(rest)[0];
    if (extra !== undefined) {
      throw new ApiError(400, "bad_request", `Unknown field "${field}.${extra}"; allowed fields: data, name`);
    }
    if (name !== undefined && (typeof name !== "string" || name.length > 200)) {
      throw new ApiError(400, "bad_request", `Field "${field}.name" must be a text of at most 200 characters`);
    }
    const match = typeof data === "string"
      ? /^data:([\w.+-]+\/[\w.+-]+)(?:;[\w.+-]+=[\w.+-]+)*;base64,(.*)$/s.exec(data)
      : null;
    const bytes = match ? decodeBase64(match[2]!) : undefined;
    if (!match || !bytes) {
      throw new ApiError(
        400,
        "bad_request",
        `Field "${field}.data" must be a base64 data URL ("data:image/png;base64,…"), got ${
          JSON.stringify(typeof data === "string" ? data.slice(0, 40) : data)
        }`,
      );
    }
    uploads.push(checkUpload(bytes, match[1]!, field, limits, name));
  });
  return uploads;
}

function countAttachment(index: number, field: string): void {
  if (index >= MAX_ATTACHMENTS) {
    throw new ApiError(
      413,
      "too_large",
      `Field "${field}" has more than ${MAX_ATTACHMENTS} attachments; allowed: at most ${MAX_ATTACHMENTS}`,
    );
  }
}

/** One attachment, checked: a declared image or audio type, bytes that really are that, within its limit. */
function checkUpload(
  bytes: Uint8Array,
  declared: string,
  field: string,
  limits: UploadLimits,
  name: string | undefined,
): ChatUpload {
  const type = declared.split(";")[0]!.trim().toLowerCase();
  const kind = type.startsWith("image/") ? "image" : type.startsWith("audio/") ? "audio" : undefined;
  if (!kind) {
    throw new ApiError(
      415,
      "unsupported_media",
      `Field "${field}" has type ${JSON.stringify(type || "(none)")}; allowed: an image/* or audio/* type`,
    );
  }
  const limit = kind === "image" ? limits.maxImageBytes : limits.maxAudioBytes;
  if (bytes.length > limit) {
    throw new ApiError(
      413,
      "too_large",
      `Field "${field}" has ${bytes.length} bytes; allowed: at most ${limit} (media.max_${kind}_bytes)`,
    );
  }
  const sniffed = sniffMedia(bytes);
  if (sniffed.kind !== kind) {
    throw new ApiError(
      415,
      "unsupported_media",
      `Field "${field}" is declared ${type} but its bytes are ${sniffed.mime}; send the file as what it is`,
    );
  }
  return { kind, mime: sniffed.mime, bytes, ...(name ? { name } : {}) };
}

/** The text and user fields; with attachments the text may be left out. */
function checkFields(
  record: Record<string, unknown>,
  attachments: boolean,
): { text: string; display: string | undefined } {
  const text = record.text ?? (attachments ? "" : undefined);
  if (text === undefined) throw new ApiError(400, "bad_request", 'Field "text" is missing');
  if (typeof text !== "string" || (text.trim() === "" && !attachments)) {
    throw new ApiError(
      400,
      "bad_request",
      `Field "text" must be a non-empty string, got ${JSON.stringify(text)?.slice(0, 60)}`,
    );
  }
  if (text.length > MAX_TEXT_CHARS) {
    throw new ApiError(
      413,
      "too_large",
      `Field "text" has ${text.length} characters; allowed: at most ${MAX_TEXT_CHARS}`,
    );
  }
  const user = record.user;
  if (user !== undefined && (typeof user !== "string" || !USER.test(user))) {
    throw new ApiError(
      400,
      "bad_request",
      `Field "user" must be 1 to 64 letters, digits or _ . @ : -, got ${JSON.stringify(user)?.slice(0, 80)}`,
    );
  }
  return { text: text.trim() === "" ? "(sent an attachment)" : text, display: user };
}
