/**
 * The runs a text is tokenized from: CJK (Han, kana with the prolonged-sound mark ー, which is script Common, and
 * Hangul), and the other letters and numbers. Told by each code point's class, kept once found: V8 drops the code it
 * compiled for a regular expression that has not run through a few full garbage collections, and the Unicode sets of
 * one matching both runs took ≈ 0.5 ms to compile again — the first Chinese question after an hour of English ones
 * (and after the `gc()`s `bench:memory-scale` makes before it measures) paid it.
 *
 * @module
 */

/** A run: CJK or not, its text, and where it starts and ends (UTF-16 offsets). */
export interface TextRun {
  cjk: boolean;
  text: string;
  start: number;
  end: number;
}

const CJK_CHAR = /^[\p{sc=Han}\p{sc=Hiragana}\p{sc=Katakana}\p{sc=Hangul}\u30FC]$/v;
const WORD_CHAR = /^[\p{L}\p{N}]$/v;

const UNKNOWN = 0, CJK = 1, WORD = 2, OTHER = 3;
/** The class of each code point of the Basic Multilingual Plane met so far (64 kB); the others' in a map. */
const BMP = new Uint8Array(0x10000);
const ASTRAL = new Map<number, number>();

function classOf(codePoint: number): number {
  let found = codePoint < 0x10000 ? BMP[codePoint]! : ASTRAL.get(codePoint) ?? UNKNOWN;
  if (found !== UNKNOWN) return found;
  const char = String.fromCodePoint(codePoint);
  found = CJK_CHAR.test(char) ? CJK : WORD_CHAR.test(char) ? WORD : OTHER;
  if (codePoint < 0x10000) BMP[codePoint] = found;
  else ASTRAL.set(codePoint, found);
  return found;
}

/**
 * The text's runs, in order: each the longest stretch of CJK characters, or of other letters and numbers; whatever
 * else (spaces, punctuation, marks) separates them.
 *
 * @example
 * ```ts
 * textRuns("把 living room 的灯打开").map((run) => run.text); // ["把", "living", "room", "的灯打开"]
 * ```
 */
export function textRuns(text: string): TextRun[] {
  const runs: TextRun[] = [];
  let start = 0, open = OTHER;
  for (let at = 0; at <= text.length;) {
    const codePoint = at < text.length ? text.codePointAt(at)! : -1;
    const kind = codePoint < 0 ? OTHER : classOf(codePoint);
    if (kind !== open) {
      if (open !== OTHER) runs.push({ cjk: open === CJK, text: text.slice(start, at), start, end: at });
      open = kind;
      start = at;
    }
    at += codePoint > 0xffff ? 2 : 1;
  }
  return runs;
}
