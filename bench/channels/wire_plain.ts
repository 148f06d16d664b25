/**
 * The plain-wire side of `bench:telegram-wire`: a minimal echo bot over homed's own Bot API client
 * (`src/devices/telegram/bot_api.ts`, `fetch` and JSON, no framework). It does what the grammY one does: `getMe`,
 * `deleteWebhook`, then long-polls `getUpdates` (30 s, offset confirmed) and answers each text message with
 * `sendMessage`, one update after the other.
 *
 * Run by bench/channels/telegram_wire.ts, not as a task: `deno run --no-config --allow-net=127.0.0.1 wire_plain.ts
 * <api root> <token>`.
 *
 * @module
 */

import { systemClock } from "../../src/clock.ts";
import { BotApi } from "../../src/devices/telegram/bot_api.ts";

interface Update {
  update_id: number;
  message?: { chat: { id: number }; text?: string };
}

const [apiUrl, token] = Deno.args as [string, string];
const api = new BotApi({ apiUrl, token, clock: systemClock });
await api.call("getMe", {});
await api.call("deleteWebhook", { drop_pending_updates: false });
let offset: number | undefined;
for (;;) {
  const updates = (await api.call("getUpdates", {
    ...(offset === undefined ? {} : { offset }),
    timeout: 30,
    allowed_updates: ["message"],
  }, { timeoutMs: 45_000 })) as Update[];
  for (const update of updates) {
    offset = update.update_id + 1;
    const message = update.message;
    if (message?.text !== undefined) {
      await api.call("sendMessage", { chat_id: message.chat.id, text: `echo: ${message.text}` });
    }
  }
}
