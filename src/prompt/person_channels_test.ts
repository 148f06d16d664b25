import assert from "node:assert/strict";
import { personChannelsPrompt } from "./person_channels.ts";

Deno.test("the person writing now is told where else they write; nobody else's chats, nothing for one chat", async () => {
  const channels: Record<string, string[]> = {
    wei: ["qq:private:10001", "telegram:private:777"],
    lin: ["qq:private:10002"],
  };
  const prompt = personChannelsPrompt((name) => channels[name] ?? []);
  const ask = (sender: string) =>
    prompt.reference?.({ text: "remind me on QQ", source: "telegram:private:777", sender, time: 0 }, []);
  const section = await ask("wei");
  assert.equal(section?.title, "Where wei writes");
  assert.match(section!.body, /^wei is one person on qq:private:10001, telegram:private:777: /);
  assert.doesNotMatch(section!.body, /10002/);
  assert.equal(await ask("lin"), undefined, "one chat: nothing to say");
  assert.equal(await ask("10003"), undefined, "unlisted");
});
