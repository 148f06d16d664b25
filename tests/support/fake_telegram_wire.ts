/**
 * The wire side of {@link ./fake_telegram.ts}: reading a Bot API request the three ways Telegram accepts one (query
 * string, JSON, `application/x-www-form-urlencoded`, `multipart/form-data` with files), writing its answers
 * (`{ok: true, result}` / `{ok: false, error_code, description, parameters?}`, the front's HTML 502 page), and the
 * shapes of the objects a bot receives (User, Chat, Message with its entities, PhotoSize, Voice, Document).
 *
 * @module
 */

import type { TelegramEntity } from "./fake_telegram_format.ts";

/** A user as tests describe one (the `from` of a message or a button press). */
export interface FakeUser {
  id: number;
  first_name: string;
  username?: string;
  last_name?: string;
}

/** A chat as tests describe one; group and supergroup ids are negative on Telegram (`-100…` for supergroups). */
export interface FakeChat {
  id: number;
  type: "private" | "group" | "supergroup";
  title?: string;
}

/** A Bot API request: its parameters (JSON values or strings) and uploaded files by part name. */
export interface WireRequest {
  params: Record<string, unknown>;
  files: Map<string, File>;
}

/**
 * A request body the fake cannot read: answered 400 with this description.
 *
 * @example
 * ```ts
 * import { readRequest, UnreadableBody } from "./fake_telegram_wire.ts";
 *
 * const request = new Request("http://x/bot1:a/getMe", { method: "POST", headers: { "content-type": "application/json" }, body: "{" });
 * await readRequest(request, new URL(request.url)).catch((error) => error instanceof UnreadableBody);
 * ```
 */
export class UnreadableBody extends Error {}

/**
 * Reads the parameters of a request: the URL's query string, then the body (JSON object, urlencoded or multipart),
 * which wins on a clash, as the Bot API server merges them.
 *
 * @example
 * ```ts
 * import { readRequest } from "./fake_telegram_wire.ts";
 *
 * const request = new Request("http://x/bot1:a/sendMessage?chat_id=1", { method: "POST", body: new URLSearchParams({ text: "hi" }) });
 * const { params } = await readRequest(request, new URL(request.url)); // { chat_id: "1", text: "hi" }
 * ```
 */
export async function readRequest(request: Request, url: URL): Promise<WireRequest> {
  const params: Record<string, unknown> = Object.fromEntries(url.searchParams);
  const files = new Map<string, File>();
  const type = (request.headers.get("content-type") ?? "").toLowerCase();
  if (request.method === "GET" || request.method === "HEAD" || !request.body) return { params, files };
  if (type.startsWith("application/json")) {
    const text = await request.text();
    if (text.trim() === "") return { params, files };
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new UnreadableBody("can't parse JSON encoded request body (the fake's wording)");
    }
    if (body === null || typeof body !== "object" || Array.isArray(body)) {
      throw new UnreadableBody("JSON request body must be an object (the fake's wording)");
    }
    Object.assign(params, body);
  } else if (type.startsWith("application/x-www-form-urlencoded")) {
    Object.assign(params, Object.fromEntries(new URLSearchParams(await request.text())));
  } else if (type.startsWith("multipart/form-data")) {
    const form = await request.formData();
    for (const [name, value] of form) {
      if (typeof value === "string") params[name] = value;
      else files.set(name, value);
    }
  } else {
    await request.body.cancel();
  }
  return { params, files };
}

/**
 * A parameter as a string (JSON numbers and booleans as their text), or undefined when absent or empty.
 *
 * @example
 * ```ts
 * import { stringParam } from "./fake_telegram_wire.ts";
 *
 * stringParam({ chat_id: 42 }, "chat_id"); // "42"
 * ```
 */
export function stringParam(params: Record<string, unknown>, name: string): string | undefined {
  const value = params[name];
  if (value === undefined || value === null || value === "") return undefined;
  return typeof value === "string" ? value : typeof value === "object" ? JSON.stringify(value) : String(value);
}

/**
 * A parameter as an integer, or undefined (absent, or not an integer: Telegram then uses the default).
 *
 * @example
 * ```ts
 * import { intParam } from "./fake_telegram_wire.ts";
 *
 * intParam({ offset: "1001" }, "offset"); // 1001
 * ```
 */
