/**
 * The public shapes of local intents: what the matcher recognises in a household command without a language model,
 * and what the part that resolves names to devices and executes them codes against.
 *
 * @module
 */

/** The intents the shipped templates cover (Home Assistant's names where it has one, `Homed…` for homed's own). */
export type IntentName =
  | "HassTurnOn"
  | "HassTurnOff"
  | "HassToggle" // 打开/关掉/open/close/turn on/off — 打开 also means open a cover
  | "HassOpen"
  | "HassClose" // explicit open/close (covers, garage, curtains, valves)
  | "HassLock"
  | "HassUnlock"
  | "HassLightSet" // brightness percent and/or colour temperature
  | "HassSetPosition" // cover position percent
  | "HassClimateSetTemperature"
  | "HassGetState" // read a state or a quantity
  | "HomedReminderCreate"
  | "HomedReminderList"
  | "HomedReminderCancel"
  | "HassGetCurrentTime"
  | "HomedWhatCanYouDo";

/** Every {@link IntentName}, in the order above; data files may name only these. */
export const INTENT_NAMES: readonly IntentName[] = [
  "HassTurnOn",
  "HassTurnOff",
  "HassToggle",
  "HassOpen",
  "HassClose",
  "HassLock",
  "HassUnlock",
  "HassLightSet",
  "HassSetPosition",
  "HassClimateSetTemperature",
  "HassGetState",
  "HomedReminderCreate",
  "HomedReminderList",
  "HomedReminderCancel",
  "HassGetCurrentTime",
  "HomedWhatCanYouDo",
];

/** When a reminder fires, as said; the executor turns it into an instant with its clock and time zone. */
export type When =
  | { kind: "in"; ms: number } // 二十分钟后, in 20 minutes, 10秒后, 一个半小时后
  | {
    kind: "at";
    /** 24-hour clock, already resolved with am/pm/晚上/下午. */
    hour: number;
    minute: number;
    /** "next": today if still ahead, else tomorrow (the executor decides with the clock). */
    day: { relative: 0 | 1 | 2 } | { weekday: number } | { month: number; date: number } | "next";
  }
  | {
    kind: "every";
    hour: number;
    minute: number;
    /** number[]: 0 = Sunday … 6 = Saturday, ascending. */
    days: "daily" | "weekdays" | "weekends" | number[];
  };

/** What a matched sentence said; only the slots it said are present. */
export interface IntentSlots {
  /** An entity/device name exactly as given in the {@link Vocabulary} (canonical string). */
  name?: string;
  /** An area/floor name exactly as given in the {@link Vocabulary}. */
  place?: string;
  /** Canonical kind from the `domain` list: light, switch, fan, cover, climate, lock, media_player, sensor, … */
  domain?: string;
  /** "all the lights", "所有的灯", "全部". */
  all?: boolean;
  /** Brightness / position, any number as said (the range is checked later: 300 stays 300). */
  percent?: number;
  /** Colour temperature; words like 暖光/warm white map to a kelvin in the data file. */
  kelvin?: number;
  /** Degrees for a thermostat. */
  temperature?: number;
  /** For HassGetState: temperature, humidity, … (from a list). */
  quantity?: string;
  /** For HassGetState yes/no questions: on, off, locked, unlocked, open, closed (from a list). */
  state?: string;
  when?: When;
  /** Reminder text: free text, trimmed, with the original casing and characters as the person wrote them. */
  message?: string;
  /** A schedule id like s-1a2b3c4d for HomedReminderCancel (lowercase). */
  id?: string;
}

/** One complete match of a sentence against one template. */
export interface IntentMatch {
  intent: IntentName;
  language: "zh" | "en";
  slots: IntentSlots;
  /** Where the template is: "zh.yaml:42" (file name and line), for logs and the turn inspector. */
  template: string;
  /** Slots whose text matched no vocabulary entry (open-vocabulary pass), e.g. ["name"]: "turn on the sauna". */
  unknown?: ("name" | "place")[];
  /** The raw text an unknown slot matched, e.g. { name: "sauna" }. */
  unknownText?: { name?: string; place?: string };
}

/** The names a household uses, given to every match; the matcher indexes them once per version. */
export interface Vocabulary {
  /** Changes whenever names or places change; the matcher caches its compiled lookups per version. */
  version: string | number;
  /** Entity names and aliases ("客厅灯", "Kitchen light", "车库门"). */
  names: readonly string[];
  /** Area and floor names and aliases ("客厅", "Living room", "downstairs", "二楼"). */
  places: readonly string[];
}

/**
 * A data file that cannot be used, thrown at start-up. The message starts with `file:line: ` and says what is wrong
 * and what to do.
 *
 * @example
 * ```ts
 * const error = new IntentDataError("zh.yaml", 12, 'unknown rule <turn_onn>; known: <turn_on>, <turn_off>');
 * error.message; // 'zh.yaml:12: unknown rule <turn_onn>; known: <turn_on>, <turn_off>'
 * ```
 */
export class IntentDataError extends Error {
  /** The data file's name, as given to the matcher. */
  readonly file: string;
  /** 1-based line in that file. */
  readonly line: number;

  constructor(file: string, line: number, detail: string) {
    super(`${file}:${line}: ${detail}`);
    this.name = "IntentDataError";
    this.file = file;
    this.line = line;
  }
}
