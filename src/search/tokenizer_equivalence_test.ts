// The tokenizer's fast paths (lexicon prefixes, first-character filters) must not change a single term: an index
// written by the old code is read with the new one under the same ANALYZER name. The implementation before them is
// kept below, verbatim but for its name, and both are run on varied text.
import assert from "node:assert/strict";
import { HOUSEHOLD_LEXICON } from "./lexicon.ts";
import { stem } from "./stem.ts";
import {
  EN_STOPWORDS,
  ZH_DEICTIC_MAX,
  ZH_DEICTIC_WORDS,
  ZH_QUESTION_BIGRAMS,
  ZH_SPLIT_CHARS,
  ZH_STOP_BIGRAMS,
  ZH_STOP_CHARS,
  ZH_VERB_CHARS,
} from "./stopwords.ts";
import { compileLexicon, HOUSEHOLD, type Lexicon, tokenize, type TokenizeOptions } from "./tokenizer.ts";

// CJK = Han, kana (with the prolonged-sound mark ー, which is script Common) and Hangul.
const RUN =
  /([\p{sc=Han}\p{sc=Hiragana}\p{sc=Katakana}\p{sc=Hangul}\u30FC]+)|([[\p{L}\p{N}]--[\p{sc=Han}\p{sc=Hiragana}\p{sc=Katakana}\p{sc=Hangul}\u30FC]]+)/gv;

/** The characters a day word can start with (大, 前, 上 …). */
const DEICTIC_FIRST = new Set([...ZH_DEICTIC_WORDS].map((word) => word[0]!));

function cjkTerms(units: readonly string[], out: string[], lexicon: Lexicon | undefined): void {
  const isNumber = (unit: string) => unit.length > 1 || (unit >= "0" && unit <= "9");
  // Day words relative to their saying (大前天, 上周三): the longest at each place, dropped with all their characters.
  const deictic = new Uint8Array(units.length);
  for (let i = 0; i + 1 < units.length; i++) {
    if (!DEICTIC_FIRST.has(units[i]!)) continue; // most characters start none: no slices for them
    for (let length = Math.min(ZH_DEICTIC_MAX, units.length - i); length >= 2; length--) {
      if (ZH_DEICTIC_WORDS.has(units.slice(i, i + length).join(""))) {
        deictic.fill(1, i, i + length);
        break;
      }
    }
  }
  if (lexicon) {
    for (let i = 0; i < units.length; i++) {
      // 上周一 names no weekday concept: it is a date, read by named_period.ts.
      if (deictic[i]) continue;
      let word = "";
      for (let length = 1; length <= lexicon.cjkMax && i + length <= units.length; length++) {
        const unit = units[i + length - 1]!;
        if (isNumber(unit)) break;
        word += unit;
        const concepts = lexicon.cjk.get(word);
        if (concepts) out.push(...concepts);
      }
    }
  }
  // Split at particles, and drop question words and fillers together with both their characters.
  const keep = units.map((unit, i) => !ZH_SPLIT_CHARS.has(unit) && !deictic[i]);
  for (let i = 0; i + 1 < units.length; i++) {
    if (ZH_QUESTION_BIGRAMS.has(units[i]! + units[i + 1]!)) keep[i] = keep[i + 1] = false;
  }
  let start = 0;
  for (let i = 0; i <= units.length; i++) {
    if (i < units.length && keep[i]) continue;
    const length = i - start;
    if (length === 1) {
      const unit = units[start]!;
      if (!ZH_STOP_CHARS.has(unit)) out.push(unit);
    } else if (length > 1) {
      for (let j = start; j < i - 1; j++) {
        const bigram = units[j]! + units[j + 1]!;
        if (!ZH_STOP_BIGRAMS.has(bigram)) out.push(bigram);
      }
      // A one-character verb's bigrams cross into its neighbours: "妈妈去了哪里" and "我今天去超市" share only 去.
      for (let j = start; j < i; j++) if (ZH_VERB_CHARS.has(units[j]!)) out.push(units[j]!);
    }
    start = i + 1;
  }
  for (const unit of units) if (isNumber(unit) && units.length > 1) out.push(unit);
}

