/**
 * The tokenizer of the retrieval engine, for Chinese, Japanese, Korean and Latin text in one pass.
 *
 * - CJK runs (split at particles such as 的 and 了) become character bigrams; a one-character run becomes a
 *   unigram unless it is a stop character. Question words (什么) and day words relative to their saying (今天,
 *   上周三) are dropped whole.
 * - Latin text becomes lower-case words with light English stemming; digits are kept (`21`, `2026`, `wifi6`).
 * - Stopwords of both languages are dropped.
 * - With a lexicon, every concept a word names adds a concept token (`~light`), in documents and queries alike.
 *
 * Deterministic, no network, no model. Input is NFKC-normalised first (full-width letters and digits fold).
 *
 * @module
 */

import { HOUSEHOLD_IDIOMS, HOUSEHOLD_LEXICON } from "./lexicon.ts";
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
import { textRuns } from "./text_runs.ts";

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
  /** English idioms (stemmed, space-joined) inside which no concept fires: "in light of" is not about lamps. */
  idioms: Set<string>;
  /** Longest idiom, in words. */
  idiomMax: number;
}

/**
 * Compiles `concept → "word|word|…"` into lookup maps. English words are stemmed as the tokenizer stems them.
 *
 * @example
 * ```ts
 * const lexicon = compileLexicon({ light: "灯|lamp" });
 * ```
 */
export function compileLexicon(
  source: Readonly<Record<string, string>>,
  idioms: readonly string[] = [],
  stemWord: (word: string) => string = stem,
): Lexicon {
  const lexicon: Lexicon = { cjk: new Map(), cjkMax: 0, latin: new Map(), latinMax: 0, idioms: new Set(), idiomMax: 0 };
  for (const idiom of idioms) {
    const parts = idiom.normalize("NFKC").toLowerCase().split(/[^\p{L}\p{N}]+/u).filter(Boolean).map(stemWord);
    lexicon.idioms.add(parts.join(" "));
    lexicon.idiomMax = Math.max(lexicon.idiomMax, parts.length);
  }
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
        const parts = word.split(/[^\p{L}\p{N}]+/u).filter(Boolean).map(stemWord);
        if (!parts.length) continue;
        add(lexicon.latin, parts.join(" "), concept);
        lexicon.latinMax = Math.max(lexicon.latinMax, parts.length);
      }
    }
  }
  return lexicon;
}

/** The household lexicon, compiled once. */
export const HOUSEHOLD: Lexicon = compileLexicon(HOUSEHOLD_LEXICON, HOUSEHOLD_IDIOMS);

/**
 * The name of what the engine's analyzer (tokenizer, stemmer, stopwords, household lexicon) does. Change it with any
 * change that gives a text different terms: stores written by another analyzer are emptied at open and rebuilt by
 * their owners.
 */
export const ANALYZER = "engine-4";

/** What a lexicon's entries start with: every entry, and each of its leading parts (CJK characters, English words). */
interface Prefixes {
  cjk: Set<string>;
  latin: Set<string>;
  idioms: Set<string>;
}

/** Each lexicon's {@link Prefixes}, made on its first use (a lexicon is not changed once compiled). */
const PREFIXES = new WeakMap<Lexicon, Prefixes>();

/**
 * The prefixes of `lexicon`. A lookup stops at the first text no entry starts with: most places start none, so each
 * costs one Map probe instead of one per length up to the longest entry (a new string hashed for each).
 */
function prefixesOf(lexicon: Lexicon): Prefixes {
  let prefixes = PREFIXES.get(lexicon);
  if (prefixes) return prefixes;
  const cjk = new Set<string>();
  for (const word of lexicon.cjk.keys()) {
    let prefix = "";
    for (const char of word) cjk.add(prefix += char);
  }
  // A phrase is extended by " " and a word: its prefixes end where a space starts.
  const spaced = (keys: Iterable<string>) => {
    const out = new Set<string>();
    for (const key of keys) {
      out.add(key);
      for (let at = key.indexOf(" "); at >= 0; at = key.indexOf(" ", at + 1)) out.add(key.slice(0, at));
    }
    return out;
  };
  prefixes = { cjk, latin: spaced(lexicon.latin.keys()), idioms: spaced(lexicon.idioms) };
  PREFIXES.set(lexicon, prefixes);
  return prefixes;
}

/** The characters a day word can start with (大, 前, 上 …). */
const DEICTIC_FIRST = new Set([...ZH_DEICTIC_WORDS].map((word) => word[0]!));
/** The characters a question word can start with (什, 怎, 哪 …): no bigram is made at the others. */
const QUESTION_FIRST = new Set([...ZH_QUESTION_BIGRAMS].map((word) => word[0]!));

