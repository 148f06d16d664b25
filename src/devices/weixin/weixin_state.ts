/**
 * What the WeChat channel keeps on disk, in `<daemon.data_dir>/weixin/` (0700, every file 0600 and written
 * atomically): the long-poll cursor (`sync.json`: the live service treats delivery as consumption, so a lost cursor
 * loses messages and an old one repeats them), the latest `context_token` of each user with the sends made on it
 * (`context_tokens.json`: without one the butler cannot write to that person at all), and the credentials a QR login
 * obtained (`account.json`: the bot token, a secret).
 *
 * @module
 */

import { join } from "node:path";
import { atomicWriteText } from "../../fs/atomic_write.ts";

/** The credentials of a confirmed QR login. */
export interface WeixinCredentials {
  /** The bot token (a secret). */
  botToken: string;
  /** The bot's id (`…@im.bot`). */
  botId: string;
  /** The account's API base the login named. */
  baseUrl: string;
  /** Who scanned the code (`…@im.wechat`): a natural owner. */
  userId: string;
}

/** A user's latest context token and how it was used. */
export interface ContextTokenEntry {
  token: string;
  /** When the message that carried it arrived (ms since the epoch). */
  receivedAt: number;
  /** Sends made with it. */
  sends: number;
}

/**
 * The folder of the WeChat state under a data dir.
 *
 * @example
 * ```ts
 * weixinDir("/var/lib/homed"); // "/var/lib/homed/weixin"
 * ```
 */
export function weixinDir(dataDir: string): string {
  return join(dataDir, "weixin");
}

async function readJson(path: string): Promise<unknown> {
  try {
    return JSON.parse(await Deno.readTextFile(path));
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return undefined;
    if (error instanceof SyntaxError) return undefined; // torn by hand: start over rather than refuse to start
    throw error;
  }
}

async function write(dir: string, name: string, value: unknown): Promise<void> {
  await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
  await atomicWriteText(join(dir, name), JSON.stringify(value), { mode: 0o600 });
}

/**
 * Keeps a confirmed login's credentials (0600) for the channel to use; what `homed weixin login` calls.
 *
 * @example
 * ```ts
 * await saveWeixinLogin("/var/lib/homed", {
 *   botToken: "token-from-login",
 *   botId: "b0f5@im.bot",
 *   baseUrl: "https://ilinkai.weixin.qq.com",
 *   userId: "o9cq80abc@im.wechat",
 * });
 * ```
 */
export async function saveWeixinLogin(dataDir: string, credentials: WeixinCredentials): Promise<void> {
  await write(weixinDir(dataDir), "account.json", credentials);
}

/**
 * The credentials a login kept; undefined when none (or the file is not readable as such).
 *
 * @example
 * ```ts
 * const stored = await loadWeixinLogin("/var/lib/homed");
 * stored?.botId; // "b0f5@im.bot"
 * ```
 */
export async function loadWeixinLogin(dataDir: string): Promise<WeixinCredentials | undefined> {
  const value = await readJson(join(weixinDir(dataDir), "account.json")) as Partial<WeixinCredentials> | undefined;
  if (!value || typeof value.botToken !== "string" || value.botToken === "") return undefined;
  return {
    botToken: value.botToken,
    botId: typeof value.botId === "string" ? value.botId : "",
    baseUrl: typeof value.baseUrl === "string" ? value.baseUrl : "",
    userId: typeof value.userId === "string" ? value.userId : "",
  };
}

/**
 * The cursor and context tokens of one channel, loaded once and written through (writes in order, one at a time).
 *
 * @example
 * ```ts
 * const state = new WeixinState("/var/lib/homed");
 * await state.load();
 * state.cursor; // "" the first time
 * await state.saveCursor("c2VydmVyLWN1cnNvcg==");
 * ```
 */
export class WeixinState {
  readonly dir: string;
  #cursor = "";
  #tokens = new Map<string, ContextTokenEntry>();
  #writing: Promise<void> = Promise.resolve();

  constructor(dataDir: string) {
    this.dir = weixinDir(dataDir);
  }

  /** Reads what an earlier run kept. */
  async load(): Promise<void> {
    const sync = await readJson(join(this.dir, "sync.json")) as { get_updates_buf?: unknown } | undefined;
    this.#cursor = typeof sync?.get_updates_buf === "string" ? sync.get_updates_buf : "";
    const tokens = await readJson(join(this.dir, "context_tokens.json"));
    this.#tokens.clear();
    if (tokens && typeof tokens === "object") {
      for (const [user, entry] of Object.entries(tokens as Record<string, Partial<ContextTokenEntry>>)) {
        if (typeof entry?.token !== "string") continue;
        this.#tokens.set(user, {
          token: entry.token,
          receivedAt: typeof entry.receivedAt === "number" ? entry.receivedAt : 0,
          sends: typeof entry.sends === "number" ? entry.sends : 0,
        });
      }
    }
  }

  /** The cursor to send with the next poll. */
  get cursor(): string {
    return this.#cursor;
  }

  /** Keeps a new cursor (on disk before this resolves). */
  saveCursor(cursor: string): Promise<void> {
    this.#cursor = cursor;
    return this.#queue("sync.json", () => ({ get_updates_buf: cursor }));
  }

  /** The users with a context token. */
  users(): string[] {
    return [...this.#tokens.keys()];
  }

  /** The latest context token of `user`. */
  token(user: string): ContextTokenEntry | undefined {
    return this.#tokens.get(user);
  }

  /** A new message's token becomes `user`'s latest. */
  setToken(user: string, token: string, receivedAt: number): void {
    this.#tokens.set(user, { token, receivedAt, sends: 0 });
  }

  /** One more send on `token` (counted under the user whose latest it is). */
  countSend(user: string, token: string): void {
    const entry = this.#tokens.get(user);
    if (entry?.token === token) entry.sends++;
  }

  /** The tokens, on disk (after a batch of messages, or sends). */
  saveTokens(): Promise<void> {
    return this.#queue("context_tokens.json", () => Object.fromEntries(this.#tokens));
  }

  /** Resolves once every write asked for so far is done. */
  flushed(): Promise<void> {
    return this.#writing;
  }

  #queue(name: string, value: () => unknown): Promise<void> {
    const next = this.#writing.then(() => write(this.dir, name, value()));
    this.#writing = next.catch(() => {});
    return next;
  }
}
