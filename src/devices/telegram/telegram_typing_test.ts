import assert from "node:assert/strict";
import { FakeClock } from "../../../tests/support/fake_clock.ts";
import { TelegramTyping } from "./telegram_typing.ts";

Deno.test("typing: sent at once and every 5 s while a chat's turns run, once per chat, stopped by the last turn's end", async () => {
  const clock = new FakeClock();
  const sent: string[] = [];
  const typing = new TelegramTyping({ clock, send: (chatId) => (sent.push(chatId), Promise.resolve()) });
  typing.begin("in-1", "42");
  typing.begin("in-2", "42"); // a second turn in the same chat: no second indicator
  typing.begin("in-3", "43");
  assert.deepEqual(sent, ["42", "43"]);
  clock.advance(5_000);
  assert.deepEqual(sent, ["42", "43", "42", "43"]);
  typing.end("in-3");
  typing.end("in-1");
  clock.advance(5_000);
  assert.deepEqual(sent.slice(4), ["42"], "chat 42 still has a turn; 43 has none");
  typing.end("in-2");
  clock.advance(60_000);
  assert.equal(sent.length, 5);
  assert.equal(clock.pendingTimers, 0);
  await typing.stop();
});

Deno.test("typing: at most 2 minutes for a turn whose end never comes; stop waits for a request in flight", async () => {
  const clock = new FakeClock();
  const pending: Array<() => void> = [];
  let sends = 0;
  const typing = new TelegramTyping({
    clock,
    send: () => (sends++, new Promise<void>((resolve) => pending.push(resolve))),
  });
  typing.begin("in-1", "42");
  for (let i = 0; i < 40; i++) {
    clock.advance(5_000);
    // Each answered but the last.
    if (i < 39) pending.splice(0).forEach((resolve) => resolve());
  }
  assert.equal(sends, 25, "now and every 5 s for 2 minutes, then no more");
  pending.splice(0, pending.length - 1).forEach((resolve) => resolve());
  let stopped = false;
  const stopping = typing.stop().then(() => stopped = true);
  await Promise.resolve();
  assert.equal(stopped, false, "the last request is still in flight");
  pending.splice(0).forEach((resolve) => resolve());
  await stopping;
  assert.equal(clock.pendingTimers, 0);
});
