/**
 * The grammY side of `bench:telegram-wire`: a minimal echo bot with grammY 1.46.0 (`Bot` with `apiRoot` set to the
 * fake, `bot.start()`: `getMe`, `deleteWebhook`, then long polling, each text message answered with `ctx.reply`).
 * `web` as the third argument loads the package's `grammy/web` build (one ES module over the global `fetch`, the code
 * of the Deno-native deno.land/x release) instead of its default Node build (`node-fetch`, `abort-controller`,
 * `debug`, which Deno picks for an `npm:` import).
 *
 * grammY is imported by a computed specifier on purpose: homed's `deno check`, `deno install` and lockfile never see
 * it, so only this benchmark fetches it (locked by `bench/channels/grammy.lock`, run with `--no-config`).
 *
 * Run by bench/channels/telegram_wire.ts, not as a task: `deno run --no-config --lock=bench/channels/grammy.lock
 * --allow-net=127.0.0.1 --allow-env wire_grammy.ts <api root> <token> [web]`.
 *
 * @module
 */

/** The part of grammY's API this bot uses. */
interface GrammyContext {
  message: { text: string };
  reply(text: string): Promise<unknown>;
}
interface GrammyBot {
  on(filter: string, handler: (ctx: GrammyContext) => unknown): void;
  catch(handler: (error: unknown) => void): void;
  start(options?: { allowed_updates?: string[] }): Promise<void>;
}
type GrammyModule = { Bot: new (token: string, options: { client: { apiRoot: string } }) => GrammyBot };

const [apiUrl, token, build] = Deno.args as [string, string, string | undefined];
const specifier = build === "web" ? "npm:grammy@1.46.0/web" : "npm:grammy@1.46.0";
const { Bot } = (await import(specifier)) as GrammyModule;
const bot = new Bot(token, { client: { apiRoot: apiUrl } });
bot.on("message:text", (ctx) => ctx.reply(`echo: ${ctx.message.text}`));
bot.catch((error) => console.error(error));
await bot.start({ allowed_updates: ["message"] });
