/**
 * Fetching a media file without letting its server decide how much homed reads or how long it waits. A URL from a
 * chat message may point at a 200 MB "image", a server that streams forever or one that never answers; homed holds
 * at most the size limit plus one network chunk in memory, gives the whole fetch (redirects included) one deadline,
 * and checks the address policy on the first URL and on every redirect, so a public URL cannot bounce homed to a
 * private one.
 *
 * @module
 */

import type { Clock } from "../clock.ts";
import { escapeControl } from "../text/untrusted.ts";
import { classifyAddress } from "../net/ip_address.ts";
import { concatBytes } from "../text/concat_bytes.ts";

/** Why a fetch failed: the file was too big, time ran out, the server answered badly, the network failed, or the policy refused a URL. */
export type MediaFetchErrorCode = "too_big" | "timeout" | "http" | "network" | "refused";

/** A media fetch failed; `code` says how, the message says what and names the setting. Callers catch it to tell the sender. */
export class MediaFetchError extends Error {
  /** How the fetch failed. */
  readonly code: MediaFetchErrorCode;

  /**
   * @example
   * ```ts
   * const error = new MediaFetchError("http", "The file at http://127.0.0.1:3000/a.png could not be fetched: HTTP 404 Not Found");
   * error.code; // "http"
   * ```
   */
  constructor(code: MediaFetchErrorCode, message: string) {
    super(message);
    this.name = "MediaFetchError";
    this.code = code;
  }
}

/** Options of {@link fetchBounded}. */
export interface BoundedFetchOptions {
  /** The most bytes the body may have. */
  maxBytes: number;
  /** The setting `maxBytes` comes from, for messages (e.g. "media.max_image_bytes"). */
  limitName: string;
  /** One deadline for the whole fetch: every redirect, the headers and the body. */
  timeoutMs: number;
  /** The setting `timeoutMs` comes from, for messages (e.g. "media.fetch_timeout_ms"). */
  timeoutName?: string;
  /** The clock the deadline runs on. */
  clock: Clock;
  /** Stops the fetch; it then rejects with the signal's reason. */
  signal?: AbortSignal;
  /** The address policy, applied to the first URL and to every redirect; its rejection refuses the fetch. */
  check: (url: URL) => Promise<URL>;
  /** The fetch to use (the global one by default). */
  fetch?: typeof fetch;
  /** How many redirects to follow (3 by default). */
  maxRedirects?: number;
}

