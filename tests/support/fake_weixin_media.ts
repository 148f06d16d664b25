/**
 * The media half of the fake WeChat iLink bot API ({@link ./fake_weixin.ts}): AES-128-ECB as the WeChat CDN uses it,
 * and a CDN store on loopback — inbound media a fake user sends (downloadable ciphertext), and the bot's uploads
 * (`getuploadurl` → `POST /upload` → the `x-encrypted-param` download param a later `sendmessage` names), each upload
 * checked against what `getuploadurl` declared (ciphertext size, plaintext size and MD5 after decrypting).
 *
 * Read from `@tencent-weixin/openclaw-weixin` (`src/cdn/aes-ecb.ts`, `cdn-upload.ts`, `cdn-url.ts`, `pic-decrypt.ts`,
 * `upload.ts`, `messaging/send.ts`); written anew.
 *
 * @module
 */

import { Buffer } from "node:buffer";
import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";

/** What a CDN media item is. */
export type WeixinMediaKind = "image" | "video" | "file" | "voice";

/** `getuploadurl`'s `media_type` (proto `UploadMediaType`). */
const UPLOAD_MEDIA_TYPES: Record<number, WeixinMediaKind> = { 1: "image", 2: "video", 3: "file", 4: "voice" };

/**
 * AES-128-ECB with PKCS#7 padding, as the WeChat CDN stores every file.
 *
 * @example
 * ```ts
 * const key = new Uint8Array(16);
 * const sealed = aesEcbEncrypt(new TextEncoder().encode("hello"), key);
 * sealed.length; // 16: ceil((5 + 1) / 16) * 16
 * ```
 */
export function aesEcbEncrypt(plaintext: Uint8Array, key: Uint8Array): Uint8Array<ArrayBuffer> {
  const cipher = createCipheriv("aes-128-ecb", key, null);
  return new Uint8Array(Buffer.concat([cipher.update(plaintext), cipher.final()]));
}

/**
 * The inverse of {@link aesEcbEncrypt}; throws when the padding is wrong (a wrong key, or not ciphertext at all).
 *
 * @example
 * ```ts
 * const key = new Uint8Array(16);
 * const plain = aesEcbDecrypt(aesEcbEncrypt(new Uint8Array([1, 2, 3]), key), key); // Uint8Array [1, 2, 3]
 * ```
 */
export function aesEcbDecrypt(ciphertext: Uint8Array, key: Uint8Array): Uint8Array<ArrayBuffer> {
  const decipher = createDecipheriv("aes-128-ecb", key, null);
  return new Uint8Array(Buffer.concat([decipher.update(ciphertext), decipher.final()]));
}

/**
 * The ciphertext size of `plaintextSize` bytes under PKCS#7 (always at least one byte of padding).
 *
 * @example
 * ```ts
 * aesEcbPaddedSize(16); // 32
 * ```
 */
export function aesEcbPaddedSize(plaintextSize: number): number {
  return Math.ceil((plaintextSize + 1) / 16) * 16;
}

/**
 * The 16-byte key of a `media.aes_key`, in either encoding seen in the wild: base64 of the raw bytes (images), or base64
 * of the 32-character hex string (voice, file, video — and the official client's uploads); undefined when neither.
 *
 * @example
 * ```ts
 * const key = new Uint8Array(16).fill(7);
 * const hex = Array.from(key, (b) => b.toString(16).padStart(2, "0")).join("");
 * parseMediaAesKey(btoa(hex))?.length; // 16
 * ```
 */
export function parseMediaAesKey(aesKeyBase64: string): Uint8Array | undefined {
  const decoded = Buffer.from(aesKeyBase64, "base64");
  if (decoded.length === 16) return new Uint8Array(decoded);
  const text = decoded.toString("latin1");
  if (/^[0-9a-fA-F]{32}$/.test(text)) return new Uint8Array(Buffer.from(text, "hex"));
  return undefined;
}

/**
 * Lowercase hex MD5, as `getuploadurl`'s `rawfilemd5` carries it.
 *
 * @example
 * ```ts
 * md5Hex(new Uint8Array()); // "d41d8cd98f00b204e9800998ecf8427e"
 * ```
 */
export function md5Hex(bytes: Uint8Array): string {
  return createHash("md5").update(bytes).digest("hex");
}

function hex(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString("hex");
}

function base64(bytes: Uint8Array | string): string {
  return Buffer.from(bytes).toString("base64");
}

/** An opaque CDN param that always holds `+`, `/` and `=`, so a client that forgets to URL-encode it is caught. */
function opaqueParam(): string {
  return base64(Buffer.concat([Buffer.from([0xfb, 0xef, 0xff]), randomBytes(28)]));
}

/** A file the CDN holds. */
interface StoredMedia {
  kind: WeixinMediaKind;
  plaintext: Uint8Array;
  ciphertext: Uint8Array;
  key: Uint8Array;
  /** For uploads: the recipient `getuploadurl` named. */
  to?: string;
  /** {@link WeixinCdnStore.forget}: answered 404 without a violation. */
  gone: boolean;
}

