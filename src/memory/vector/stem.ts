/**
 * A light English stemmer: plurals, -ing, -ed and a few derivational endings, enough for "lights"/"light",
 * "turned"/"turning"/"turn", "batteries"/"battery". Deliberately conservative: a wrong merge costs more than a
 * missed one.
 *
 * @module
 */

const VOWEL = /[aeiouy]/;

/** After -ing/-ed: stopp → stop (but fall, miss stay); a short consonant-vowel-consonant stem gets its e back (liv → live). */
function restore(word: string): string {
  const last = word.at(-1);
  if (word.length > 3 && last === word.at(-2) && last && !"lsz".includes(last) && !VOWEL.test(last)) {
    return word.slice(0, -1);
  }
  return /^[^aeiou]*[aeiou][^aeiouwxy]$/.test(word) ? `${word}e` : word;
}

/**
 * Stems one lower-case word.
 *
 * @example
 * ```ts
 * stem("batteries"); // "battery"
 * stem("turning"); // "turn"
 * stem("stopped"); // "stop"
 * stem("living"); // "live"
 * stem("glass"); // "glass"
 * ```
 */
export function stem(word: string): string {
  if (word.length <= 3 || !/^[a-z]+$/.test(word)) return word;
  if (word.endsWith("ies") && word.length > 4) return `${word.slice(0, -3)}y`;
  if (word.endsWith("sses")) return word.slice(0, -2);
  if (/(?:x|z|ch|sh)es$/.test(word)) return word.slice(0, -2);
  if (word.endsWith("s") && !/(?:ss|us|is|ous)$/.test(word)) return stem(word.slice(0, -1));
  if (word.endsWith("ing") && word.length > 5 && VOWEL.test(word.slice(0, -3))) return restore(word.slice(0, -3));
  if (word.endsWith("ied") && word.length > 4) return `${word.slice(0, -3)}y`;
  if (word.endsWith("ed") && word.length > 4 && !word.endsWith("eed") && VOWEL.test(word.slice(0, -2))) {
    return restore(word.slice(0, -2));
  }
  return word;
}
