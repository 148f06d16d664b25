/**
 * `GET /api/media/<id>` (household and owner): the bytes of a cached image, voice note or video by its cache id, for
 * the console to show or play. The bytes came from outside (a chat upload, a QQ message, a tool), so they are never
 * served as something a browser would run: the type is the one the id names only when the bytes really are that
 * image, audio or video (sniffed); anything else — HTML, SVG, a PDF, a file of no known type — is
 * `application/octet-stream`. Every answer says `nosniff`, `inline` and a `default-src 'none'` policy.
 *
 * @module
 */

import type { Hono } from "hono";
import { extensionFor, sniffMedia } from "../fs/media_type.ts";
import { MEDIA_ID } from "../media/media_cache.ts";
import { ApiError } from "./api_error.ts";
import type { ApiVariables } from "./auth.ts";
import { requireTrust } from "./require_trust.ts";

/** What the endpoint needs of the media cache: its bytes by id (`MediaService.read`, `MediaCache.read`). */
export interface MediaReader {
  /** The bytes of a cached file, or `undefined` when the cache does not have it; a malformed id is a TypeError. */
  read(id: string): Promise<Uint8Array | undefined>;
}

/**
 * The type to serve `bytes` of cache id `id` as: the sniffed type when it is an image, audio or video type and the
 * id's extension is that type's, else `application/octet-stream`.
 *
 * @example
 * ```ts
 * const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
 * servedType(`${"0".repeat(64)}.png`, png); // "image/png"
 * servedType(`${"0".repeat(64)}.bin`, new TextEncoder().encode("<script>")); // "application/octet-stream"
 * ```
 */
export function servedType(id: string, bytes: Uint8Array): string {
  const sniffed = sniffMedia(bytes);
  const media = sniffed.kind === "image" || sniffed.kind === "audio" || sniffed.kind === "video";
  const extension = id.slice(id.lastIndexOf(".") + 1);
  return media && extensionFor(sniffed.mime) === extension ? sniffed.mime : "application/octet-stream";
}

function badId(id: string): ApiError {
  const shown = id.length > 80 ? `${id.slice(0, 80)}…` : id;
  return new ApiError(
    400,
    "bad_request",
    `Media id ${JSON.stringify(shown)} is not a cache id (64 hex digits, a dot and an extension)`,
  );
}

/**
 * Mounts `GET /api/media/<id>` over the media cache (behind the API's auth).
 *
 * @example
 * ```ts
 * import { type ApiOptions, createApi } from "./app.ts";
 * import type { MediaService } from "../media/media_service.ts";
 *
 * declare const options: ApiOptions;
 * declare const media: MediaService;
 * const app = createApi({ ...options, routes: [mediaRoutes(media)] });
 * ```
 */
export function mediaRoutes(media: MediaReader): (app: Hono<{ Variables: ApiVariables }>) => void {
  return (app) => {
    app.get("/api/media/:id", async (c) => {
      requireTrust(c.get("identity"), "household", "Cached media");
      const id = c.req.param("id");
      if (!MEDIA_ID.test(id)) throw badId(id);
      let bytes: Uint8Array | undefined;
      try {
        bytes = await media.read(id);
      } catch (error) {
        if (error instanceof TypeError) throw badId(id);
        throw error;
      }
      if (!bytes) {
        throw new ApiError(404, "not_found", `No cached media ${JSON.stringify(id)} (evicted, or never kept)`);
      }
      // The cache's bytes are in an ArrayBuffer; one shared with other threads would be copied.
      const body = bytes.buffer instanceof ArrayBuffer
        ? new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength)
        : bytes.slice();
      return new Response(body, {
        headers: {
          "content-type": servedType(id, bytes),
          "content-length": String(bytes.byteLength),
          "content-disposition": "inline",
          "x-content-type-options": "nosniff",
          "content-security-policy": "default-src 'none'",
          "cache-control": "private, no-store",
        },
      });
    });
  };
}
