import assert from "node:assert/strict";
import { FakeClock } from "../../tests/support/fake_clock.ts";
import { AllowList } from "./allow_list.ts";
import { Pacer } from "./pacer.ts";
import { RecentMap } from "./recent.ts";
import { SeenMessages } from "./seen_messages.ts";
import { splitText } from "./split_text.ts";

Deno.test("allow list: owner, listed users and groups; everyone else is ignored", () => {
  const allow = new AllowList({ owner: "1", users: ["2"], groups: ["9"] });
  assert.equal(allow.trustOf("1", { kind: "private", id: "1" }), "owner");
  assert.equal(allow.trustOf("2", { kind: "private", id: "2" }), "household");
  assert.equal(allow.trustOf("3", { kind: "private", id: "3" }), undefined);
  assert.equal(allow.trustOf("3", { kind: "group", id: "9" }), "guest");
  assert.equal(allow.trustOf("1", { kind: "group", id: "8" }), undefined, "not even the owner in a group not listed");
  assert.equal(new AllowList({ owner: "", users: [], groups: [] }).trustOf("", { kind: "private", id: "" }), undefined);
  assert.deepEqual([
    allow.knows("9", "3"),
    allow.knows("8", "1"),
    allow.knows(undefined, "2"),
    allow.knows(undefined, "3"),
  ], [
    true,
    false,
    true,
    false,
  ]);
});

Deno.test("pacer: a second send to one conversation waits out the interval; other conversations do not wait", async () => {
  const clock = new FakeClock();
  const pacer = new Pacer(clock, 1_500);
  await pacer.wait("a");
  pacer.sent("a");
  clock.advance(500);
  await pacer.wait("b");
  assert.deepEqual(clock.sleeps, [], "nothing waited yet");
  await pacer.wait("a");
  assert.deepEqual(clock.sleeps, [1_000], "the rest of the interval");
  pacer.sent("a");
  clock.advance(2_000);
  await pacer.wait("a");
  assert.deepEqual(clock.sleeps, [1_000], "an interval long past: no wait");
});

Deno.test("recent map keeps the newest entries; splitting prefers paragraph, line and sentence breaks", () => {
  const recent = new RecentMap<string, number>(2);
  recent.set("a", 1);
  recent.set("b", 2);
  recent.set("a", 3);
  recent.set("c", 4);
  assert.deepEqual([recent.get("a"), recent.has("b"), recent.get("c"), recent.size], [3, false, 4, 2]);
  assert.deepEqual(splitText("第一段。\n\n第二段", 5), ["第一段。", "第二段"]);
  assert.deepEqual(splitText("x".repeat(7), 3), ["xxx", "xxx", "x"]);
});

Deno.test("seen messages: a repeat within the window is caught; new words, another id or a late repeat are new", () => {
  const clock = new FakeClock();
  const seen = new SeenMessages({ clock, windowMs: 60_000, limit: 3 });
  const id = ["bot", "qq:private:1", "1", "42"];
  assert.equal(seen.firstTime(id, "hello"), true);
  assert.equal(seen.firstTime(id, "hello"), false, "the same delivery again");
  assert.equal(seen.firstTime(id, "hello again"), true, "a reused id with other words");
  assert.equal(seen.firstTime(["bot", "qq:private:1", "1", "43"], "hello"), true, "the same words, another id");
  clock.advance(60_001);
  assert.equal(seen.firstTime(id, "hello again"), true, "past the window");
  for (const n of ["a", "b", "c"]) seen.firstTime(id, n);
  assert.equal(seen.firstTime(id, "hello again"), true, "forgotten: only the 3 newest are kept");
});