/** What {@link fetchBounded} fetched. */
export interface FetchedMedia {
  /** The body, at most `maxBytes` long. */
  bytes: Uint8Array;
  /** The `content-type` the server declared (not to be trusted; sniff the bytes). */
  contentType: string | undefined;
  /** The URL the body came from, after redirects. */
  url: URL;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const URL_SHOWN = 120;

/** A URL for a message: control characters made visible, credentials dropped, at most 120 characters. */
function shown(url: URL): string {
  const copy = new URL(url.href);
  copy.username = "";
  copy.password = "";
  const text = escapeControl(copy.href);
  return text.length > URL_SHOWN ? `${text.slice(0, URL_SHOWN - 1)}…` : text;
}

/** A rejection that never counts as unhandled: the promise is only ever raced. */
function abortedBy(signal: AbortSignal): Promise<never> {
  const aborted = new Promise<never>((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    else signal.addEventListener("abort", () => reject(signal.reason), { once: true });
  });
  aborted.catch(() => {});
  return aborted;
}

/**
 * Fetches `url` with a size limit and a deadline: redirects are followed by hand (at most `maxRedirects`, each
 * checked by `check`), a declared `content-length` over `maxBytes` is refused before the body is read, and the body
 * is read chunk by chunk and dropped as soon as it passes `maxBytes`. Rejects with a {@link MediaFetchError}, or with
 * the caller's `signal` reason when that aborted.
 *
 * @example
 * ```ts
 * import { systemClock } from "../clock.ts";
 * import { checkMediaUrl, resolveWithDns } from "./address_policy.ts";
 *
 * const policy = {
 *   allowHosts: [],
 *   trustedHosts: ["127.0.0.1"],
 *   ownListen: { host: "127.0.0.1", port: 8123 },
 *   resolve: resolveWithDns,
 * };
 * const url = new URL("http://127.0.0.1:3000/image/abc.png");
 * const { bytes, contentType } = await fetchBounded(url, {
 *   maxBytes: 10 * 1024 * 1024,
 *   limitName: "media.max_image_bytes",
 *   timeoutMs: 15_000,
 *   clock: systemClock,
 *   check: (next) => checkMediaUrl(next.href, policy),
 * });
 * console.log(bytes.length, contentType);
 * ```
 */
export async function fetchBounded(url: URL, options: BoundedFetchOptions): Promise<FetchedMedia> {
  const { maxBytes, limitName, timeoutMs, clock, signal } = options;
  const fetchFn = options.fetch ?? fetch;
  const maxRedirects = options.maxRedirects ?? 3;
  if (!Number.isSafeInteger(maxBytes) || maxBytes < 0) {
    throw new RangeError(`The size limit ${limitName} must be a whole number of bytes; got ${maxBytes}`);
  }
  signal?.throwIfAborted();

  const controller = new AbortController();
  let timedOut = false;
  const cancelTimer = clock.after(timeoutMs, () => {
    timedOut = true;
    controller.abort(new DOMException("The media fetch timed out", "TimeoutError"));
  });
  const onAbort = () => controller.abort(signal?.reason);
  signal?.addEventListener("abort", onAbort, { once: true });
  const stopped = abortedBy(controller.signal);
  /** Waits for `work` unless the deadline or the caller stops the fetch first. */
  const bounded = <T>(work: Promise<T>) => Promise.race([work, stopped]);

  let current = url;
  try {
    current = await checked(url, options.check, bounded, controller.signal);
    for (let redirects = 0;; redirects++) {
      const response = await bounded(fetchFn(current, { redirect: "manual", signal: controller.signal }));
      if (REDIRECTS.has(response.status)) {
        await response.body?.cancel().catch(() => {});
        const location = response.headers.get("location");
        if (location === null) {
          throw new MediaFetchError(
            "http",
            `The file at ${shown(current)} redirected (HTTP ${response.status}) nowhere`,
          );
        }
        if (redirects >= maxRedirects) {
          throw new MediaFetchError(
            "http",
            `The file at ${shown(current)} redirected more than ${maxRedirects} times; homed stopped following`,
          );
        }
        let next: URL;
        try {
          next = new URL(location, current);
        } catch {
          throw new MediaFetchError(
            "http",
            `The file at ${shown(current)} redirected to "${escapeControl(location.slice(0, URL_SHOWN))}", not a URL`,
          );
        }
        current = await checked(next, options.check, bounded, controller.signal);
        continue;
      }
      if (!response.ok) {
        await response.body?.cancel().catch(() => {});
        const text = response.statusText ? ` ${escapeControl(response.statusText)}` : "";
        throw new MediaFetchError(
          "http",
          `The file at ${shown(current)} could not be fetched: HTTP ${response.status}${text}`,
        );
      }
      const declared = declaredLength(response.headers);
      if (declared !== undefined && declared > maxBytes) {
        await response.body?.cancel().catch(() => {});
        throw new MediaFetchError(
          "too_big",
          `The file at ${
            shown(current)
          } is larger than ${limitName} (${maxBytes} bytes): the server declared ${declared} bytes`,
        );
      }
      const bytes = await readAtMost(
        response,
        maxBytes,
        bounded,
        () => `The file at ${shown(current)} sent more than ${limitName} (${maxBytes} bytes)`,
      );
      return { bytes, contentType: response.headers.get("content-type") ?? undefined, url: current };
    }
  } catch (error) {
    if (error instanceof MediaFetchError) throw error;
    if (signal?.aborted) throw signal.reason;
    if (timedOut) {
      const setting = options.timeoutName ? ` (${options.timeoutName})` : "";
      throw new MediaFetchError(
        "timeout",
        `The file at ${shown(current)} did not arrive within ${timeoutMs} ms${setting}; homed gave up`,
      );
    }
    if (error instanceof Deno.errors.NotCapable) {
      throw new MediaFetchError(
        "refused",
        `The file at ${shown(current)} was not fetched: ${noNetRight(error, current)}`,
      );
    }
    const detail = error instanceof Error ? error.message : String(error);
    throw new MediaFetchError(
      "network",
      `The file at ${shown(current)} could not be fetched: ${escapeControl(detail)}`,
    );
  } finally {
    cancelTimer();
    signal?.removeEventListener("abort", onAbort);
    // Whatever is still open (a body cut short, a connection) goes with the controller.
    controller.abort();
  }
}

/**
 * What to do when Deno refused the connection: Deno's own words ("run again with the --allow-net flag") are wrong for
 * homed, whose rights come from its config through `homed flags`. Names the host and port, the setting to list it in
 * (`media.allow_hosts` for this machine and the LAN — where a OneBot implementation that connected to homed serves its
 * media — `media.fetch_hosts` for a public media host), and that the right comes with a restart on the new flags
 * (the daemon's rights are fixed when it starts).
 *
 * @example
 * ```ts
 * const denied = new Deno.errors.NotCapable('Requires net access to "127.0.0.1:3000", run again with the --allow-net flag');
 * noNetRight(denied, new URL("http://127.0.0.1:3000/image/a.png"));
 * // 'homed may not connect to 127.0.0.1:3000: add "127.0.0.1:3000" to media.allow_hosts and restart homed …'
 * ```
 */
export function noNetRight(error: Error, url: URL): string {
  const port = url.port || (url.protocol === "https:" ? "443" : "80");
  const named = /net access to "([^"]*)"/.exec(error.message)?.[1];
  const host = escapeControl(named ?? `${url.hostname}:${port}`);
  const bare = url.hostname.replace(/^\[|\]$/g, "");
  let local: boolean | undefined;
  if (bare === "localhost" || bare.endsWith(".localhost")) local = true;
  else {
    try {
      local = classifyAddress(bare) !== "public";
    } catch {
      local = undefined; // a host name: this machine, the LAN or the internet
    }
  }
  const setting = local === true
    ? "media.allow_hosts"
    : local === false
    ? "media.fetch_hosts"
    : "media.allow_hosts (this machine, the LAN) or media.fetch_hosts (the internet)";
  // Short enough for the turn's note (300 characters with the URL before it).
  return `homed may not connect to ${host}: add ${JSON.stringify(host)} to ${setting} and restart homed with the ` +
    "flags `homed flags` prints (homed service install under systemd)";
}