/** What `getuploadurl` declared for one upload. */
interface PendingUpload {
  filekey: string;
  kind: WeixinMediaKind;
  to: string;
  rawsize: number;
  rawfilemd5: string;
  filesize: number;
  key: Uint8Array;
}

/** What a media item of an outbound `sendmessage` turned out to carry. */
export interface OutboundMedia {
  problems: string[];
  bytes?: Uint8Array;
  fileName?: string;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/**
 * The fake CDN: inbound media by download param, uploads by upload param. {@link FakeWeixin} serves it under
 * `cdnBaseUrl`; a test reaches it through the fake.
 *
 * @example
 * ```ts
 * const violations: string[] = [];
 * const cdn = new WeixinCdnStore((text) => violations.push(text), "http://127.0.0.1:1/c2c");
 * const stored = cdn.storeInbound("image", new Uint8Array([1, 2, 3]));
 * stored.param; // what a media item's encrypt_query_param carries
 * ```
 */
export class WeixinCdnStore {
  /** CDN requests that reached the store. */
  requests = 0;
  readonly #media = new Map<string, StoredMedia>();
  readonly #uploads = new Map<string, PendingUpload>();
  readonly #violation: (text: string) => void;
  readonly #cdnBaseUrl: string;

  constructor(violation: (text: string) => void, cdnBaseUrl: string) {
    this.#violation = violation;
    this.#cdnBaseUrl = cdnBaseUrl;
  }

  /** Encrypts `plaintext` under a fresh key and stores it for download. */
  storeInbound(kind: WeixinMediaKind, plaintext: Uint8Array): { param: string; key: Uint8Array; size: number } {
    const key = new Uint8Array(randomBytes(16));
    const ciphertext = aesEcbEncrypt(plaintext, key);
    const param = opaqueParam();
    this.#media.set(param, { kind, plaintext, ciphertext, key, gone: false });
    return { param, key, size: ciphertext.length };
  }

  /** The CDN `media` object of an inbound item, in the key encoding the kind uses on the live service. */
  mediaObject(stored: { param: string; key: Uint8Array }, kind: WeixinMediaKind, fullUrl: boolean) {
    return {
      encrypt_query_param: stored.param,
      aes_key: kind === "image" ? base64(stored.key) : base64(hex(stored.key)),
      encrypt_type: 1,
      ...(fullUrl ? { full_url: this.downloadUrl(stored.param) } : {}),
    };
  }

  /** `<cdn>/download?encrypted_query_param=…`, URL-encoded as the official client builds it. */
  downloadUrl(param: string): string {
    return `${this.#cdnBaseUrl}/download?encrypted_query_param=${encodeURIComponent(param)}`;
  }

  /** The file now answers 404 (media expired on the CDN) — not a violation to ask for it. */
  forget(param: string): void {
    const media = this.#media.get(param);
    if (media) media.gone = true;
  }

