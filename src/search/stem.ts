/**
 * A light English stemmer that agrees with itself: every inflected form of a word reaches the stem of its base form
 * ("change", "changes", "changed", "changing" → `chang`; "symbolize" … "symbolizing" → `symboliz`; "go", "goes",
 * "going", "went" → `go`). Plurals and third persons, -ing, -ed and a silent final e are removed; a doubled final
 * consonant is undoubled (stopped → stop). Derivational endings (-ness, -ation) are left alone: a wrong merge costs
 * more than a missed one. Stems are index terms, not words; stopwords are checked on the surface word, before this.
 *
 * @module
 */

const VOWEL = /[aeiouy]/;
/** A stem must keep a vowel followed by a consonant (Porter's m > 0): bread, thing and shed keep their endings. */
const SYLLABLE = /[aeiouy][^aeiouy]/;

/** Irregular forms of common verbs, to their base form (which is then stemmed like any word). */
const IRREGULAR = new Map<string, string>([
  ["goes", "go"],
  ["going", "go"],
  ["went", "go"],
  ["gone", "go"],
  ["does", "do"],
  ["doing", "do"],
  ["did", "do"],
  ["has", "have"],
  ["had", "have"],
  ["having", "have"],
  ["made", "make"],
  ["bought", "buy"],
  ["brought", "bring"],
  ["took", "take"],
  ["taken", "take"],
  ["gave", "give"],
  ["given", "give"],
  ["ate", "eat"],
  ["eaten", "eat"],
  ["came", "come"],
  ["told", "tell"],
  ["said", "say"],
  ["says", "say"],
  ["paid", "pay"],
]);

/** stopp → stop, plann → plan (but fall, miss and buzz keep their doubled letter). */
function undouble(word: string): string {
  const last = word.at(-1)!;
  return word.length > 3 && last === word.at(-2) && !"lsz".includes(last) && !VOWEL.test(last)
    ? word.slice(0, -1)
    : word;
}

/** A silent final e after a consonant goes (change → chang), when a vowel is left before it (not "the"). */
function dropFinalE(word: string): string {
  return word.length >= 3 && word.endsWith("e") && !VOWEL.test(word.at(-2)!) && VOWEL.test(word.slice(0, -2))
    ? word.slice(0, -1)
    : word;
}

/**
 * Stems one lower-case word.
 *
 * @example
 * ```ts
 * stem("batteries"); // "battery"
 * stem("turning"); // "turn"
 * stem("stopped"); // "stop"
 * stem("living"); // "liv", as "live" and "lives"
 * stem("glass"); // "glass"
 * ```
 */
export function stem(word: string): string {
  word = IRREGULAR.get(word) ?? word;
  if (word.length <= 3 || !/^[a-z]+$/.test(word)) return word.length === 3 ? dropFinalE(word) : word;
  if (word.endsWith("ies") && word.length > 4) return `${word.slice(0, -3)}y`;
  if (word.endsWith("ied") && word.length > 4) return `${word.slice(0, -3)}y`;
  if (word.endsWith("sses")) return word.slice(0, -2);
  if (/(?:x|z|ch|sh)es$/.test(word)) return word.slice(0, -2);
  // The singular is stemmed like any word, so "hundreds" meets "hundred" wherever that one ends up.
  if (word.endsWith("s") && !/(?:ss|us|is)$/.test(word)) return stem(word.slice(0, -1));
  if (word.endsWith("ing") && SYLLABLE.test(word.slice(0, -3))) return dropFinalE(undouble(word.slice(0, -3)));
  if (word.endsWith("ed") && !word.endsWith("eed") && SYLLABLE.test(word.slice(0, -2))) {
    return dropFinalE(undouble(word.slice(0, -2)));
  }
  return dropFinalE(word);
}