/** Applies the policy; any rejection of it is a refusal, worded by the policy (a stop of the fetch passes through). */
async function checked(
  url: URL,
  check: (url: URL) => Promise<URL>,
  bounded: <T>(work: Promise<T>) => Promise<T>,
  stop: AbortSignal,
): Promise<URL> {
  try {
    return await bounded(Promise.resolve().then(() => check(url)));
  } catch (error) {
    if (stop.aborted) throw error;
    const message = error instanceof Error ? error.message : String(error);
    throw new MediaFetchError("refused", message);
  }
}

/** The `content-length` header as a number, when it is a plain decimal one. */
function declaredLength(headers: Headers): number | undefined {
  const value = headers.get("content-length")?.trim();
  return value !== undefined && /^\d+$/.test(value) ? Number(value) : undefined;
}

/** Reads the body until its end or until it passes `maxBytes`; then the reader is cancelled and the read refused. */
async function readAtMost(
  response: Response,
  maxBytes: number,
  bounded: <T>(work: Promise<T>) => Promise<T>,
  tooBig: () => string,
): Promise<Uint8Array> {
  if (response.body === null) return new Uint8Array();
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await bounded(reader.read());
      if (done) break;
      total += value.byteLength;
      if (total > maxBytes) {
        await reader.cancel().catch(() => {});
        throw new MediaFetchError("too_big", `${tooBig()}; homed stopped reading at ${total}`);
      }
      chunks.push(value);
    }
  } catch (error) {
    await reader.cancel().catch(() => {});
    throw error;
  } finally {
    reader.releaseLock();
  }
  return concatBytes(chunks);
}
