/**
 * Normalisation and tokenisation shared by templates, lists, vocabulary names and the person's sentence, so all four
 * meet on the same tokens: NFKC (full-width → half-width, ℃ → °c), lowercase, punctuation and emoji dropped, each CJK
 * character one token, Latin words and numbers one token each.
 *
 * Kept inside a token (because the meaning needs them): `-` between letters or digits ("fifty-five", "s-1a2b3c4d",
 * "wi-fi"), `'` between letters ("don't", "o'clock"; a final "'s" is a token of its own: "what's" → "what" "'s"),
 * `.` and `:` between digits ("22.5", "7:30"). `%` and `°` are tokens of
 * their own. A run of letters and digits without `-` splits where letters meet digits ("7pm" → "7" "pm", "3000k" →
 * "3000" "k"), so "7 pm" and "7pm" read alike.
 *
 * @module
 */

/** A token and where it came from in the original text (UTF-16 offsets), so free text keeps its original form. */
export interface Token {
  text: string;
  start: number;
  end: number;
}

/** One character after normalisation, with the original span it came from. */
interface Char {
  c: string;
  start: number;
  end: number;
}

const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;
const WORD = /[\p{L}\p{N}]/u;
const LETTER = /\p{L}/u;
const DIGIT = /[0-9]/;
const OWN_TOKEN = new Set(["%", "°"]);
const APOSTROPHES = /[’‘`´ʼ]/g;

/** Normalises each code point on its own, so every output character still knows its span in the original. */
function normalisedChars(text: string): Char[] {
  const out: Char[] = [];
  let offset = 0;
  for (const cp of text) {
    const start = offset;
    offset += cp.length;
    const mapped = cp.normalize("NFKC").toLowerCase().replace(APOSTROPHES, "'");
    for (const c of mapped) out.push({ c, start, end: offset });
  }
  return out;
}

function isWord(c: string | undefined): boolean {
  return c !== undefined && WORD.test(c) && !CJK.test(c);
}

/** Whether `chars[i]` (a joiner) sits between two characters it may join. */
function joins(chars: readonly Char[], i: number): boolean {
  const before = chars[i - 1]?.c;
  const after = chars[i + 1]?.c;
  if (!isWord(before) || !isWord(after)) return false;
  switch (chars[i]!.c) {
    case "-":
      return true;
    case "'":
      return LETTER.test(before!) && LETTER.test(after!);
    case ".":
    case ":":
      return DIGIT.test(before!) && DIGIT.test(after!);
    default:
      return false;
  }
}

/**
 * Splits a run: a possessive or contraction "'s" becomes its own token ("light's" → "light" "'s", "what's" → "what"
 * "'s"); a run without `-` splits where letters meet digits ("7pm" → "7", "pm"); "3.5" and "7:30" stay whole.
 */
function splitRun(run: readonly Char[]): Char[][] {
  const n = run.length;
  if (n > 2 && run[n - 2]!.c === "'" && run[n - 1]!.c === "s") {
    return [...splitRun(run.slice(0, n - 2)), run.slice(n - 2)];
  }
  if (run.some((ch) => ch.c === "-")) return [run.slice()];
  const parts: Char[][] = [];
  let current: Char[] = [];
  let digits: boolean | undefined;
  for (const ch of run) {
    const isDigitLike = DIGIT.test(ch.c) || ch.c === "." || ch.c === ":";
    if (ch.c === "'" || digits === undefined || isDigitLike === digits) current.push(ch);
    else {
      parts.push(current);
      current = [ch];
    }
    if (ch.c !== "'") digits = isDigitLike;
  }
  if (current.length > 0) parts.push(current);
  return parts;
}

function tokenOf(chars: readonly Char[]): Token {
  return { text: chars.map((ch) => ch.c).join(""), start: chars[0]!.start, end: chars[chars.length - 1]!.end };
}

/**
 * The tokens of `text`, each with its span in `text`.
 *
 * @example
 * ```ts
 * tokenize("把客厅灯调到50%！").map((t) => t.text); // ["把", "客", "厅", "灯", "调", "到", "50", "%"]
 * tokenize("Remind me at 7pm").map((t) => t.text); // ["remind", "me", "at", "7", "pm"]
 * ```
 */
export function tokenize(text: string): Token[] {
  const chars = normalisedChars(text);
  const tokens: Token[] = [];
  let i = 0;
  while (i < chars.length) {
    const c = chars[i]!.c;
    if (CJK.test(c)) {
      tokens.push(tokenOf([chars[i]!]));
      i++;
    } else if (OWN_TOKEN.has(c)) {
      tokens.push(tokenOf([chars[i]!]));
      i++;
    } else if (isWord(c)) {
      const run: Char[] = [chars[i]!];
      i++;
      while (i < chars.length && (isWord(chars[i]!.c) || joins(chars, i))) run.push(chars[i++]!);
      for (const part of splitRun(run)) tokens.push(tokenOf(part));
    } else {
      i++; // punctuation, symbols, emoji, spaces: separators
    }
  }
  return tokens;
}

/**
 * The token texts of `text` only.
 *
 * @example
 * ```ts
 * tokenTexts("Turn on the LIVING-ROOM lights!"); // ["turn", "on", "the", "living-room", "lights"]
 * ```
 */
export function tokenTexts(text: string): string[] {
  return tokenize(text).map((token) => token.text);
}

/**
 * The normalised form of `text`: its tokens joined by single spaces (a stable key for names and list entries).
 *
 * @example
 * ```ts
 * normalize("  Ｋｉｔｃｈｅｎ Light!! 💡"); // "kitchen light"
 * normalize("客厅 灯"); // "客 厅 灯"
 * ```
 */
export function normalize(text: string): string {
  return tokenTexts(text).join(" ");
}

/**
 * Whether a token is a CJK character (templates and numbers treat these one character at a time).
 *
 * @example
 * ```ts
 * isCjkToken("灯"); // true
 * isCjkToken("lamp"); // false
 * ```
 */
export function isCjkToken(token: string): boolean {
  return token.length > 0 && CJK.test(token);
}
