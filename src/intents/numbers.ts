/**
 * Numbers as people say them in commands, read from tokens (see `tokens.ts`): digits ("50", "22.5"), Chinese numerals
 * (二十五, 一百, 两百, 一百零五, 一百二 = 120, 三十五点五) and English words ("fifty five", "fifty-five", "a hundred and
 * twenty", "twenty two point five"). Every parser returns all readings that start at `from`, longest first, so the
 * matcher can backtrack when a shorter reading lets the rest of the sentence match.
 *
 * @module
 */

/** One reading: its value and the index of the first token after it. */
export interface NumberParse {
  value: number;
  end: number;
}

/** Options of {@link parseNumber}. */
export interface NumberOptions {
  /** Whole numbers only (clock hours and minutes): no "22.5", no 三点五, no "point five". */
  integer?: boolean;
}

const ZH_DIGITS: Readonly<Record<string, number>> = {
  零: 0,
  〇: 0,
  一: 1,
  二: 2,
  两: 2,
  三: 3,
  四: 4,
  五: 5,
  六: 6,
  七: 7,
  八: 8,
  九: 9,
};
const ZH_UNITS: Readonly<Record<string, number>> = { 十: 10, 百: 100, 千: 1000 };
const ZH_NUMBER_CHARS = new Set([...Object.keys(ZH_DIGITS), ...Object.keys(ZH_UNITS), "万", "点"]);

const EN_ONES: Readonly<Record<string, number>> = {
  zero: 0,
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
  eleven: 11,
  twelve: 12,
  thirteen: 13,
  fourteen: 14,
  fifteen: 15,
  sixteen: 16,
  seventeen: 17,
  eighteen: 18,
  nineteen: 19,
};
const EN_TENS: Readonly<Record<string, number>> = {
  twenty: 20,
  thirty: 30,
  forty: 40,
  fifty: 50,
  sixty: 60,
  seventy: 70,
  eighty: 80,
  ninety: 90,
};

const DIGITS = /^\d+(?:\.\d+)?$/;

/** Keeps the first reading per end, longest first. */
function byEnd(parses: NumberParse[]): NumberParse[] {
  const seen = new Map<number, NumberParse>();
  for (const parse of parses) if (!seen.has(parse.end) && Number.isFinite(parse.value)) seen.set(parse.end, parse);
  return [...seen.values()].sort((a, b) => b.end - a.end);
}

/** A section below 10 000 (一千二百三十四, 十五, 一百二 = 120, 一百零五), or undefined when it is not a numeral. */
function zhSection(chars: readonly string[]): number | undefined {
  if (chars.length === 0) return undefined;
  if (chars.length === 1 && ZH_DIGITS[chars[0]!] === 0) return 0;
  let total = 0;
  let lastUnit = 10_000;
  let pending: number | undefined;
  let zero = false;
  for (const ch of chars) {
    const digit = ZH_DIGITS[ch];
    if (digit === 0) {
      if (pending !== undefined || zero || lastUnit === 10_000) return undefined;
      zero = true;
    } else if (digit !== undefined) {
      if (pending !== undefined) return undefined; // 二五: digit after digit is not a numeral
      pending = digit;
    } else {
      const unit = ZH_UNITS[ch];
      if (unit === undefined || unit >= lastUnit) return undefined;
      let times = pending;
      if (times === undefined) {
        if (unit !== 10 || total !== 0 || zero) return undefined; // only a leading 十 may stand alone: 十五
        times = 1;
      }
      total += times * unit;
      lastUnit = unit;
      pending = undefined;
      zero = false;
    }
  }
  if (pending !== undefined) {
    // 一百二 = 120, 两千五 = 2500: a digit right after 百/千 counts one unit lower; after 零 or 十 it is ones.
    total += !zero && lastUnit >= 100 && lastUnit < 10_000 ? pending * (lastUnit / 10) : pending;
  } else if (zero) return undefined; // 一百零: 零 must lead somewhere
  return total;
}