  /** Checks a `getuploadurl` body; returns the problems, or the answer with a fresh upload param. */
  uploadUrl(body: Record<string, unknown>, fullUrl: boolean): { problems: string[]; answer?: Record<string, string> } {
    const problems: string[] = [];
    const { filekey, media_type, to_user_id, rawsize, rawfilemd5, filesize, aeskey } = body;
    if (typeof filekey !== "string" || filekey === "") problems.push("filekey is missing");
    const kind = typeof media_type === "number" ? UPLOAD_MEDIA_TYPES[media_type] : undefined;
    if (!kind) problems.push(`media_type is ${JSON.stringify(media_type)}, not 1 (image) … 4 (voice)`);
    if (typeof to_user_id !== "string" || !to_user_id.endsWith("@im.wechat")) {
      problems.push(`to_user_id is ${JSON.stringify(to_user_id)}, not a user id`);
    }
    if (!Number.isSafeInteger(rawsize) || (rawsize as number) < 0) problems.push("rawsize is not a byte count");
    if (typeof rawfilemd5 !== "string" || !/^[0-9a-f]{32}$/i.test(rawfilemd5)) {
      problems.push("rawfilemd5 is not hex MD5");
    }
    if (Number.isSafeInteger(rawsize) && filesize !== aesEcbPaddedSize(rawsize as number)) {
      problems.push(
        `filesize is ${JSON.stringify(filesize)}, not ceil((rawsize+1)/16)*16 = ${aesEcbPaddedSize(rawsize as number)}`,
      );
    }
    if (typeof aeskey !== "string" || !/^[0-9a-f]{32}$/i.test(aeskey)) problems.push("aeskey is not 32 hex characters");
    if (problems.length) return { problems };
    const param = opaqueParam();
    this.#uploads.set(param, {
      filekey: filekey as string,
      kind: kind!,
      to: to_user_id as string,
      rawsize: rawsize as number,
      rawfilemd5: (rawfilemd5 as string).toLowerCase(),
      filesize: filesize as number,
      key: new Uint8Array(Buffer.from(aeskey as string, "hex")),
    });
    const upload = `${this.#cdnBaseUrl}/upload?encrypted_query_param=${encodeURIComponent(param)}&filekey=${
      encodeURIComponent(filekey as string)
    }`;
    return {
      problems,
      answer: { upload_param: param, thumb_upload_param: "", ...(fullUrl ? { upload_full_url: upload } : {}) },
    };
  }

  /** Serves `/download` and `/upload` (the path below the CDN base). */
  async handle(request: Request, path: string, url: URL): Promise<Response> {
    this.requests++;
    const param = url.searchParams.get("encrypted_query_param") ?? "";
    if (request.method === "GET" && path === "/download") {
      const media = this.#media.get(param);
      if (!media) this.#violation(`CDN download of the unknown encrypted_query_param ${JSON.stringify(param)}`);
      if (!media || media.gone) return new Response("not found", { status: 404 });
      return new Response(new Uint8Array(media.ciphertext), {
        headers: { "content-type": "application/octet-stream" },
      });
    }
    if (request.method === "POST" && path === "/upload") return await this.#upload(request, url, param);
    await request.body?.cancel();
    this.#violation(`CDN ${request.method} ${path}: no such route`);
    return new Response("not found", { status: 404 });
  }

  async #upload(request: Request, url: URL, param: string): Promise<Response> {
    const body = new Uint8Array(await request.arrayBuffer());
    const refuse = (what: string) => {
      this.#violation(`CDN upload: ${what}`);
      return new Response(null, { status: 400, headers: { "x-error-message": what } });
    };
    const pending = this.#uploads.get(param);
    if (!pending) return refuse(`unknown encrypted_query_param ${JSON.stringify(param)} (not from getuploadurl)`);
    if (request.headers.get("content-type") !== "application/octet-stream") {
      return refuse(`Content-Type is ${request.headers.get("content-type")}, not application/octet-stream`);
    }
    if (url.searchParams.get("filekey") !== pending.filekey) {
      return refuse(`filekey ${url.searchParams.get("filekey")} is not the one getuploadurl named`);
    }
    if (body.length !== pending.filesize) {
      return refuse(`ciphertext is ${body.length} bytes, getuploadurl declared filesize ${pending.filesize}`);
    }
    let plaintext: Uint8Array;
    try {
      plaintext = aesEcbDecrypt(body, pending.key);
    } catch {
      return refuse("body does not decrypt with the aeskey getuploadurl named (AES-128-ECB, PKCS#7)");
    }
    if (plaintext.length !== pending.rawsize) {
      return refuse(`decrypted size ${plaintext.length} is not rawsize ${pending.rawsize}`);
    }
    if (md5Hex(plaintext) !== pending.rawfilemd5) return refuse("decrypted MD5 is not rawfilemd5");
    const download = opaqueParam();
    this.#media.set(download, {
      kind: pending.kind,
      plaintext,
      ciphertext: body,
      key: pending.key,
      to: pending.to,
      gone: false,
    });
    return new Response(null, { status: 200, headers: { "x-encrypted-param": download } });
  }

  /** Checks the media item of a `sendmessage` (`image_item`/`voice_item`/`file_item`/`video_item`) to `to`. */
  outbound(kind: WeixinMediaKind, item: Record<string, unknown>, to: string): OutboundMedia {
    const media = isRecord(item.media) ? item.media : {};
    const param = typeof media.encrypt_query_param === "string" ? media.encrypt_query_param : "";
    const stored = this.#media.get(param);
    if (!stored || stored.to === undefined) {
      return { problems: [`${kind}_item.media.encrypt_query_param is not the x-encrypted-param of an upload`] };
    }
    const problems: string[] = [];
    if (stored.kind !== kind) problems.push(`${kind}_item names a file uploaded as media_type ${stored.kind}`);
    if (stored.to !== to) problems.push(`${kind}_item names a file uploaded for ${stored.to}, not ${to}`);
    const key = typeof media.aes_key === "string" ? parseMediaAesKey(media.aes_key) : undefined;
    if (!key || hex(key) !== hex(stored.key)) {
      problems.push(`${kind}_item.media.aes_key does not decode (raw or hex, base64) to the uploaded aeskey`);
    }
    if (media.encrypt_type !== 1) problems.push(`${kind}_item.media.encrypt_type is not 1`);
    let fileName: string | undefined;
    if (kind === "file") {
      if (typeof item.file_name !== "string" || item.file_name === "") problems.push("file_item.file_name is missing");
      else fileName = item.file_name;
      if (item.len !== String(stored.plaintext.length)) {
        problems.push(`file_item.len is ${JSON.stringify(item.len)}, not "${stored.plaintext.length}"`);
      }
    }
    if (kind === "image" && item.mid_size !== undefined && item.mid_size !== stored.ciphertext.length) {
      problems.push(`image_item.mid_size is ${item.mid_size}, not the ciphertext size ${stored.ciphertext.length}`);
    }
    return { problems, bytes: stored.plaintext, ...(fileName === undefined ? {} : { fileName }) };
  }
}
