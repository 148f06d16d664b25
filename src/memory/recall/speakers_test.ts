import assert from "node:assert/strict";
import { namedSpeakers, spokenBy } from "./speakers.ts";

Deno.test("a speaker named in a question: a word in English, anywhere in a Chinese run", () => {
  assert.deepEqual(namedSpeakers("When did Caroline go?", ["Caroline: I went.\nMel: Nice!"]), new Set(["caroline"]));
  // Chinese writes no spaces: 奶奶 is inside "前天奶奶去了哪里".
  assert.deepEqual(namedSpeakers("前天奶奶去了哪里？", ["奶奶: 我今天去超市了。\n小雨: 好的"]), new Set(["奶奶"]));
  assert.deepEqual(namedSpeakers("一帆昨天买了什么", ["一帆: 买了西瓜"]), new Set(["一帆"]));
  // A one-character name would match inside too many words; a Latin name still needs to be a word.
  assert.deepEqual(namedSpeakers("王府井在哪", ["王: 在东城"]), new Set());
  assert.deepEqual(namedSpeakers("Is Melanie here?", ["Mel: hi"]), new Set());
});

Deno.test("a text's speakers are read once and kept: asked again, the same names, however many texts came between", () => {
  const text = "Anna: The key is under the pot.\nbutler: Noted.";
  assert.deepEqual(namedSpeakers("where did anna put the key", [text]), new Set(["anna"]));
  for (let i = 0; i < 1_000; i++) namedSpeakers("anna", [`Speaker${i}: line ${i}`]);
  assert.deepEqual(namedSpeakers("where did anna put the key", [text]), new Set(["anna"]));
  assert.deepEqual(namedSpeakers("speaker3 said what", ["Speaker3: line 3", "Anna: hi"]), new Set(["speaker3"]));
  const long = `Anna: ${"x".repeat(2_000)}\nBen: y`;
  assert.deepEqual(namedSpeakers("ben and anna", [long]), new Set(["anna", "ben"]));
  assert.equal(spokenBy("Mel: Nice!\nCaroline: I went yesterday.", new Set(["caroline"])), true);
});
