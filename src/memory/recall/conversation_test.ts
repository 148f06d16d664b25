import assert from "node:assert/strict";
import type { MemoryEntry } from "../text/text_memory.ts";
import { saidBefore, sessionOf } from "./conversation.ts";

const MIN = 60_000;
const entry = (eventId: string, minute: number, source: string, role: "user" | "assistant" = "user"): MemoryEntry => ({
  eventId,
  time: minute * MIN,
  role,
  source,
  sender: role === "user" ? "anna" : "butler",
  text: `text of ${eventId}${role === "assistant" ? " (reply)" : ""}`,
});

// A family chat and a private chat interleaved; a two-hour pause in the family chat starts a new conversation.
const said: MemoryEntry[] = [
  entry("a1", 0, "qq:group:1"),
  entry("a1", 0, "qq:group:1", "assistant"),
  entry("p1", 5, "qq:private:2"),
  entry("a2", 10, "qq:group:1"),
  entry("a3", 35, "qq:group:1"),
  entry("a4", 160, "qq:group:1"),
  entry("a5", 170, "qq:group:1"),
];

Deno.test("a conversation is a run of turns in one chat, each within 30 minutes of the one before", () => {
  assert.equal(sessionOf(said, "a3"), "a1", "a1 → a2 (10 min) → a3 (25 min), the private chat in between ignored");
  assert.equal(sessionOf(said, "p1"), "p1");
  assert.equal(sessionOf(said, "a5"), "a4", "after a two-hour pause");
  assert.equal(sessionOf(said, "gone"), "gone", "an event no longer in the recent journal is its own conversation");
  assert.equal(sessionOf(said, undefined), undefined);
});

Deno.test("the context of an utterance is the last thing said before it in the same chat, within 30 minutes", () => {
  assert.deepEqual(saidBefore(said, "a2"), { text: "text of a1 (reply)", eventId: "a1" });
  assert.equal(saidBefore(said, "a4"), undefined, "two hours later");
  assert.equal(saidBefore(said, "p1"), undefined, "nothing before it in the private chat");
});
