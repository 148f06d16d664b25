/**
 * The Telegram Bot API's wire, plain: `POST <api_url>/bot<token>/<method>` with a JSON body (multipart `FormData` for
 * uploads), `{ok, result}` or `{ok: false, error_code, description, parameters}` back, and file downloads from
 * `<api_url>/file/bot<token>/<file_path>`. No framework: homed needs a dozen methods, and grammY's update router,
 * plugins and runner would sit idle beside homed's own IO queue, pacing and backoff.
 *
 * The token is in every URL, and Deno's fetch errors quote the URL: every error leaving this file has the token
 * replaced by `<token>`, so nothing logged, stored or shown can carry it.
 *
 * @module
 */

import { type Clock, deadline } from "../../clock.ts";
import { readAtMost } from "../../net/read_at_most.ts";

/** A file to upload: its bytes, the name the user sees, its MIME type. */
export interface Upload {
  /** The multipart field (`photo`, `voice`, `document`). */
  field: string;
  bytes: Uint8Array;
  filename: string;
  mime: string;
}

/** Options of one call. */
export interface CallOptions {
  /** Aborts the request (the device's stop). */
  signal?: AbortSignal;
  /** The longest the call may take, ms (default 30 s). */
  timeoutMs?: number;
}

/**
 * A call that failed: Telegram's answer (`code` its `error_code`, `retryAfterS` from a 429's `parameters`), an HTTP
 * status without a Bot API body (a proxy's 502), or no answer at all (`code` 0: network, timeout).
 *
 * @example
 * ```ts
 * const error = new TelegramError("sendMessage", 429, "Too Many Requests: retry after 3", 3);
 * error.retryAfterS; // 3
 * ```
 */
export class TelegramError extends Error {
  /**
   * @param method The Bot API method.
   * @param code Telegram's `error_code` or the HTTP status; 0 when there was no answer.
   * @param description Telegram's description, or what went wrong (never with the token).
   * @param retryAfterS A 429's `parameters.retry_after`.
   */
  constructor(
    readonly method: string,
    readonly code: number,
    readonly description: string,
    readonly retryAfterS?: number,
  ) {
    super(`Telegram ${method}: ${code === 0 ? "" : `${code} `}${description}`);
    this.name = "TelegramError";
  }

  /** Telegram did not answer, or answered as a server in trouble: worth trying again later. */
  get transient(): boolean {
    return this.code === 0 || this.code >= 500;
  }
}

/** Options of {@link BotApi}. */
export interface BotApiOptions {
  /** `telegram.api_url`, without a trailing slash needed. */
  apiUrl: string;
  token: string;
  clock: Pick<Clock, "after">;
}

/** One bot's Bot API. */
export class BotApi {
  #base: string;
  #files: string;
  #token: string;
  #clock: Pick<Clock, "after">;

  /**
   * @example
   * ```ts
   * import { systemClock } from "../../clock.ts";
   *
   * const api = new BotApi({ apiUrl: "https://api.telegram.org", token: "123456789:AA…", clock: systemClock });
   * ```
   */
  constructor(options: BotApiOptions) {
    const root = options.apiUrl.replace(/\/+$/, "");
    this.#base = `${root}/bot${options.token}/`;
    this.#files = `${root}/file/bot${options.token}/`;
    this.#token = options.token;
    this.#clock = options.clock;
  }

