/**
 * "When"-questions and the turns that can answer them: a question that asks for a time prefers an utterance that
 * names one (a clock time, a weekday, a month, "tomorrow"; 3点, 周五, 5月, 明天, 大前天, 下个月初, 月底), in English
 * and Chinese.
 *
 * @module
 */

const WHEN_QUESTION =
  /^\s*(?:when\b|what time\b|what day\b|which day\b|how soon\b|at what time\b)|什么时候|啥时候|几点|哪天|哪一天|几号|几月几|星期几|礼拜几|周几|多久|何时|哪个月|什么日子/i;

const TIME_WORDS = new RegExp(
  [
    String.raw`\b\d{1,2}[:.]\d{2}\b`,
    String.raw`\b\d{1,2}\s?(?:am|pm)\b`,
    String.raw`\b(?:mon|tues|wednes|thurs|fri|satur|sun)day\b`,
    String.raw`\b(?:january|february|march|april|june|july|august|september|october|november|december)\b`,
    String.raw`\b(?:today|tonight|tomorrow|yesterday|weekend|morning|afternoon|evening|noon|midnight|o'clock)\b`,
    String.raw`[0-9零一二三四五六七八九十两]+\s?(?:点|时|号|日|月)`,
    String.raw`(?:星期|周|礼拜)[一二三四五六日天]`,
    String.raw`今天|明天|后天|昨天|前天|今晚|明晚|昨晚|早上|上午|中午|下午|晚上|周末`,
    // A month's parts and the months around this one: "下个月初", "月底之前", "七月中旬".
    String.raw`月初|月底|月中|月末|[上中下]旬|(?:上|下|这|本)个?月|年底|年初`,
  ].join("|"),
  "i",
);

/**
 * True when `query` asks for a time.
 *
 * @example
 * ```ts
 * isWhenQuestion("When is Leo's dentist appointment?"); // true
 * isWhenQuestion("客厅灯几点关？"); // true
 * isWhenQuestion("Where is the passport?"); // false
 * ```
 */
export function isWhenQuestion(query: string): boolean {
  return WHEN_QUESTION.test(query);
}

/**
 * True when `text` names a time.
 *
 * @example
 * ```ts
 * hasTimeWords("The dentist is on Thursday at 9:30."); // true
 * hasTimeWords("周五下午三点"); // true
 * hasTimeWords("Top drawer of the hall desk."); // false
 * ```
 */
export function hasTimeWords(text: string): boolean {
  return TIME_WORDS.test(text);
}
