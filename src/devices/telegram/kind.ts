/**
 * Telegram's kind (`telegram`): the bot as one device, polling the Bot API at `telegram.api_url`; its rights (that
 * host and port), its secret (the token) and its `homed doctor` line (the token's form, and whether `getMe` answers).
 *
 * @module
 */

import { join } from "node:path";
import { systemClock } from "../../clock.ts";
import type { Config } from "../../config/schema.ts";
import { hostPort } from "../../net/host_port.ts";
import type { DeviceKind, DoctorCheck, KindContext, KindParts } from "../kind.ts";
import { BotApi, TelegramError } from "./bot_api.ts";
import { TelegramDevice } from "./telegram_device.ts";

type TelegramSection = NonNullable<Config["telegram"]>;

/** A token as @BotFather gives it: the bot's id, a colon, the secret. */
const TOKEN_FORM = /^\d{1,20}:[A-Za-z0-9_-]{1,200}$/;

/** How long doctor waits for `getMe`. */
const DOCTOR_WAIT_MS = 8_000;

/**
 * `telegram`: on when the section is set.
 *
 * @example
 * ```ts
 * import type { Config } from "../../config/schema.ts";
 *
 * declare const config: Config; // with telegram: { token: "…", owner: "42" }
 * telegramKind.section(config)?.api_url; // "https://api.telegram.org"
 * ```
 */
export const telegramKind: DeviceKind<TelegramSection> = {
  key: "telegram",
  // The token's bot id stands before the variable: the contract test reads every variable as a placeholder without
  // a colon, which telegram.token's form refuses (a real TELEGRAM_BOT_TOKEN holds the whole token). api_url is
  // written out so the contract test can point it at a closed port.
  example: '{ token: "123456789:${TELEGRAM_BOT_TOKEN}", api_url: "https://api.telegram.org", owner: "123456789" }',
  section: (config) => config.telegram ?? undefined,
  rights: (section) => ({ net: [hostPort(section.api_url)] }),
  secrets: (section) => [section.token],
  doctor: (section) => checkTelegram(section),
  create: createTelegram,
};

function createTelegram(section: TelegramSection, context: KindContext, config: Config): KindParts {
  const device = new TelegramDevice({
    settings: {
      token: section.token,
      apiUrl: section.api_url,
      owner: section.owner,
      allowUsers: section.allow_users,
      allowGroups: section.allow_groups,
      splitAt: section.split_at,
      minSendIntervalMs: section.min_send_interval,
      pollTimeoutMs: section.poll_timeout,
      queueLimit: section.queue_limit,
      dataDir: join(config.daemon.data_dir, "telegram"),
    },
    clock: context.clock,
    random: context.random,
    logger: context.logger("telegram"),
    media: { read: (id) => context.media.read(id) },
  });
  return { devices: [device] };
}

/**
 * `homed doctor`'s Telegram line: the token's form, then whether `getMe` answers at `telegram.api_url` within a
 * deadline — naming the setting and what to do when not.
 *
 * @example
 * ```ts
 * import type { Config } from "../../config/schema.ts";
 *
 * declare const section: NonNullable<Config["telegram"]>;
 * const [line] = await checkTelegram(section);
 * console.log(line?.ok, line?.detail);
 * ```
 */
export async function checkTelegram(section: TelegramSection): Promise<DoctorCheck[]> {
  const name = "telegram";
  if (!TOKEN_FORM.test(section.token)) {
    return [{
      ok: false,
      name,
      detail: "telegram.token is not a bot token (<bot id>:<secret>, as @BotFather gives it): set it from /token " +
        "in @BotFather",
    }];
  }
  const api = new BotApi({ apiUrl: section.api_url, token: section.token, clock: systemClock });
  try {
    const me = (await api.call("getMe", {}, { timeoutMs: DOCTOR_WAIT_MS })) as { username?: unknown } | null;
    const owner = section.owner === "" ? "; telegram.owner is empty, so nobody can confirm actions from Telegram" : "";
    return [{
      ok: true,
      name,
      detail: `telegram.token has the right form and the bot @${String(me?.username)} answers at ${section.api_url}` +
        owner,
      ...(owner ? { warn: true } : {}),
    }];
  } catch (error) {
    const failure = error instanceof TelegramError ? error : new TelegramError("getMe", 0, String(error));
    const detail = failure.code === 401 || failure.code === 404
      ? `telegram.token has the right form but Telegram refuses it (${failure.code} ${failure.description}): it was ` +
        "revoked or mistyped; get the current one from @BotFather (/token) and set telegram.token"
      : `telegram.token has the right form, but getMe at telegram.api_url (${section.api_url}) failed: ` +
        `${api.redact(failure.message)}; check the network, a proxy, or telegram.api_url`;
    return [{ ok: false, name, detail }];
  }
}
