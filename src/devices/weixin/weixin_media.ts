/**
 * WeChat's media, through its CDN: every file there is AES-128-ECB with PKCS#7 padding under a key that comes with the
 * message (Web Crypto has no ECB, so `node:crypto`). Inbound: download (a plain GET of `full_url`, else
 * `<cdn>/download?encrypted_query_param=…`), bounded in size and time, then decrypt — the key given in either of the
 * two encodings the service uses. Outbound: `getuploadurl` → encrypt → POST the ciphertext → the download param from
 * the `x-encrypted-param` header → the item `sendmessage` carries.
 *
 * @module
 */

import { Buffer } from "node:buffer";
import { createCipheriv, createDecipheriv, createHash } from "node:crypto";
import { type Clock, deadline } from "../../clock.ts";
import type { IlinkClient } from "./ilink_client.ts";
import { readAtMost } from "../../net/read_at_most.ts";

/** The official client's cap on a media file (100 MB). */
export const MAX_MEDIA_BYTES = 100 * 1024 * 1024;
/** How long a CDN download or upload may take. */
export const CDN_TIMEOUT_MS = 60_000;

/**
 * AES-128-ECB with PKCS#7 padding.
 *
 * @example
 * ```ts
 * aesEcbEncrypt(new TextEncoder().encode("hello"), new Uint8Array(16)).length; // 16
 * ```
 */
export function aesEcbEncrypt(plaintext: Uint8Array, key: Uint8Array): Uint8Array {
  const cipher = createCipheriv("aes-128-ecb", key, null);
  return new Uint8Array(Buffer.concat([cipher.update(plaintext), cipher.final()]));
}

/**
 * The inverse of {@link aesEcbEncrypt}; throws when the padding is wrong (a wrong key, or not ciphertext).
 *
 * @example
 * ```ts
 * const key = new Uint8Array(16);
 * aesEcbDecrypt(aesEcbEncrypt(new Uint8Array([1, 2]), key), key); // Uint8Array [1, 2]
 * ```
 */
export function aesEcbDecrypt(ciphertext: Uint8Array, key: Uint8Array): Uint8Array {
  const decipher = createDecipheriv("aes-128-ecb", key, null);
  return new Uint8Array(Buffer.concat([decipher.update(ciphertext), decipher.final()]));
}

/**
 * The 16-byte key of a media item: `image_item.aeskey` (32 hex characters, preferred when given), else `media.aes_key`
 * as base64 of the 16 raw bytes (images) or base64 of the 32-character hex string (voice, files, video); undefined
 * when neither form fits.
 *
 * @example
 * ```ts
 * const hex = "00112233445566778899aabbccddeeff";
 * mediaKey({ aesKey: btoa(hex) })?.length; // 16
 * mediaKey({ hexKey: hex })?.[1]; // 0x11
 * ```
 */
export function mediaKey(given: { hexKey?: string | undefined; aesKey?: string | undefined }): Uint8Array | undefined {
  if (given.hexKey && /^[0-9a-fA-F]{32}$/.test(given.hexKey)) return new Uint8Array(Buffer.from(given.hexKey, "hex"));
  if (!given.aesKey) return undefined;
  const decoded = Buffer.from(given.aesKey, "base64");
  if (decoded.length === 16) return new Uint8Array(decoded);
  const text = decoded.toString("latin1");
  return /^[0-9a-fA-F]{32}$/.test(text) ? new Uint8Array(Buffer.from(text, "hex")) : undefined;
}

/** Where an inbound file is on the CDN, and its key. */
export interface InboundMedia {
  encryptQueryParam: string;
  fullUrl?: string;
  key: Uint8Array;
}

/** Options of {@link downloadMedia}. */
export interface DownloadOptions {
  cdnUrl: string;
  clock: Pick<Clock, "after">;
  maxBytes?: number;
  timeoutMs?: number;
  signal?: AbortSignal;
}

/**
 * Downloads and decrypts an inbound file; rejects naming what failed (HTTP status, size over the cap, the deadline,
 * a key that does not decrypt it).
 *
 * @example
 * ```ts
 * import { systemClock } from "../../clock.ts";
 *
 * const key = new Uint8Array(16);
 * const bytes = await downloadMedia({ encryptQueryParam: "a+b/c=", key }, {
 *   cdnUrl: "https://novac2c.cdn.weixin.qq.com/c2c",
 *   clock: systemClock,
 * });
 * ```
 */
export async function downloadMedia(media: InboundMedia, options: DownloadOptions): Promise<Uint8Array> {
  const url = media.fullUrl ??
    `${options.cdnUrl.replace(/\/+$/, "")}/download?encrypted_query_param=${
      encodeURIComponent(media.encryptQueryParam)
    }`;
  const maxBytes = options.maxBytes ?? MAX_MEDIA_BYTES;
  const ciphertext = await bounded("download", options, async (signal) => {
    const response = await fetch(url, { signal });
    if (!response.ok) {
      await response.body?.cancel();
      throw new Error(`the WeChat CDN answered HTTP ${response.status} for the file (expired media answers 404)`);
    }
    return await readAtMost(response.body, maxBytes + 16);
  });
  if (ciphertext.length > maxBytes + 16) throw new Error(`the file is larger than ${maxBytes} bytes`);
  try {
    return aesEcbDecrypt(ciphertext, media.key);
  } catch {
    throw new Error("the file does not decrypt with the key its message gave (AES-128-ECB)");
  }
}

