import assert from "node:assert/strict";
import { textRuns } from "./text_runs.ts";

/** The regular expression the runs were found with before (`tokenizer.ts`, engine-4): the reference. */
const RUN =
  /([\p{sc=Han}\p{sc=Hiragana}\p{sc=Katakana}\p{sc=Hangul}\u30FC]+)|([[\p{L}\p{N}]--[\p{sc=Han}\p{sc=Hiragana}\p{sc=Katakana}\p{sc=Hangul}\u30FC]]+)/gv;

const reference = (text: string) =>
  [...text.matchAll(RUN)].map((match) => ({
    cjk: match[1] !== undefined,
    text: match[0],
    start: match.index,
    end: match.index + match[0].length,
  }));

/** A small deterministic generator (no Math.random in tests). */
function lcg(seed: number): () => number {
  let state = seed >>> 0;
  return () => (state = (Math.imul(state, 1664525) + 1013904223) >>> 0) / 2 ** 32;
}

// Han, kana, ー, Hangul, Latin, Cyrillic, digits (ASCII, fullwidth, Arabic-Indic), marks, punctuation, spaces,
// astral Han and emoji, a lone surrogate, and 〇 々 (Han script, not letters of a word elsewhere).
const ALPHABET = [
  ..."奶奶的降压药放在哪里客厅灯ひらがなカタカナーー한국어abcXYZéßпривет0129０９٣",
  "\u0301",
  "\u200d",
  ..." ,.!?、。：；'-/\n\t",
  "𠀋",
  "𪚥",
  "😀",
  "👨‍👩‍👧",
  "\ud800",
  "\udc00",
  "〇",
  "々",
  "ㄅ",
  "ｱ",
  "Ⅻ",
  "½",
];

Deno.test("the runs are the ones the regular expression found, on every kind of character", () => {
  for (const text of ["", "把 living room 的灯打开", "ーー", "奶奶45006号放在哪里？", "e\u0301t\u00e9", "😀a😀奶"]) {
    assert.deepEqual(textRuns(text), reference(text), text);
  }
  const random = lcg(3939);
  for (let i = 0; i < 3_000; i++) {
    const length = Math.floor(random() * 24);
    const text = Array.from({ length }, () => ALPHABET[Math.floor(random() * ALPHABET.length)]!).join("");
    assert.deepEqual(textRuns(text), reference(text), JSON.stringify(text));
  }
});