function oldTokenize(text: string, options: TokenizeOptions = {}): string[] {
  const out: string[] = [];
  const lexicon = options.lexicon;
  const stemWord = options.stem ?? stem;
  const normalized = text.normalize("NFKC").toLowerCase();
  const pieces: Array<{ cjk: boolean; text: string; start: number; end: number }> = [];
  for (const match of normalized.matchAll(RUN)) {
    pieces.push({
      cjk: match[1] !== undefined,
      text: match[0],
      start: match.index,
      end: match.index + match[0].length,
    });
  }
  const isNumber = (piece: { cjk: boolean; text: string }) => !piece.cjk && /^\d+$/.test(piece.text);
  let words: string[] = [];
  // Stopwords are judged on the word as written: stemming first would index "does" as "doe".
  let stops: boolean[] = [];
  const flushWords = () => {
    if (!words.length) return;
    if (lexicon) {
      // Words inside an idiom name no concept.
      const inIdiom = new Uint8Array(words.length);
      for (let i = 0; lexicon.idiomMax && i < words.length; i++) {
        let phrase = "";
        for (let length = 1; length <= lexicon.idiomMax && i + length <= words.length; length++) {
          phrase = length === 1 ? words[i]! : `${phrase} ${words[i + length - 1]}`;
          if (lexicon.idioms.has(phrase)) inIdiom.fill(1, i, i + length);
        }
      }
      for (let i = 0; i < words.length; i++) {
        let phrase = "";
        for (let length = 1; length <= lexicon.latinMax && i + length <= words.length; length++) {
          if (inIdiom[i + length - 1]) break;
          phrase = length === 1 ? words[i]! : `${phrase} ${words[i + length - 1]}`;
          const concepts = lexicon.latin.get(phrase);
          if (concepts) out.push(...concepts);
        }
      }
    }
    words.forEach((word, i) => {
      if (!stops[i]) out.push(word);
    });
    words = [];
    stops = [];
  };
  for (let i = 0; i < pieces.length;) {
    // A CJK segment: CJK runs and numbers written against them with no gap ("城巴7号线", "22点").
    let j = i;
    let hasCjk = false;
    while (
      j < pieces.length && (pieces[j]!.cjk || isNumber(pieces[j]!)) &&
      (j === i || pieces[j - 1]!.end === pieces[j]!.start)
    ) {
      hasCjk ||= pieces[j]!.cjk;
      j++;
    }
    if (hasCjk) {
      flushWords();
      const units = pieces.slice(i, j).flatMap((piece) => piece.cjk ? [...piece.text] : [piece.text]);
      cjkTerms(units, out, lexicon);
      i = j;
      continue;
    }
    const piece = pieces[i]!;
    // A phrase ("living room") continues only across white space or simple joiners, not across CJK or sentences.
    if (words.length && !/^[\s\-'/]*$/.test(normalized.slice(pieces[i - 1]!.end, piece.start))) flushWords();
    stops.push(EN_STOPWORDS.has(piece.text));
    words.push(/^\p{L}+$/u.test(piece.text) ? stemWord(piece.text) : piece.text);
    i++;
  }
  flushWords();
  return out;
}

/** Household sentences of both languages, mixed, with numbers written against CJK, idioms and day words. */
const SENTENCES = [
  "Wei: The photo album 812 is on the top shelf in the study.\nbutler: Noted.",
  "奶奶: 收纳盒813号放在书房的柜子里\nbutler: 好的，记下了。",
  "Lin: Tidying up today. The spare charger 4 is under the bed in the bedroom.\nbutler: Noted.",
  "奶奶: 记一下。相册4002号现在放在车库的抽屉里\nbutler: 好的，记下了。",
  "奶奶的降压药放在哪里？",
  "How does Wei's mother take her tea?",
  "把 living room 的灯打开",
  "把客厅的灯打开，然后关掉卧室的空调",
  "In light of the weather, turn on the living-room lights / lamps at 22点",
  "上周三大前天我们去了城巴7号线，今天什么时候回来？",
  "Ｗｉｆｉ６ ｒｏｕｔｅｒ－２ 和 ＡＢＣ１２３ 全角",
  "カタカナのテスト ラーメン 한국어 텍스트 ー",
  "The heating was stopped at 21 degrees in 2026; batteries, watches, running, falling, went, bought",
  "Does anyone know where the first aid kit went? It's in the hall cupboard, next to the fuses.",
  "妈妈去了哪里？我今天去超市买了牛奶和鸡蛋",
  "",
  "   \n\t ",
  "a b c d e f g 1 2 3 on off up down",
];

/** Words of the household lexicon and the stopword lists, run together in random order and with random glue. */
const WORDS = [
  ...Object.values(HOUSEHOLD_LEXICON).flatMap((words) => words.split("|")),
  ...EN_STOPWORDS,
  ...ZH_DEICTIC_WORDS,
  ...ZH_QUESTION_BIGRAMS,
  ...ZH_STOP_BIGRAMS,
  ...ZH_SPLIT_CHARS,
  ...ZH_STOP_CHARS,
  ...ZH_VERB_CHARS,
  "Wei",
  "奶奶",
  "812",
  "7",
  "wifi6",
];
const GLUE = [" ", "", "", " ", "-", "'", "/", ", ", ". ", "的", "了", "\n", "7", "号", "ー", "Ａ", " 2026 ", "?"];

/** A deterministic random source (mulberry32), so that a failure reproduces. */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function assertSame(text: string, options: TokenizeOptions): void {
  assert.deepEqual(tokenize(text, options), oldTokenize(text, options), JSON.stringify(text));
}

const LEXICONS: TokenizeOptions[] = [
  {},
  { lexicon: HOUSEHOLD },
  // Multi-word entries that share leading words, and a CJK word inside a longer one.
  {
    lexicon: compileLexicon({ a: "living room lamp|living room|room lamp|客厅|客厅灯|厅灯", b: "lamp|灯" }, [
      "in light of",
    ]),
  },
];

Deno.test("the tokenizer gives the old implementation's terms on household sentences", () => {
  for (const options of LEXICONS) for (const text of SENTENCES) assertSame(text, options);
});

Deno.test("the tokenizer gives the old implementation's terms on random runs of lexicon words and stopwords", () => {
  const next = random(39_3);
  const pick = <T>(list: readonly T[]) => list[Math.floor(next() * list.length)]!;
  for (let n = 0; n < 3_000; n++) {
    let text = "";
    for (let words = 1 + Math.floor(next() * 12); words > 0; words--) text += pick(WORDS) + pick(GLUE);
    for (const options of LEXICONS) assertSame(next() < 0.5 ? text : text.toUpperCase(), options);
  }
});

Deno.test("the tokenizer gives the old implementation's terms on random characters", () => {
  const next = random(7);
  // Latin, digits, punctuation, CJK (particles, question and day characters), kana, Hangul, full-width forms.
  const alphabet = [
    ..."abcdefghiosty AEIOU0123456789 -'/.,?!\n的了是把哪什么怎今天上周三大前灯客厅打开去我你ーカナ한국ＡＢ１２",
  ];
  for (let n = 0; n < 3_000; n++) {
    let text = "";
    for (let length = Math.floor(next() * 40); length > 0; length--) {
      text += alphabet[Math.floor(next() * alphabet.length)];
    }
    for (const options of LEXICONS) assertSame(text, options);
  }
});