/** `getuploadurl`'s `media_type`. */
export type UploadKind = "image" | "file";
const MEDIA_TYPES: Record<UploadKind, number> = { image: 1, file: 3 };

/** Options of {@link uploadMedia}. */
export interface UploadOptions {
  client: IlinkClient;
  cdnUrl: string;
  clock: Pick<Clock, "after">;
  /** The recipient (`…@im.wechat`). */
  to: string;
  signal?: AbortSignal;
}

/**
 * Uploads `bytes` for `to` and returns the item a `sendmessage` carries (`image_item` or `file_item`, with its
 * `type`).
 *
 * @example
 * ```ts
 * import { systemClock } from "../../clock.ts";
 * import { IlinkClient } from "./ilink_client.ts";
 *
 * const client = new IlinkClient({ baseUrl: "https://ilinkai.weixin.qq.com", token: () => "token", clock: systemClock });
 * const item = await uploadMedia(new Uint8Array([1, 2, 3]), "image", undefined, {
 *   client,
 *   cdnUrl: "https://novac2c.cdn.weixin.qq.com/c2c",
 *   clock: systemClock,
 *   to: "o9cq80abc@im.wechat",
 * });
 * item.type; // 2
 * ```
 */
export async function uploadMedia(
  bytes: Uint8Array,
  kind: UploadKind,
  fileName: string | undefined,
  options: UploadOptions,
): Promise<Record<string, unknown>> {
  if (bytes.length > MAX_MEDIA_BYTES) throw new Error(`the file is larger than ${MAX_MEDIA_BYTES} bytes`);
  const key = crypto.getRandomValues(new Uint8Array(16));
  const hexKey = Buffer.from(key).toString("hex");
  const filekey = Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString("hex");
  const ciphertext = aesEcbEncrypt(bytes, key);
  const answer = await options.client.getUploadUrl({
    filekey,
    media_type: MEDIA_TYPES[kind],
    to_user_id: options.to,
    rawsize: bytes.length,
    rawfilemd5: createHash("md5").update(bytes).digest("hex"),
    filesize: ciphertext.length,
    no_need_thumb: true,
    aeskey: hexKey,
  }, options.signal);
  if (!answer.upload_full_url && !answer.upload_param) throw new Error("iLink getuploadurl gave no upload address");
  const url = answer.upload_full_url ??
    `${options.cdnUrl.replace(/\/+$/, "")}/upload?encrypted_query_param=${
      encodeURIComponent(answer.upload_param!)
    }&filekey=${encodeURIComponent(filekey)}`;
  const param = await bounded("upload", options, async (signal) => {
    const response = await fetch(url, {
      method: "POST",
      headers: { "Content-Type": "application/octet-stream" },
      body: ciphertext as Uint8Array<ArrayBuffer>,
      signal,
    });
    await response.body?.cancel();
    if (!response.ok) {
      const why = response.headers.get("x-error-message");
      throw new Error(`the WeChat CDN refused the upload: HTTP ${response.status}${why ? ` (${why})` : ""}`);
    }
    const param = response.headers.get("x-encrypted-param");
    if (!param) throw new Error("the WeChat CDN accepted the upload but gave no x-encrypted-param");
    return param;
  });
  // aes_key as base64 of the raw key: the form images arrive in; the service decodes both.
  const media = { encrypt_query_param: param, aes_key: Buffer.from(key).toString("base64"), encrypt_type: 1 };
  return kind === "image"
    ? { type: 2, image_item: { media, mid_size: ciphertext.length } }
    : { type: 4, file_item: { media, file_name: fileName ?? "file", len: String(bytes.length) } };
}

/** Runs `work` under the CDN deadline and the caller's signal; the deadline aborts the fetch. */
async function bounded<T>(
  what: string,
  options: { clock: Pick<Clock, "after">; timeoutMs?: number; signal?: AbortSignal },
  work: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const timeoutMs = options.timeoutMs ?? CDN_TIMEOUT_MS;
  const abort = new AbortController();
  const onAbort = () => abort.abort(options.signal?.reason);
  options.signal?.addEventListener("abort", onAbort, { once: true });
  const limit = deadline(options.clock, timeoutMs);
  try {
    const raced = await limit.race(work(abort.signal));
    if (raced.late) {
      abort.abort(new Error("timeout"));
      throw new Error(`the WeChat CDN ${what} took longer than ${timeoutMs / 1000} s`);
    }
    return raced.value;
  } finally {
    limit.cancel();
    options.signal?.removeEventListener("abort", onAbort);
  }
}
