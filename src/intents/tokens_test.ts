import assert from "node:assert/strict";
import { isCjkToken, normalize, tokenize, tokenTexts } from "./tokens.ts";

Deno.test("tokenTexts: every CJK character is a token, Latin words and numbers are one each", () => {
  assert.deepEqual(tokenTexts("打开客厅的灯"), ["打", "开", "客", "厅", "的", "灯"]);
  assert.deepEqual(tokenTexts("Turn on the Kitchen light"), ["turn", "on", "the", "kitchen", "light"]);
  assert.deepEqual(tokenTexts("打开Kitchen light吧"), ["打", "开", "kitchen", "light", "吧"]);
});

Deno.test("tokenTexts: NFKC folds full-width forms, ℃ and circled digits; case is folded", () => {
  assert.deepEqual(tokenTexts("ＴＵＲＮ　ＯＮ　２６度"), ["turn", "on", "26", "度"]);
  assert.deepEqual(tokenTexts("26℃"), ["26", "°", "c"]);
  assert.deepEqual(tokenTexts("①号"), ["1", "号"]);
});

Deno.test("tokenTexts: punctuation and emoji separate tokens and disappear", () => {
  assert.deepEqual(tokenTexts("🎉打开，灯光！💡"), ["打", "开", "灯", "光"]);
  assert.deepEqual(tokenTexts("lights... off?!"), ["lights", "off"]);
  assert.deepEqual(tokenTexts("  \t\n "), []);
});

Deno.test("tokenTexts: %, ° are tokens of their own; decimals, clock times, hyphens and ids stay whole", () => {
  assert.deepEqual(tokenTexts("50%"), ["50", "%"]);
  assert.deepEqual(tokenTexts("22.5°"), ["22.5", "°"]);
  assert.deepEqual(tokenTexts("at 7:30"), ["at", "7:30"]);
  assert.deepEqual(tokenTexts("fifty-five"), ["fifty-five"]);
  assert.deepEqual(tokenTexts("取消 S-1A2B3C4D"), ["取", "消", "s-1a2b3c4d"]);
  // A dot or colon between letters is punctuation: a.m. reads as "a m".
  assert.deepEqual(tokenTexts("7 a.m."), ["7", "a", "m"]);
  // A hyphen not between letters or digits is punctuation.
  assert.deepEqual(tokenTexts("-5 客厅-灯"), ["5", "客", "厅", "灯"]);
});

Deno.test("tokenTexts: letters and digits split where they meet, so 7pm reads like 7 pm", () => {
  assert.deepEqual(tokenTexts("7pm"), ["7", "pm"]);
  assert.deepEqual(tokenTexts("3000K"), ["3000", "k"]);
  assert.deepEqual(tokenTexts("25th"), ["25", "th"]);
});

Deno.test("tokenTexts: a final 's is its own token; other apostrophes stay inside the word", () => {
  assert.deepEqual(tokenTexts("What’s the kitchen light's brightness"), [
    "what",
    "'s",
    "the",
    "kitchen",
    "light",
    "'s",
    "brightness",
  ]);
  assert.deepEqual(tokenTexts("don't o'clock"), ["don't", "o'clock"]);
});

Deno.test("tokenize keeps each token's span in the original text", () => {
  const text = "提醒我，二十分钟后 Call MUM！";
  const tokens = tokenize(text);
  const call = tokens.find((token) => token.text === "call")!;
  const mum = tokens.find((token) => token.text === "mum")!;
  assert.equal(text.slice(call.start, mum.end), "Call MUM");
  const wide = "ＯＫ";
  assert.deepEqual(tokenize(wide), [{ text: "ok", start: 0, end: 2 }]);
  const emoji = "💡灯";
  assert.deepEqual(tokenize(emoji), [{ text: "灯", start: 2, end: 3 }]);
});

Deno.test("normalize joins the tokens with single spaces", () => {
  assert.equal(normalize("  Ｋｉｔｃｈｅｎ　Light!! 💡"), "kitchen light");
  assert.equal(normalize("客厅 灯"), "客 厅 灯");
});

Deno.test("isCjkToken tells CJK characters from other tokens", () => {
  assert.equal(isCjkToken("灯"), true);
  assert.equal(isCjkToken("lamp"), false);
  assert.equal(isCjkToken("50"), false);
  assert.equal(isCjkToken(""), false);
});