  /**
   * Calls `method` with `params` as JSON; resolves with its `result`, rejects with a {@link TelegramError}.
   *
   * @example
   * ```ts
   * import { systemClock } from "../../clock.ts";
   *
   * const api = new BotApi({ apiUrl: "https://api.telegram.org", token: "123456789:AA…", clock: systemClock });
   * const me = await api.call("getMe", {}, { timeoutMs: 5_000 });
   * ```
   */
  call(method: string, params: Record<string, unknown>, options: CallOptions = {}): Promise<unknown> {
    return this.#request(method, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(params),
    }, options);
  }

  /**
   * Calls an upload method (`sendPhoto`…) as multipart: `params` as text fields (objects as JSON), the file as a part
   * with its name and type.
   *
   * @example
   * ```ts
   * import { systemClock } from "../../clock.ts";
   *
   * const api = new BotApi({ apiUrl: "https://api.telegram.org", token: "123456789:AA…", clock: systemClock });
   * const jpeg = Uint8Array.of(0xff, 0xd8, 0xff, 0xe0);
   * await api.upload("sendPhoto", { chat_id: 42 }, { field: "photo", bytes: jpeg, filename: "a.jpg", mime: "image/jpeg" });
   * ```
   */
  upload(method: string, params: Record<string, unknown>, file: Upload, options: CallOptions = {}): Promise<unknown> {
    const form = new FormData();
    for (const [key, value] of Object.entries(params)) {
      if (value !== undefined) form.append(key, typeof value === "string" ? value : JSON.stringify(value));
    }
    form.append(file.field, new File([file.bytes.slice()], file.filename, { type: file.mime }));
    return this.#request(method, { method: "POST", body: form }, options);
  }

  /**
   * Downloads a file `getFile` named, at most `maxBytes` (a larger one is refused as it streams).
   *
   * @example
   * ```ts
   * import { systemClock } from "../../clock.ts";
   *
   * const api = new BotApi({ apiUrl: "https://api.telegram.org", token: "123456789:AA…", clock: systemClock });
   * const bytes = await api.download("photos/file_1.jpg", 20 * 1024 * 1024, { timeoutMs: 30_000 });
   * ```
   */
  async download(filePath: string, maxBytes: number, options: CallOptions = {}): Promise<Uint8Array> {
    const path = filePath.split("/").map(encodeURIComponent).join("/");
    return await this.#guarded("download", options, async (signal) => {
      const response = await fetch(this.#files + path, { signal });
      if (!response.ok) {
        await response.body?.cancel();
        throw new TelegramError("download", response.status, `the file ${filePath} was not served`);
      }
      const declared = Number(response.headers.get("content-length") ?? "0");
      if (declared > maxBytes) {
        await response.body?.cancel();
        throw new TelegramError("download", 413, `the file ${filePath} is ${declared} bytes, over ${maxBytes}`);
      }
      const bytes = await readAtMost(response.body, maxBytes);
      if (bytes.length > maxBytes) {
        throw new TelegramError("download", 413, `the file ${filePath} is over ${maxBytes} bytes`);
      }
      return bytes;
    });
  }

  /** Text with the token replaced, for an error that quotes a URL. */
  redact(text: string): string {
    return this.#token === "" ? text : text.replaceAll(this.#token, "<token>");
  }

  #request(method: string, init: RequestInit, options: CallOptions): Promise<unknown> {
    return this.#guarded(method, options, async (signal) => {
      const response = await fetch(this.#base + method, { ...init, signal });
      const text = await response.text();
      let body: { ok?: unknown; result?: unknown; error_code?: unknown; description?: unknown; parameters?: unknown };
      try {
        body = JSON.parse(text);
      } catch {
        // Not the Bot API answering (a proxy's error page): only the status says anything.
        throw new TelegramError(method, response.status || 0, `HTTP ${response.status} without a Bot API answer`);
      }
      if (body?.ok === true) return body.result;
      const parameters = (body?.parameters ?? {}) as { retry_after?: unknown };
      const code = typeof body?.error_code === "number" ? body.error_code : response.status;
      const description = typeof body?.description === "string" ? body.description : `HTTP ${response.status}`;
      const retryAfter = typeof parameters.retry_after === "number" ? parameters.retry_after : undefined;
      throw new TelegramError(method, code, description, retryAfter);
    });
  }

  /** Runs `work` under the deadline and the caller's signal; every failure becomes a redacted TelegramError. */
  async #guarded<T>(method: string, options: CallOptions, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const controller = new AbortController();
    const timeoutMs = options.timeoutMs ?? 30_000;
    const limit = deadline(this.#clock, timeoutMs);
    const stop = () => controller.abort(options.signal?.reason);
    if (options.signal?.aborted) stop();
    options.signal?.addEventListener("abort", stop, { once: true });
    try {
      const raced = await limit.race(
        work(controller.signal).catch((error: unknown) => {
          if (error instanceof TelegramError) throw error;
          if (options.signal?.aborted) throw options.signal.reason ?? error;
          const why = error instanceof Error ? error.message : String(error);
          throw new TelegramError(method, 0, this.redact(why));
        }),
      );
      if (raced.late) {
        controller.abort(new Error("late"));
        throw new TelegramError(method, 0, `no answer within ${Math.round(timeoutMs / 1000)} s`);
      }
      return raced.value;
    } finally {
      limit.cancel();
      options.signal?.removeEventListener("abort", stop);
    }
  }
}
