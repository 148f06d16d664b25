/**
 * Time expressions for reminders, read from tokens (see `tokens.ts`) into a {@link When}: a delay ("二十分钟后",
 * "in 20 minutes"), a time of day on a day ("明天早上八点", "tomorrow at 8 am", "周五下午两点", "on december 25 at
 * 10 am") or a repetition ("每个工作日早上七点", "every saturday at 10"). Usable on its own; the matcher calls it for
 * the `{when}` slot.
 *
 * Hours resolve with the period said: 早上/上午/凌晨/am keep hours up to 12 (凌晨十二点 and 12 am are 0); 中午 puts
 * 1–5 after noon; 下午/晚上/今晚/pm add 12 to hours 1–11 (晚上十二点 is 0:00 of the next day). Without a period the
 * hour stays as said (七点 is 7). Impossible values (hour 25, minute 61, 2月30日) are not read at all.
 *
 * This file keeps `parseWhen`; the grammars are in `when_zh.ts` and `when_en.ts`, what they share in `when_shared.ts`.
 *
 * @module
 */

import type { When } from "./intent.ts";
import { enAt, enEvery, enIn } from "./when_en.ts";
import type { WhenParse } from "./when_shared.ts";
import { zhAt, zhEvery, zhIn } from "./when_zh.ts";

export type { WhenParse } from "./when_shared.ts";

function sameWhen(a: When, b: When): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * Every reading of a time expression that starts at `tokens[from]`, longest first (one per end and meaning); [] when
 * none starts there. `language` picks the grammar.
 *
 * @example
 * ```ts
 * import { tokenTexts } from "./tokens.ts";
 *
 * parseWhen(tokenTexts("明天早上八点提醒我"), 0, "zh")[0];
 * // { when: { kind: "at", hour: 8, minute: 0, day: { relative: 1 } }, end: 6 }
 * parseWhen(tokenTexts("in half an hour"), 0, "en")[0]; // { when: { kind: "in", ms: 1800000 }, end: 4 }
 * ```
 */
export function parseWhen(tokens: readonly string[], from: number, language: "zh" | "en"): WhenParse[] {
  const found = language === "zh"
    ? [...zhIn(tokens, from), ...zhEvery(tokens, from), ...zhAt(tokens, from)]
    : [...enIn(tokens, from), ...enEvery(tokens, from), ...enAt(tokens, from)];
  const out: WhenParse[] = [];
  for (const parse of found) {
    if (!out.some((seen) => seen.end === parse.end && sameWhen(seen.when, parse.when))) out.push(parse);
  }
  return out.sort((a, b) => b.end - a.end);
}