export function intParam(params: Record<string, unknown>, name: string): number | undefined {
  const text = stringParam(params, name);
  return text !== undefined && /^-?\d+$/.test(text.trim()) ? Number(text) : undefined;
}

/**
 * A parameter holding a JSON-serialised object or array (string forms are parsed); throws on invalid JSON.
 *
 * @example
 * ```ts
 * import { jsonParam } from "./fake_telegram_wire.ts";
 *
 * jsonParam({ reply_markup: '{"inline_keyboard":[]}' }, "reply_markup"); // { inline_keyboard: [] }
 * ```
 */
export function jsonParam(params: Record<string, unknown>, name: string): unknown {
  const value = params[name];
  if (value === undefined || value === null || value === "") return undefined;
  return typeof value === "string" ? JSON.parse(value) : value;
}

/**
 * A successful answer.
 *
 * @example
 * ```ts
 * import { okResponse } from "./fake_telegram_wire.ts";
 *
 * const response = okResponse(true); // {"ok":true,"result":true}
 * ```
 */
export function okResponse(result: unknown): Response {
  return Response.json({ ok: true, result });
}

/**
 * A failed answer, with the HTTP status equal to `error_code`, as the Bot API sends it.
 *
 * @example
 * ```ts
 * import { errorResponse } from "./fake_telegram_wire.ts";
 *
 * const response = errorResponse(429, "Too Many Requests: retry after 1", { retry_after: 1 });
 * ```
 */
export function errorResponse(code: number, description: string, parameters?: Record<string, unknown>): Response {
  return Response.json({ ok: false, error_code: code, description, ...(parameters ? { parameters } : {}) }, {
    status: code,
  });
}

/**
 * What api.telegram.org's nginx front answers while the Bot API behind it is down.
 *
 * @example
 * ```ts
 * import { badGatewayResponse } from "./fake_telegram_wire.ts";
 *
 * const response = badGatewayResponse(); // status 502, text/html
 * ```
 */
export function badGatewayResponse(): Response {
  const page = "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n" +
    "<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx/1.18.0</center>\r\n</body>\r\n</html>\r\n";
  return new Response(page, { status: 502, headers: { "content-type": "text/html" } });
}

/**
 * The User object of a test's user.
 *
 * @example
 * ```ts
 * import { userObject } from "./fake_telegram_wire.ts";
 *
 * userObject({ id: 42, first_name: "Ann" }); // { id: 42, is_bot: false, first_name: "Ann" }
 * ```
 */
export function userObject(user: FakeUser): Record<string, unknown> {
  return { id: user.id, is_bot: false, first_name: user.first_name, ...optional(user, "last_name", "username") };
}

/**
 * The Chat object; a private chat carries its user's names, a group its title.
 *
 * @example
 * ```ts
 * import { chatObject } from "./fake_telegram_wire.ts";
 *
 * chatObject({ id: -100777, type: "supergroup", title: "Home" }); // { id: -100777, title: "Home", type: "supergroup" }
 * ```
 */
export function chatObject(chat: FakeChat, user?: FakeUser): Record<string, unknown> {
  if (chat.type === "private") {
    return {
      id: chat.id,
      ...(user ? { first_name: user.first_name, ...optional(user, "last_name", "username") } : {}),
      type: "private",
    };
  }
  return { id: chat.id, title: chat.title ?? `Group ${chat.id}`, type: chat.type };
}

function optional<T extends object>(source: T, ...keys: Array<keyof T>): Partial<T> {
  return Object.fromEntries(
    keys.filter((key) => source[key] !== undefined).map((key) => [key, source[key]]),
  ) as Partial<T>;
}

/**
 * The entities Telegram finds by itself in a user's text: `@username` mentions and `/command` (or
 * `/command@bot`) bot commands, offsets in UTF-16 code units.
 *
 * @example
 * ```ts
 * import { detectEntities } from "./fake_telegram_wire.ts";
 *
 * detectEntities("@homed_bot /status"); // a mention at 0 (10 long), a bot_command at 11
 * ```
 */
