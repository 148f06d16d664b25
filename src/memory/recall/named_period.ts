/**
 * The period a query names — a month ("in October", "十月", "10月"), a day ("October 14th", "14 Oct", "10月14日",
 * "十月十四号") or "yesterday" / "昨天" — so recall can prefer what was said then. A month or day without a year is
 * its latest occurrence not after now: asked in January, "December" is last December. Times are the machine's local
 * time, as the household reads them.
 *
 * @module
 */

/** The months' English names, lower case, January first. */
export const MONTHS = [
  "january",
  "february",
  "march",
  "april",
  "may",
  "june",
  "july",
  "august",
  "september",
  "october",
  "november",
  "december",
];
/** Three-letter forms and "sept"; only with a day number ("Oct 14"), since "mar" and "may" are also words. */
const SHORT = new Map([...MONTHS.map((name, i) => [name.slice(0, 3), i] as const), ["sept", 8]]);
const ZH_DIGITS: Record<string, number> = { 一: 1, 二: 2, 两: 2, 三: 3, 四: 4, 五: 5, 六: 6, 七: 7, 八: 8, 九: 9 };

/** 1–31 from Arabic digits or Chinese numerals up to 三十一; NaN otherwise. */
function number(text: string): number {
  if (/^\d{1,2}$/.test(text)) return Number(text);
  if (!text.includes("十")) return text.length === 1 ? ZH_DIGITS[text] ?? Number.NaN : Number.NaN;
  const match = /^([二三])?十([一二三四五六七八九])?$/.exec(text);
  if (!match) return Number.NaN;
  const [, tens, ones] = match;
  return (tens ? ZH_DIGITS[tens]! : 1) * 10 + (ones ? ZH_DIGITS[ones]! : 0);
}

const EN_DAY_FIRST = /\b(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?([a-z]{3,9})\b/g;
const EN_MONTH_FIRST = /\b([a-z]{3,9})\.?\s+(\d{1,2})(?:st|nd|rd|th)?\b/g;
const EN_MONTH = /\b(january|february|april|june|july|august|september|october|november|december)\b/;
/** "may" and "march" are also a verb: as a month only after a word that introduces a time. */
const EN_VERB_MONTH = /\b(?:in|of|last|during|since|until|early|late|mid)[\s-]+(march|may)\b/;
const ZH_DATE = /([0-9]{1,2}|[一二三四五六七八九十]{1,3})月(?:([0-9]{1,2}|[一二三四五六七八九十]{1,3})[日号])?/;

function monthOf(word: string, withDay: boolean): number {
  const full = MONTHS.indexOf(word);
  if (full !== -1) return full;
  return withDay ? SHORT.get(word) ?? -1 : -1;
}

/**
 * The period `query` names, as `[start, end)` in ms since the epoch, or `undefined` when it names none.
 *
 * @example
 * ```ts
 * const now = new Date(2026, 10, 30).getTime();
 * namedPeriod("What did Anna say in October?", now); // October 2026, start to end
 * namedPeriod("十二月三号说了什么", now); // 3 December 2025 (the latest one not after now)
 * namedPeriod("Where is the passport?", now); // undefined
 * ```
 */
export function namedPeriod(query: string, now: number): { start: number; end: number } | undefined {
  const text = query.normalize("NFKC").toLowerCase();
  const today = new Date(now);
  if (/\byesterday\b|昨天|昨日/.test(text)) {
    const start = new Date(today.getFullYear(), today.getMonth(), today.getDate() - 1).getTime();
    return { start, end: new Date(today.getFullYear(), today.getMonth(), today.getDate()).getTime() };
  }
  let month = -1;
  let day = Number.NaN;
  // "room 12" and "3 lamps" match the shapes too: the first match whose word is a month counts.
  const monthFirst = [...text.matchAll(EN_MONTH_FIRST)].find((m) => monthOf(m[1]!, true) !== -1);
  const dayFirst = [...text.matchAll(EN_DAY_FIRST)].find((m) => monthOf(m[2]!, true) !== -1);
  const zh = ZH_DATE.exec(text);
  if (monthFirst) {
    [month, day] = [monthOf(monthFirst[1]!, true), Number(monthFirst[2])];
  } else if (dayFirst) {
    [month, day] = [monthOf(dayFirst[2]!, true), Number(dayFirst[1])];
  } else if (zh && number(zh[1]!) >= 1 && number(zh[1]!) <= 12) {
    month = number(zh[1]!) - 1;
    if (zh[2] !== undefined) day = number(zh[2]);
  } else {
    const named = EN_MONTH.exec(text) ?? EN_VERB_MONTH.exec(text);
    if (named) month = MONTHS.indexOf(named[1]!);
  }
  if (month === -1) return undefined;
  const hasDay = Number.isInteger(day) && day >= 1 && day <= 31;
  const at = (year: number) =>
    hasDay
      ? { start: new Date(year, month, day).getTime(), end: new Date(year, month, day + 1).getTime() }
      : { start: new Date(year, month, 1).getTime(), end: new Date(year, month + 1, 1).getTime() };
  const thisYear = at(today.getFullYear());
  return thisYear.start <= now ? thisYear : at(today.getFullYear() - 1);
}
