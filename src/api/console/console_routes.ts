/**
 * The web console's files: `GET /` (its page) and `GET /console/<file>` (its ES modules and CSS), embedded
 * (`console_assets.ts`) and prepared once in memory, plain and gzipped, each with an ETag. They hold no data (every piece of it comes from
 * the API with the person's token), so they are served without auth; the page carries a strict
 * Content-Security-Policy (no inline script or style, nothing from elsewhere).
 *
 * @module
 */

import type { Context, Hono } from "hono";
import { gzipSync } from "node:zlib";
import { ApiError } from "../api_error.ts";
import type { ApiVariables } from "../auth.ts";
import { CONSOLE_FILES } from "./console_assets.ts";

/** Options of {@link consoleRoutes}. */
export interface ConsoleRoutesOptions {
  /** The console's files by path; the embedded ones ({@link CONSOLE_FILES}) by default. */
  files?: Readonly<Record<string, string>>;
}

/** The Content-Security-Policy of the console's page. */
export const CONSOLE_CSP =
  "default-src 'self'; img-src 'self' blob: data:; media-src 'self' blob:; style-src 'self'; " +
  "script-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

const TYPES: Readonly<Record<string, string>> = {
  html: "text/html; charset=utf-8",
  js: "text/javascript; charset=utf-8",
  mjs: "text/javascript; charset=utf-8",
  css: "text/css; charset=utf-8",
  json: "application/json; charset=utf-8",
  svg: "image/svg+xml",
  txt: "text/plain; charset=utf-8",
  png: "image/png",
  ico: "image/x-icon",
  webp: "image/webp",
  woff2: "font/woff2",
};

/** One file, as it is sent. */
interface Asset {
  type: string;
  body: Uint8Array<ArrayBuffer>;
  etag: string;
  /** The gzipped body, when that is smaller. */
  gzip?: { body: Uint8Array<ArrayBuffer>; etag: string };
}

/** A file name under `/console/`: relative, forward slashes, no `.`/`..` segment, no control characters. */
const SAFE_NAME = /^(?:[A-Za-z0-9_-][A-Za-z0-9_.-]*\/)*[A-Za-z0-9_-][A-Za-z0-9_.-]*$/;

function shown(name: string): string {
  return JSON.stringify(name.length > 80 ? `${name.slice(0, 77)}...` : name);
}

async function tagOf(bytes: Uint8Array<ArrayBuffer>, suffix: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  const hex = Array.from(digest.subarray(0, 12), (byte) => byte.toString(16).padStart(2, "0")).join("");
  return `"${hex}${suffix}"`;
}

async function assetOf(name: string, bytes: Uint8Array<ArrayBuffer>): Promise<Asset> {
  const type = TYPES[name.slice(name.lastIndexOf(".") + 1).toLowerCase()] ?? "application/octet-stream";
  const asset: Asset = { type, body: bytes, etag: await tagOf(bytes, "") };
  if (/^text\/|javascript|json|svg/.test(type)) {
    const gzipped = new Uint8Array(gzipSync(bytes, { level: 9 }));
    if (gzipped.length < bytes.length) asset.gzip = { body: gzipped, etag: await tagOf(bytes, "-gz") };
  }
  return asset;
}

/** The files, encoded and gzipped once. */
async function prepare(files: Readonly<Record<string, string>>): Promise<Map<string, Asset>> {
  const encoder = new TextEncoder();
  const assets = new Map<string, Asset>();
  for (const [name, text] of Object.entries(files)) assets.set(name, await assetOf(name, encoder.encode(text)));
  return assets;
}

/** True when the request's `Accept-Encoding` takes gzip (named with a q above 0, or `*` when gzip is not named). */
function acceptsGzip(header: string | undefined): boolean {
  let star = false;
  for (const part of (header ?? "").toLowerCase().split(",")) {
    const [coding, ...params] = part.trim().split(";");
    const q = params.map((param) => /^\s*q=([\d.]+)\s*$/.exec(param)?.[1]).find((value) => value !== undefined);
    const weight = q === undefined ? 1 : Number(q);
    if (coding === "gzip" || coding === "x-gzip") return weight > 0;
    if (coding === "*") star = weight > 0;
  }
  return star;
}

/** True when `If-None-Match` names one of `tags` (or is `*`); weak tags compare as their strong selves. */
function notModified(header: string | undefined, tags: readonly string[]): boolean {
  if (!header) return false;
  return header.split(",").some((tag) => {
    const given = tag.trim().replace(/^W\//, "");
    return given === "*" || tags.includes(given);
  });
}

function send(c: Context, asset: Asset): Response {
  const gzip = asset.gzip && acceptsGzip(c.req.header("accept-encoding")) ? asset.gzip : undefined;
  const headers = new Headers({
    "Content-Type": asset.type,
    "Cache-Control": "no-cache",
    "ETag": gzip?.etag ?? asset.etag,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
  });
  if (asset.gzip) headers.set("Vary", "Accept-Encoding");
  if (asset.type.startsWith("text/html")) {
    headers.set("Content-Security-Policy", CONSOLE_CSP);
    headers.set("X-Frame-Options", "DENY");
  }
  const tags = asset.gzip ? [asset.etag, asset.gzip.etag] : [asset.etag];
  if (notModified(c.req.header("if-none-match"), tags)) {
    headers.delete("Content-Type");
    return new Response(null, { status: 304, headers });
  }
  if (gzip) headers.set("Content-Encoding", "gzip");
  const body = gzip?.body ?? asset.body;
  headers.set("Content-Length", String(body.length));
  return new Response(c.req.method === "HEAD" ? null : body, { status: 200, headers });
}

/**
 * Mounts the console: `GET /` answers `index.html`, `GET /console/<file>` the file of that name in the assets folder
 * (anything else is a 404 naming the file). The files are prepared on the first request and kept.
 *
 * @example
 * ```ts
 * import { type ApiOptions, createApi } from "../app.ts";
 *
 * declare const options: ApiOptions;
 * const app = createApi({ ...options, routes: [consoleRoutes()] });
 * ```
 */
export function consoleRoutes(options: ConsoleRoutesOptions = {}): (app: Hono<{ Variables: ApiVariables }>) => void {
  let prepared: Promise<Map<string, Asset>> | undefined;
  const assets = () => prepared ??= prepare(options.files ?? CONSOLE_FILES);
  const file = async (c: Context, name: string): Promise<Response> => {
    if (!SAFE_NAME.test(name)) {
      throw new ApiError(
        404,
        "not_found",
        `No console file ${shown(name)}: names are relative, without "..", "." or backslashes`,
      );
    }
    const asset = (await assets()).get(name);
    if (!asset) throw new ApiError(404, "not_found", `No console file ${shown(name)}`);
    return send(c, asset);
  };
  return (app) => {
    app.get("/", (c) => file(c, "index.html"));
    app.get("/console/:file{.+}", (c) => file(c, c.req.param("file")));
  };
}