export function detectEntities(text: string): TelegramEntity[] {
  const entities: TelegramEntity[] = [];
  for (const match of text.matchAll(/(^|[^\w@/])(@[A-Za-z][A-Za-z0-9_]{3,31})\b/g)) {
    entities.push({ type: "mention", offset: match.index + match[1]!.length, length: match[2]!.length });
  }
  for (const match of text.matchAll(/(^|\s)(\/[A-Za-z0-9_]{1,32}(?:@[A-Za-z][A-Za-z0-9_]{3,31})?)(?![\w/])/g)) {
    entities.push({ type: "bot_command", offset: match.index + match[1]!.length, length: match[2]!.length });
  }
  return entities.sort((a, b) => a.offset - b.offset);
}

/** The first bytes as text, one character per byte (TextDecoder's "latin1" is windows-1252 and remaps 0x80–0x9f). */
function head(bytes: Uint8Array, length: number): string {
  return String.fromCharCode(...bytes.subarray(0, length));
}

/**
 * The magic numbers of JPEG, PNG, GIF and WebP: the image formats Telegram's photo processing takes.
 *
 * @example
 * ```ts
 * import { isImage } from "./fake_telegram_wire.ts";
 *
 * isImage(Uint8Array.of(0xff, 0xd8, 0xff, 0xe0)); // true: a JPEG
 * ```
 */
export function isImage(bytes: Uint8Array): boolean {
  const start = head(bytes, 12);
  return start.startsWith("\xff\xd8") || start.startsWith("\x89PNG") || start.startsWith("GIF8") ||
    (start.startsWith("RIFF") && start.slice(8, 12) === "WEBP");
}

/**
 * OGG (Opus), MP3 or M4A: what `sendVoice` takes as a voice message, per the Bot API docs.
 *
 * @example
 * ```ts
 * import { isVoice } from "./fake_telegram_wire.ts";
 *
 * isVoice(new TextEncoder().encode("OggS…")); // true
 * ```
 */
export function isVoice(bytes: Uint8Array): boolean {
  const start = head(bytes, 12);
  return start.startsWith("OggS") || start.startsWith("ID3") ||
    (bytes[0] === 0xff && ((bytes[1] ?? 0) & 0xe0) === 0xe0) ||
    start.slice(4, 8) === "ftyp";
}

/**
 * Width and height of a PNG (from its IHDR), else a camera-like 1280×960.
 *
 * @example
 * ```ts
 * import { imageSize } from "./fake_telegram_wire.ts";
 *
 * imageSize(new Uint8Array(8)); // { width: 1280, height: 960 }: not a PNG
 * ```
 */
export function imageSize(bytes: Uint8Array): { width: number; height: number } {
  if (bytes.length >= 24 && bytes[0] === 0x89 && bytes[1] === 0x50) {
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    return { width: view.getUint32(16), height: view.getUint32(20) };
  }
  return { width: 1280, height: 960 };
}

/** A file the fake holds, found by file_id (getFile) and by file_path (download). */
export interface StoredFile {
  file_id: string;
  file_unique_id: string;
  file_path: string;
  bytes: Uint8Array;
}

/**
 * The files users sent and the bot uploaded, with Telegram-looking file_ids and `<folder>/file_<n>.<ext>` paths.
 *
 * @example
 * ```ts
 * import { FileStore } from "./fake_telegram_wire.ts";
 *
 * const files = new FileStore();
 * const file = files.add(new Uint8Array([1, 2]), "voice", "oga");
 * files.byPath(file.file_path) === files.byId(file.file_id); // true
 * ```
 */
export class FileStore {
  #byId = new Map<string, StoredFile>();
  #byPath = new Map<string, StoredFile>();

  add(bytes: Uint8Array, folder: string, extension: string): StoredFile {
    const n = String(this.#byId.size + 1).padStart(6, "0");
    const file: StoredFile = {
      file_id: `AgACAgQAAxkBAAI${n}fake${folder}`,
      file_unique_id: `AQAD${n}`,
      file_path: `${folder}/file_${n}.${extension}`,
      bytes,
    };
    this.#byId.set(file.file_id, file);
    this.#byPath.set(file.file_path, file);
    return file;
  }

  byId(fileId: string): StoredFile | undefined {
    return this.#byId.get(fileId);
  }

  byPath(path: string): StoredFile | undefined {
    return this.#byPath.get(path);
  }

  /** The fields every file object (PhotoSize, Voice, Document…) carries. */
  static ref(file: StoredFile): { file_id: string; file_unique_id: string; file_size: number } {
    return { file_id: file.file_id, file_unique_id: file.file_unique_id, file_size: file.bytes.length };
  }
}