/** Options of {@link tokenize}. */
export interface TokenizeOptions {
  /** Adds concept tokens; `undefined` for plain terms only. */
  lexicon?: Lexicon | undefined;
  /**
   * Stems an English word (default: the engine's own, `stem.ts`). Another stemmer needs a lexicon compiled with it;
   * `eval:stemmers` compares them.
   */
  stem?: ((word: string) => string) | undefined;
}

/** A unit of a CJK segment that is a number written inside it (a digit run), not a character. */
const isNumber = (unit: string) => unit.length > 1 || (unit >= "0" && unit <= "9");

/**
 * Terms of one CJK segment. `units` are its characters, with numbers written inside it ("城巴7号线", "22点") kept as
 * single units so that they pair with their neighbours (巴7, 7号) as well as standing alone.
 */
function cjkTerms(units: readonly string[], out: string[], lexicon: Lexicon | undefined): void {
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
    const prefixes = prefixesOf(lexicon).cjk;
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
        if (!prefixes.has(word)) break; // no entry starts with it: no longer one can match
      }
    }
  }
  // Split at particles, and drop question words and fillers together with both their characters.
  const keep = units.map((unit, i) => !ZH_SPLIT_CHARS.has(unit) && !deictic[i]);
  for (let i = 0; i + 1 < units.length; i++) {
    if (QUESTION_FIRST.has(units[i]!) && ZH_QUESTION_BIGRAMS.has(units[i]! + units[i + 1]!)) {
      keep[i] = keep[i + 1] = false;
    }
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

/**
 * Splits text into index terms (with repeats, in order of appearance; a run's concept tokens come before its plain
 * terms). English words are stemmed; Chinese becomes bigrams, split at particles such as 的 and 把.
 *
 * @example
 * ```ts
 * tokenize("把 living room 的灯打开"); // ["liv", "room", "灯打", "打开"]
 * tokenize("把客厅的灯打开", { lexicon: HOUSEHOLD }); // ["~living_room", "~light", "~turn_on", "客厅", "灯打", "打开"]
 * ```
 */
export function tokenize(text: string, options: TokenizeOptions = {}): string[] {
  const out: string[] = [];
  const lexicon = options.lexicon;
  const stemWord = options.stem ?? stem;
  const normalized = text.normalize("NFKC").toLowerCase();
  const pieces = textRuns(normalized);
  const isNumberPiece = (piece: { cjk: boolean; text: string }) => !piece.cjk && /^\d+$/.test(piece.text);
  let words: string[] = [];
  // Stopwords are judged on the word as written: stemming first would index "does" as "doe".
  let stops: boolean[] = [];
  const flushWords = () => {
    if (!words.length) return;
    if (lexicon) {
      const prefixes = prefixesOf(lexicon);
      // Words inside an idiom name no concept.
      const inIdiom = new Uint8Array(words.length);
      for (let i = 0; lexicon.idiomMax && i < words.length; i++) {
        let phrase = "";
        for (let length = 1; length <= lexicon.idiomMax && i + length <= words.length; length++) {
          phrase = length === 1 ? words[i]! : `${phrase} ${words[i + length - 1]}`;
          if (lexicon.idioms.has(phrase)) inIdiom.fill(1, i, i + length);
          if (!prefixes.idioms.has(phrase)) break;
        }
      }
      for (let i = 0; i < words.length; i++) {
        let phrase = "";
        for (let length = 1; length <= lexicon.latinMax && i + length <= words.length; length++) {
          if (inIdiom[i + length - 1]) break;
          phrase = length === 1 ? words[i]! : `${phrase} ${words[i + length - 1]}`;
          const concepts = lexicon.latin.get(phrase);
          if (concepts) out.push(...concepts);
          if (!prefixes.latin.has(phrase)) break;
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
      j < pieces.length && (pieces[j]!.cjk || isNumberPiece(pieces[j]!)) &&
      (j === i || pieces[j - 1]!.end === pieces[j]!.start)
    ) {
      hasCjk ||= pieces[j]!.cjk;
      j++;
    }
    if (hasCjk) {
      flushWords();
      // Gathered in one array: a slice and an array per piece (flatMap) were garbage made for every CJK segment.
      const units: string[] = [];
      for (let at = i; at < j; at++) {
        const piece = pieces[at]!;
        if (!piece.cjk) units.push(piece.text);
        else for (const char of piece.text) units.push(char);
      }
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
