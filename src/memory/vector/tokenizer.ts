/**
 * The tokenizer of the retrieval engine, for Chinese, Japanese, Korean and Latin text in one pass.
 *
 * - CJK runs (split at particles such as 的 and 了) become character bigrams; a one-character run becomes a
 *   unigram unless it is a stop character.
 * - Latin text becomes lower-case words with light English stemming; digits are kept (`21`, `2026`, `wifi6`).
 * - Stopwords of both languages are dropped.
 * - With a lexicon, every concept a word names adds a concept token (`~light`), in documents and queries alike.
 *
 * Deterministic, no network, no model. Input is NFKC-normalised first (full-width letters and digits fold).
 *
 * @module
 */

import { HOUSEHOLD_LEXICON } from "./lexicon.ts";
import { stem } from "./stem.ts";
import { EN_STOPWORDS, ZH_SPLIT_CHARS, ZH_STOP_BIGRAMS, ZH_STOP_CHARS } from "./stopwords.ts";

// CJK = Han, kana (with the prolonged-sound mark ー, which is script Common) and Hangul.
const RUN = /([\p{sc=Han}\p{sc=Hiragana}\p{sc=Katakana}\p{sc=Hangul}\u30FC]+)|([[\p{L}\p{N}]--[\p{sc=Han}\p{sc=Hiragana}\p{sc=Katakana}\p{sc=Hangul}\u30FC]]+)/gv;

/** A compiled lexicon: surface form → concept tokens. */
export interface Lexicon {
  /** CJK words, by their text. */
  cjk: Map<string, string[]>;
  /** Longest CJK word, in characters. */
  cjkMax: number;
  /** English words and phrases, as stemmed words joined by spaces. */
  latin: Map<string, string[]>;
  /** Longest English phrase, in words. */
  latinMax: number;
}

/**
 * Compiles `concept → "word|word|…"` into lookup maps. English words are stemmed as the tokenizer stems them.
 *
 * @example
 * ```ts
 * const lexicon = compileLexicon({ light: "灯|lamp" });
 * ```
 */
export function compileLexicon(source: Readonly<Record<string, string>>): Lexicon {
  const lexicon: Lexicon = { cjk: new Map(), cjkMax: 0, latin: new Map(), latinMax: 0 };
  const add = (map: Map<string, string[]>, key: string, concept: string) => {
    const list = map.get(key) ?? [];
    if (!list.includes(concept)) list.push(concept);
    map.set(key, list);
  };
  for (const [name, words] of Object.entries(source)) {
    const concept = `~${name}`;
    for (const raw of words.split("|")) {
      const word = raw.normalize("NFKC").toLowerCase().trim();
      if (!word) continue;
      if (/^[\p{sc=Han}\p{sc=Hiragana}\p{sc=Katakana}\p{sc=Hangul}]+$/v.test(word)) {
        add(lexicon.cjk, word, concept);
        lexicon.cjkMax = Math.max(lexicon.cjkMax, [...word].length);
      } else {
        const parts = word.split(/[^\p{L}\p{N}]+/u).filter(Boolean).map(stem);
        if (!parts.length) continue;
        add(lexicon.latin, parts.join(" "), concept);
        lexicon.latinMax = Math.max(lexicon.latinMax, parts.length);
      }
    }
  }
  return lexicon;
}

/** The household lexicon, compiled once. */
export const HOUSEHOLD: Lexicon = compileLexicon(HOUSEHOLD_LEXICON);

/** Options of {@link tokenize}. */
export interface TokenizeOptions {
  /** Adds concept tokens; `undefined` for plain terms only. */
  lexicon?: Lexicon | undefined;
}

function cjkTerms(run: string, out: string[], lexicon: Lexicon | undefined): void {
  const chars = [...run];
  if (lexicon) {
    for (let i = 0; i < chars.length; i++) {
      let word = "";
      for (let length = 1; length <= lexicon.cjkMax && i + length <= chars.length; length++) {
        word += chars[i + length - 1];
        const concepts = lexicon.cjk.get(word);
        if (concepts) out.push(...concepts);
      }
    }
  }
  let start = 0;
  for (let i = 0; i <= chars.length; i++) {
    if (i < chars.length && !ZH_SPLIT_CHARS.has(chars[i]!)) continue;
    const length = i - start;
    if (length === 1) {
      if (!ZH_STOP_CHARS.has(chars[start]!)) out.push(chars[start]!);
    } else {
      for (let j = start; j < i - 1; j++) {
        const bigram = chars[j]! + chars[j + 1]!;
        if (!ZH_STOP_BIGRAMS.has(bigram)) out.push(bigram);
      }
    }
    start = i + 1;
  }
}

/**
 * Splits text into index terms (with repeats, in order of appearance).
 *
 * @example
 * ```ts
 * tokenize("把 living room 的灯打开"); // ["living", "room", "灯", "打开"]
 * tokenize("把客厅的灯打开", { lexicon: HOUSEHOLD }); // [..., "~living_room", "客厅", "~light", "灯", "~turn_on", "打开"]
 * ```
 */
export function tokenize(text: string, options: TokenizeOptions = {}): string[] {
  const out: string[] = [];
  const lexicon = options.lexicon;
  const normalized = text.normalize("NFKC").toLowerCase();
  let words: string[] = [];
  const flushWords = () => {
    if (!words.length) return;
    if (lexicon) {
      for (let i = 0; i < words.length; i++) {
        let phrase = "";
        for (let length = 1; length <= lexicon.latinMax && i + length <= words.length; length++) {
          phrase = length === 1 ? words[i]! : `${phrase} ${words[i + length - 1]}`;
          const concepts = lexicon.latin.get(phrase);
          if (concepts) out.push(...concepts);
        }
      }
    }
    for (const word of words) if (!EN_STOPWORDS.has(word)) out.push(word);
    words = [];
  };
  let lastEnd = 0;
  for (const match of normalized.matchAll(RUN)) {
    // A phrase ("living room") continues only across white space or simple joiners, not across CJK or sentences.
    if (words.length && !/^[\s\-'/]*$/.test(normalized.slice(lastEnd, match.index))) flushWords();
    lastEnd = match.index + match[0].length;
    if (match[1] !== undefined) {
      flushWords();
      cjkTerms(match[1], out, lexicon);
    } else {
      const word = match[2]!;
      words.push(/^\p{L}+$/u.test(word) ? stem(word) : word);
    }
  }
  flushWords();
  return out;
}

/**
 * Term frequencies of a text.
 *
 * @example
 * ```ts
 * termFrequencies("lamp lamps", {}); // Map { "lamp" => 2 }
 * ```
 */
export function termFrequencies(text: string, options: TokenizeOptions = {}): Map<string, number> {
  const counts = new Map<string, number>();
  for (const term of tokenize(text, options)) counts.set(term, (counts.get(term) ?? 0) + 1);
  return counts;
}