/** A whole Chinese numeral, 万 included (三万五 = 35 000, 一万零五百 = 10 500). */
function zhInteger(chars: readonly string[]): number | undefined {
  const wan = chars.indexOf("万");
  if (wan < 0) return zhSection(chars);
  if (chars.indexOf("万", wan + 1) >= 0) return undefined;
  const high = zhSection(chars.slice(0, wan));
  if (high === undefined || high === 0) return undefined;
  const rest = chars.slice(wan + 1);
  if (rest.length === 0) return high * 10_000;
  if (rest.length === 1 && ZH_DIGITS[rest[0]!] !== undefined && ZH_DIGITS[rest[0]!] !== 0) {
    return high * 10_000 + ZH_DIGITS[rest[0]!]! * 1000;
  }
  const low = rest[0] === "零" || rest[0] === "〇" ? zhSection(rest.slice(1)) : zhSection(rest);
  return low === undefined ? undefined : high * 10_000 + low;
}

/** A Chinese numeral with an optional decimal part after 点 (三十五点五 = 35.5). */
function zhNumber(chars: readonly string[], integer: boolean): number | undefined {
  const point = chars.indexOf("点");
  if (point < 0) return zhInteger(chars);
  if (integer || point === 0) return undefined;
  const whole = zhInteger(chars.slice(0, point));
  const fraction = chars.slice(point + 1);
  if (whole === undefined || fraction.length === 0) return undefined;
  let digits = "";
  for (const ch of fraction) {
    const digit = ch === "两" ? undefined : ZH_DIGITS[ch];
    if (digit === undefined) return undefined;
    digits += String(digit);
  }
  return Number(`${whole}.${digits}`);
}

function zhParses(tokens: readonly string[], from: number, integer: boolean): NumberParse[] {
  const run: string[] = [];
  for (let i = from; i < tokens.length && ZH_NUMBER_CHARS.has(tokens[i]!); i++) run.push(tokens[i]!);
  const out: NumberParse[] = [];
  for (let length = run.length; length > 0; length--) {
    const value = zhNumber(run.slice(0, length), integer);
    if (value !== undefined) out.push({ value, end: from + length });
  }
  return out;
}

/** English words from `from`, hyphenated tokens split ("fifty-five"); `token[i]` is the token word i belongs to. */
interface Words {
  words: string[];
  token: number[];
  /** Whether word i is the last part of its token (a reading may end only there). */
  last: boolean[];
}

function englishWords(tokens: readonly string[], from: number): Words {
  const out: Words = { words: [], token: [], last: [] };
  for (let i = from; i < tokens.length && out.words.length < 12; i++) {
    const parts = tokens[i]!.split("-");
    parts.forEach((part, k) => {
      out.words.push(part);
      out.token.push(i);
      out.last.push(k === parts.length - 1);
    });
  }
  return out;
}

type Reading = { value: number; next: number };

function enBelowHundred(w: readonly string[], i: number): Reading[] {
  const word = w[i];
  if (word === undefined) return [];
  const one = EN_ONES[word];
  if (one !== undefined) return [{ value: one, next: i + 1 }];
  const ten = EN_TENS[word];
  if (ten === undefined) return [];
  const out: Reading[] = [{ value: ten, next: i + 1 }];
  const unit = EN_ONES[w[i + 1] ?? ""];
  if (unit !== undefined && unit >= 1 && unit <= 9) out.push({ value: ten + unit, next: i + 2 });
  return out;
}

function enBelowThousand(w: readonly string[], i: number): Reading[] {
  const out: Reading[] = [];
  const heads: Reading[] = w[i] === "a" ? [{ value: 1, next: i + 1 }] : enBelowHundred(w, i);
  for (const head of heads) {
    if (w[i] !== "a") out.push(head);
    if (w[head.next] !== "hundred" || head.value < 1 || head.value > 9) continue;
    const hundreds = { value: head.value * 100, next: head.next + 1 };
    out.push(hundreds);
    const tailAt = w[hundreds.next] === "and" ? hundreds.next + 1 : hundreds.next;
    for (const tail of enBelowHundred(w, tailAt)) {
      if (tail.value > 0) out.push({ value: hundreds.value + tail.value, next: tail.next });
    }
  }
  return out;
}

