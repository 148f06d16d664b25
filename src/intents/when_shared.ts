/**
 * What the Chinese (`when_zh.ts`) and English (`when_en.ts`) time grammars share: phrase tables, number helpers, how a
 * period word resolves a said hour, valid dates, the {@link Clock} a time of day is read into, and units of duration.
 * Split out of `when.ts` so each grammar is its own file; `when.ts` keeps `parseWhen`.
 *
 * @module
 */

import type { When } from "./intent.ts";
import { parseNumber } from "./numbers.ts";
import { tokenTexts } from "./tokens.ts";

/** One reading of a time expression: what it means and the index of the first token after it. */
export interface WhenParse {
  when: When;
  end: number;
}

/** How a period word turns a said hour into a 24-hour one. */
export type Period = "am" | "noon" | "pm" | "night" | "early";

export type Day = Extract<When, { kind: "at" }>["day"];
export type EveryDays = Extract<When, { kind: "every" }>["days"];

/** A phrase table: token sequences (from the keys) to values, longest phrase first. */
export type Phrases<V> = readonly { tokens: readonly string[]; value: V }[];

export function phrases<V>(table: Readonly<Record<string, V>>): Phrases<V> {
  return Object.entries(table)
    .map(([text, value]) => ({ tokens: tokenTexts(text), value }))
    .sort((a, b) => b.tokens.length - a.tokens.length);
}

/** Every phrase of `table` that starts at `tokens[i]`, longest first. */
export function phrasesAt<V>(tokens: readonly string[], i: number, table: Phrases<V>): { value: V; end: number }[] {
  const out: { value: V; end: number }[] = [];
  for (const { tokens: words, value } of table) {
    if (words.every((word, k) => tokens[i + k] === word)) out.push({ value, end: i + words.length });
  }
  return out;
}

export function wordAt(tokens: readonly string[], i: number, ...words: string[]): boolean {
  const token = tokens[i];
  return token !== undefined && words.includes(token);
}

/** Integers at `i` within [min, max]. */
export function integersAt(
  tokens: readonly string[],
  i: number,
  min: number,
  max: number,
): { value: number; end: number }[] {
  return parseNumber(tokens, i, { integer: true }).filter((p) => p.value >= min && p.value <= max);
}

// ---------------------------------------------------------------------------------------------------------------
// Resolving hours and days

/** The 24-hour hour for `hour` said with `period`, and whether it falls on the next day (晚上十二点). */
function resolveHour(hour: number, period: Period | undefined): { hour: number; nextDay: boolean } | undefined {
  if (!Number.isInteger(hour) || hour < 0 || hour > 23) return undefined;
  switch (period) {
    case undefined:
      return { hour, nextDay: false };
    case "am":
      return hour <= 12 ? { hour, nextDay: false } : undefined;
    case "early":
      return hour === 12 ? { hour: 0, nextDay: false } : hour <= 11 ? { hour, nextDay: false } : undefined;
    case "noon":
      if (hour >= 1 && hour <= 5) return { hour: hour + 12, nextDay: false };
      return hour === 11 || hour === 12 || (hour >= 13 && hour <= 17) ? { hour, nextDay: false } : undefined;
    case "pm":
      if (hour >= 1 && hour <= 11) return { hour: hour + 12, nextDay: false };
      return hour >= 12 ? { hour, nextDay: false } : undefined;
    case "night":
      if (hour >= 1 && hour <= 11) return { hour: hour + 12, nextDay: false };
      if (hour === 12) return { hour: 0, nextDay: true };
      return hour >= 13 ? { hour, nextDay: false } : undefined;
  }
}

/** The day after `day`, for a time past midnight said as the evening before; undefined when it cannot be said. */
function nextDayOf(day: Day): Day | undefined {
  if (day === "next") return "next";
  if ("relative" in day) return day.relative < 2 ? { relative: (day.relative + 1) as 1 | 2 } : undefined;
  if ("weekday" in day) return { weekday: (day.weekday + 1) % 7 };
  return undefined;
}

const DAYS_IN_MONTH = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

export function validDate(month: number, date: number): boolean {
  return month >= 1 && month <= 12 && date >= 1 && date <= DAYS_IN_MONTH[month - 1]!;
}

/** Builds an "at" reading, or none when the hour cannot be resolved. */
export function at(hour: number, minute: number, period: Period | undefined, day: Day, end: number): WhenParse[] {
  const resolved = resolveHour(hour, period);
  if (resolved === undefined || minute < 0 || minute > 59) return [];
  const onDay = resolved.nextDay ? nextDayOf(day) : day;
  if (onDay === undefined) return [];
  return [{ when: { kind: "at", hour: resolved.hour, minute, day: onDay }, end }];
}

export function every(
  hour: number,
  minute: number,
  period: Period | undefined,
  days: EveryDays,
  end: number,
): WhenParse[] {
  const resolved = resolveHour(hour, period);
  if (resolved === undefined || resolved.nextDay || minute < 0 || minute > 59) return [];
  return [{ when: { kind: "every", hour: resolved.hour, minute, days }, end }];
}

/** A clock time as said: hour and minute before resolving, and a period said inside it ("7 pm", "noon"). */
export interface Clock {
  hour: number;
  minute: number;
  period?: Period;
  end: number;
  /** Said so that it cannot be anything but a time ("7:30", "7 pm", "noon"), so English may drop "at". */
  plain: boolean;
  /** Already a 24-hour time whatever period the day carries ("noon", "midnight"). */
  fixed?: boolean;
}

const COLON_TIME = /^(\d{1,2}):(\d{2})$/;

export function colonTime(tokens: readonly string[], i: number): Clock[] {
  const match = COLON_TIME.exec(tokens[i] ?? "");
  if (match === null) return [];
  return [{ hour: Number(match[1]), minute: Number(match[2]), end: i + 1, plain: true }];
}

export const SECOND = 1000;
export const MINUTE = 60 * SECOND;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;
