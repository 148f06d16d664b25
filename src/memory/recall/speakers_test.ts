import assert from "node:assert/strict";
import { namedSpeakers } from "./speakers.ts";

Deno.test("a speaker named in a question: a word in English, anywhere in a Chinese run", () => {
  assert.deepEqual(namedSpeakers("When did Caroline go?", ["Caroline: I went.\nMel: Nice!"]), new Set(["caroline"]));
  // Chinese writes no spaces: 奶奶 is inside "前天奶奶去了哪里".
  assert.deepEqual(namedSpeakers("前天奶奶去了哪里？", ["奶奶: 我今天去超市了。\n小雨: 好的"]), new Set(["奶奶"]));
  assert.deepEqual(namedSpeakers("一帆昨天买了什么", ["一帆: 买了西瓜"]), new Set(["一帆"]));
  // A one-character name would match inside too many words; a Latin name still needs to be a word.
  assert.deepEqual(namedSpeakers("王府井在哪", ["王: 在东城"]), new Set());
  assert.deepEqual(namedSpeakers("Is Melanie here?", ["Mel: hi"]), new Set());
});
