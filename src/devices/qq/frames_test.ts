import assert from "node:assert/strict";
import { readFrame, readMessageEvent } from "./frames.ts";

Deno.test("readFrame: events, responses, and what is neither dropped with the reason", () => {
  assert.deepEqual(readFrame('{"post_type":"message","message_type":"private","user_id":1}'), {
    kind: "event",
    event: { post_type: "message", message_type: "private", user_id: 1 },
  });
  assert.deepEqual(readFrame('{"status":"failed","retcode":1404,"echo":"3","wording":"no"}'), {
    kind: "response",
    response: { status: "failed", retcode: 1404, echo: "3", wording: "no" },
  });
  assert.deepEqual(readFrame("{not json"), { kind: "dropped", why: "a frame that is not JSON: {not json" });
  assert.deepEqual(readFrame("[1,2]"), { kind: "dropped", why: "a frame that is not an object" });
  assert.deepEqual(readFrame('{"echo":"5"}'), {
    kind: "dropped",
    why: 'a frame that is neither an event nor a response: {"echo":"5"}',
  });
  assert.equal(readFrame('{"post_type":7}').kind, "dropped", "post_type must be a string");
});

Deno.test("readMessageEvent: the fields homed uses, as strings; what cannot be a message is named", () => {
  assert.deepEqual(
    readMessageEvent({
      post_type: "message",
      message_type: "group",
      group_id: 555,
      user_id: 10002,
      message: [{ type: "text", data: { text: "hi" } }],
      message_id: 42,
      sender: { card: "", nickname: "Mia" },
    }),
    {
      kind: "group",
      userId: "10002",
      groupId: "555",
      message: [{ type: "text", data: { text: "hi" } }],
      messageId: "42",
      displayName: "Mia",
    },
  );
  assert.equal(readMessageEvent({ post_type: "message", message_type: "guild" }), 'a message of type "guild"');
  assert.equal(
    readMessageEvent({ post_type: "message", message_type: "group", user_id: 1 }),
    "a group message without group_id",
  );
  assert.equal((readMessageEvent({ post_type: "message", message_type: "private" }) as { userId: string }).userId, "");
});
