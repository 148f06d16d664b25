/**
 * The period a query names — a month ("in October", "十月", "10月"), a day ("October 14th", "14 Oct", "10月14日",
 * "十月十四号") or "yesterday" / "昨天" — so recall can prefer what was said then. A month or day without a year is
 * its latest occurrence not after now: asked in January, "December" is last December. Times are the machine's local
 * time, as the household reads them.
 *
 * Chinese speaks of past days relative to today more than by date: 今天, 前天, 大前天, 上周三 / 上星期三 / 上礼拜三
 * (weeks start on Monday), 这周一, 15号 (this month's, or last month's when the 15th is still to come), 上个月20号,
 * and whole periods: 上周, 这周, 上个月, 这个月, 上个月初 / 月底. Days still to come (明天, 下周三, 下个月初) name no
 * period: nothing has been said then.
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
  if (/\byesterday\b/.test(text)) return daysAgo(today, 1);
  const chinese = chinesePeriod(text, today);
  if (chinese) return chinese;
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

/** The day `n` days before `today`'s, whole. */
function daysAgo(today: Date, n: number): { start: number; end: number } {
  return {
    start: new Date(today.getFullYear(), today.getMonth(), today.getDate() - n).getTime(),
    end: new Date(today.getFullYear(), today.getMonth(), today.getDate() - n + 1).getTime(),
  };
}

/** Days before today by word; 大前天 before 前天, which it holds. */
const ZH_DAYS_AGO: Array<[RegExp, number]> = [
  [/大前天/, 3],
  [/前天|前日/, 2],
  [/昨天|昨日|昨晚/, 1],
  [/今天|今日|今晚/, 0],
];
const ZH_WEEKDAY: Record<string, number> = { 一: 1, 二: 2, 三: 3, 四: 4, 五: 5, 六: 6, 日: 7, 天: 7 };
/** 上周三, 上上周三, 这周一, 本星期五, 上礼拜天; or the whole week (上周, 这周) with no day after it. */
const ZH_WEEK = /(上上|上|这|本)(?:个)?(?:周|星期|礼拜)([一二三四五六日天])?/;
/** 上个月20号, 上个月初, 上个月底; 这个月 / 本月; "15号" alone (not 5号线, 3号楼). */
const ZH_MONTH = /(上|这|本)个?月(?:([0-9]{1,2}|[一二三四五六七八九十]{1,3})[号日]|(初|中|底))?/;
const ZH_BARE_DAY =
  /(?<![0-9一二三四五六七八九十月])([0-9]{1,2}|[一二三四五六七八九十]{1,3})[号日](?![线楼房床门位室车])/;

/**
 * The past period a Chinese query names relative to today (see the module doc), or `undefined`.
 */
function chinesePeriod(text: string, today: Date): { start: number; end: number } | undefined {
  for (const [word, n] of ZH_DAYS_AGO) if (word.test(text)) return daysAgo(today, n);
  const [y, m, d] = [today.getFullYear(), today.getMonth(), today.getDate()];
  const week = ZH_WEEK.exec(text);
  if (week) {
    // Monday of this week, then back by whole weeks.
    const monday = d - ((today.getDay() + 6) % 7) - (week[1] === "上上" ? 14 : week[1] === "上" ? 7 : 0);
    if (!week[2]) {
      return { start: new Date(y, m, monday).getTime(), end: new Date(y, m, monday + 7).getTime() };
    }
    const day = monday + ZH_WEEKDAY[week[2]]! - 1;
    if (new Date(y, m, day).getTime() > today.getTime()) return undefined; // 这周五, asked on Wednesday
    return { start: new Date(y, m, day).getTime(), end: new Date(y, m, day + 1).getTime() };
  }
  if (ZH_DATE.test(text)) return undefined; // 10月14日: the caller's dates
  const month = ZH_MONTH.exec(text);
  if (month) {
    const at = month[1] === "上" ? m - 1 : m;
    if (month[2] !== undefined) {
      const day = number(month[2]);
      return Number.isInteger(day) && day >= 1 && day <= 31
        ? { start: new Date(y, at, day).getTime(), end: new Date(y, at, day + 1).getTime() }
        : undefined;
    }
    const [from, to] = month[3] === "初"
      ? [1, 11]
      : month[3] === "中"
      ? [11, 21]
      : month[3] === "底"
      ? [21, 32]
      : [1, 32];
    const end = Math.min(new Date(y, at, to).getTime(), new Date(y, at + 1, 1).getTime());
    return { start: new Date(y, at, from).getTime(), end };
  }
  const bare = ZH_BARE_DAY.exec(text);
  if (bare) {
    const day = number(bare[1]!);
    if (!Number.isInteger(day) || day < 1 || day > 31) return undefined;
    const at = day <= d ? m : m - 1;
    return { start: new Date(y, at, day).getTime(), end: new Date(y, at, day + 1).getTime() };
  }
  return undefined;
}