function enInteger(w: readonly string[], i: number): Reading[] {
  const out: Reading[] = [];
  const heads: Reading[] = w[i] === "a" && w[i + 1] === "thousand"
    ? [{ value: 1, next: i + 1 }]
    : enBelowThousand(w, i);
  for (const head of heads) {
    if (w[i] !== "a" || w[i + 1] !== "thousand") out.push(head);
    if (w[head.next] !== "thousand" || head.value < 1) continue;
    const thousands = { value: head.value * 1000, next: head.next + 1 };
    out.push(thousands);
    const tailAt = w[thousands.next] === "and" ? thousands.next + 1 : thousands.next;
    for (const tail of enBelowThousand(w, tailAt)) {
      if (tail.value > 0) out.push({ value: thousands.value + tail.value, next: tail.next });
    }
  }
  return out;
}

function enParses(tokens: readonly string[], from: number, integer: boolean): NumberParse[] {
  const { words, token, last } = englishWords(tokens, from);
  const readings = enInteger(words, 0);
  if (!integer) {
    for (const reading of [...readings]) {
      if (words[reading.next] !== "point") continue;
      let digits = "";
      let next = reading.next + 1;
      while (next < words.length && EN_ONES[words[next]!] !== undefined && EN_ONES[words[next]!]! <= 9) {
        digits += String(EN_ONES[words[next]!]);
        next++;
        readings.push({ value: Number(`${reading.value}.${digits}`), next });
      }
    }
  }
  const out: NumberParse[] = [];
  for (const reading of readings) {
    const lastWord = reading.next - 1;
    if (last[lastWord]) out.push({ value: reading.value, end: token[lastWord]! + 1 });
  }
  return out;
}

/**
 * Every reading of a number starting at `tokens[from]`, longest first; [] when there is none.
 *
 * @example
 * ```ts
 * parseNumber(["二", "十", "五", "度"], 0); // [{ value: 25, end: 3 }, { value: 20, end: 2 }, { value: 2, end: 1 }]
 * parseNumber(["fifty-five"], 0); // [{ value: 55, end: 1 }]
 * parseNumber(["22.5"], 0); // [{ value: 22.5, end: 1 }]
 * ```
 */
export function parseNumber(tokens: readonly string[], from: number, options: NumberOptions = {}): NumberParse[] {
  const token = tokens[from];
  if (token === undefined) return [];
  const integer = options.integer ?? false;
  if (DIGITS.test(token)) {
    return integer && token.includes(".") ? [] : [{ value: Number(token), end: from + 1 }];
  }
  return byEnd([...zhParses(tokens, from, integer), ...enParses(tokens, from, integer)]);
}

/**
 * Every reading of a percentage at `tokens[from]`: a number with or without "%", or 百分之 + a number.
 *
 * @example
 * ```ts
 * parsePercent(["50", "%"], 0); // [{ value: 50, end: 2 }, { value: 50, end: 1 }]
 * parsePercent(["百", "分", "之", "三", "十"], 0)[0]; // { value: 30, end: 5 }
 * parsePercent(["三", "成"], 0)[0]; // { value: 30, end: 2 }
 * ```
 */
export function parsePercent(tokens: readonly string[], from: number): NumberParse[] {
  if (tokens[from] === "百" && tokens[from + 1] === "分" && tokens[from + 2] === "之") {
    return parseNumber(tokens, from + 3);
  }
  const out: NumberParse[] = [];
  for (const parse of parseNumber(tokens, from)) {
    if (tokens[parse.end] === "%") out.push({ value: parse.value, end: parse.end + 1 });
    // 三成 is 30 %, 七成半 75 % (only a whole number of tenths up to ten: 十成 is all of it).
    if (tokens[parse.end] === "成" && Number.isInteger(parse.value) && parse.value >= 0 && parse.value <= 10) {
      const half = tokens[parse.end + 1] === "半";
      out.push({ value: parse.value * 10 + (half ? 5 : 0), end: parse.end + (half ? 2 : 1) });
    }
    out.push(parse);
  }
  return byEnd(out);
}
