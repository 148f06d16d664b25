/**
 * The house's everyday commands without a model: a sentence the templates cover (`matcher.ts`) is resolved to the
 * devices' {@link HomeTarget}s (`resolve.ts`) and run as those devices' own tool calls, through the tool registry —
 * the same trust rules, the same owner's yes for what is sensitive. Reminders go through `schedule_create`,
 * `schedule_list` and `schedule_cancel`; the time and "what can you do" are answered here. Replies are in the
 * persona's language (`replies.ts`).
 *
 * The plan of a local command comes only from the words of the person who said it — no model, no tool result, no one
 * else's words decide what runs — so a local command is never tainted by what else the context holds.
 *
 * @module
 */

import type { Clock } from "../clock.ts";
import type { HomeAction, HomeTarget } from "../io/home_target.ts";
import type { ToolOutcome } from "../tools/tool.ts";
import { INTENT_NAMES, type IntentMatch, type IntentName, type Vocabulary, type When } from "./intent.ts";
import { MONTH_NAMES } from "../text/month_names.ts";
import type { IntentMatcher } from "./matcher.ts";
import { type Named, type Phrases, phrases, type ReplyLanguage, replyLanguage } from "./replies.ts";
import { nameKey, type Resolution, resolveTargets } from "./resolve.ts";
import { isoWithOffset, wallTime } from "../text/wall_time.ts";
import { everyCron, whenMoment } from "./zoned_time.ts";

/** Options of {@link LocalIntents}. */
export interface LocalIntentsOptions {
  matcher: IntentMatcher;
  /** The devices' targets now (`IOManager.homeTargets`). */
  targets: () => readonly HomeTarget[];
  clock: Clock;
  /** `daemon.timezone` ("" the system's). */
  timezone: string;
  /** The persona's text: replies are in its language. */
  persona: () => string;
  /** Whether some model can answer now (for "what can you do"). */
  modelUp: () => boolean;
}

/** What a message asks, understood locally. */
export interface Understood {
  match: IntentMatch;
  language: ReplyLanguage;
  /**
   * Whether the answer is certain enough to give with a model up (`prefer`): the things named were found, one way.
   * An unknown or ambiguous name is left to the model when one answers.
   */
  sure: boolean;
  /** What the names resolved to, for device intents. */
  resolution?: Resolution;
}

/** One turn's way to call a tool: the registry's `call` with the turn's context. */
export type CallTool = (tool: string, args: Record<string, unknown>) => Promise<ToolOutcome>;

/** The turn running a local intent: its tool calls and who asked. */
export interface LocalTurn {
  call: CallTool;
  sender: string;
  trust: "owner" | "household" | "guest";
}

const ACTIONS: Partial<Record<IntentName, HomeAction["kind"]>> = {
  HassTurnOn: "turn_on",
  HassTurnOff: "turn_off",
  HassToggle: "toggle",
  HassOpen: "open",
  HassClose: "close",
  HassLock: "lock",
  HassUnlock: "unlock",
};

/** The intents that act on or read the house's things: their names resolve to targets. */
const DEVICE_INTENTS: ReadonlySet<IntentName> = new Set(
  INTENT_NAMES.filter((name) => name.startsWith("Hass") && name !== "HassGetCurrentTime"),
);

/** Counters for `/api/status`. */
export interface LocalIntentCounts {
  matched: number;
  answered: number;
  unmatched: number;
}

/** Local intents: understanding and running. */
export class LocalIntents {
  #options: LocalIntentsOptions;
  #vocabulary: Vocabulary = { version: "", names: [], places: [] };
  #counts: LocalIntentCounts = { matched: 0, answered: 0, unmatched: 0 };

  /**
   * @example
   * ```ts
   * import { systemClock } from "../clock.ts";
   * import { EMBEDDED_INTENT_FILES } from "./embedded_intents.ts";
   * import { IntentMatcher } from "./matcher.ts";
   *
   * const local = new LocalIntents({
   *   matcher: IntentMatcher.compile(EMBEDDED_INTENT_FILES),
   *   targets: () => [],
   *   clock: systemClock,
   *   timezone: "Asia/Shanghai",
   *   persona: () => "你是管家阿福。",
   *   modelUp: () => false,
   * });
   * local.understand("现在几点", { open: false })?.match.intent; // "HassGetCurrentTime"
   * ```
   */
  constructor(options: LocalIntentsOptions) {
    this.#options = options;
  }

  /** Counters for `/api/status`. */
  counts(): LocalIntentCounts {
    return { ...this.#counts };
  }

  /**
   * What `text` asks, when a template covers it; with `open`, a sentence naming a device or place nobody knows is
   * understood too (to say which names are known). Undefined: not a command the templates know.
   */
  understand(text: string, options: { open: boolean }): Understood | undefined {
    const targets = this.#options.targets();
    const vocabulary = this.#vocabularyOf(targets);
    const { matcher } = this.#options;
    let matches = matcher.match(text, vocabulary);
    // An open match names something unknown; "what is the capital of France" is no question about a device, so a
    // question whose only words of substance are the unknown name is not taken.
    if (matches.length === 0 && options.open) matches = matcher.matchOpen(text, vocabulary).filter(substantial);
    const match = matches[0];
    if (!match) {
      this.#counts.unmatched++;
      return undefined;
    }
    this.#counts.matched++;
    const language = replyLanguage(this.#options.persona(), text);
    if (!DEVICE_INTENTS.has(match.intent)) return { match, language, sure: !match.unknown?.length };
    const { slots } = match;
    // "What's the temperature?" with no room: every reading in the house.
    const everywhere = match.intent === "HassGetState" && slots.quantity !== undefined && slots.name === undefined &&
      slots.place === undefined && !match.unknown?.length;
    const resolution: Resolution = everywhere
      ? { kind: "targets", targets: [...targets] }
      : resolveTargets(slots, targets, {
        name: match.unknownText?.name,
        place: match.unknownText?.place,
      });
    // By place alone ("close the garage") is answered locally when no model does; a model up hears it first.
    return { match, language, sure: resolution.kind === "targets" && !resolution.broad, resolution };
  }

  /** Runs what was understood and returns the reply. Each device action is one tool call through `turn.call`. */
  async run(understood: Understood, turn: LocalTurn): Promise<string> {
    this.#counts.answered++;
    const say = phrases(understood.language);
    const { match, resolution } = understood;
    if (resolution && resolution.kind !== "targets") return this.#unresolved(resolution, understood.language);
    const targets = resolution?.targets ?? [];
    const { slots } = match;
    const act = (action: HomeAction) =>
      this.#act(action, targets, turn, say, {
        language: understood.language,
        said: slots.name,
        broad: resolution?.broad === true,
      });
    switch (match.intent) {
      case "HassGetState":
        return this.#state(understood, targets, say);
      case "HassLightSet":
        if (slots.kelvin !== undefined) return await act({ kind: "color_temp", kelvin: slots.kelvin });
        return await act({ kind: "brightness", percent: slots.percent ?? NaN });
      case "HassSetPosition":
        return await act({ kind: "position", percent: slots.percent ?? NaN });
      case "HassClimateSetTemperature":
        return await act({ kind: "temperature", degrees: slots.temperature ?? NaN });
      case "HomedReminderCreate":
        return await this.#remind(understood, turn, say);
      case "HomedReminderList":
        return await this.#listReminders(understood.language, turn, say);
      case "HomedReminderCancel":
        return await this.#cancelReminder(understood, turn, say);
      case "HassGetCurrentTime":
        return say.time(this.#now(understood.language));
      case "HomedWhatCanYouDo":
        return say.capabilities(this.#options.modelUp(), this.#kinds());
      default: {
        const kind = ACTIONS[match.intent];
        if (!kind) throw new RangeError(`${match.intent} has no action`);
        return await act({ kind } as HomeAction);
      }
    }
  }

  #vocabularyOf(targets: readonly HomeTarget[]): Vocabulary {
    const names = [...new Set(targets.flatMap((target) => target.names))];
    const places = [...new Set(targets.flatMap((target) => target.places))];
    const version = `${names.join("\u0000")}\u0001${places.join("\u0000")}`;
    if (version !== this.#vocabulary.version) this.#vocabulary = { version, names, places };
    return this.#vocabulary;
  }

  #unresolved(resolution: Exclude<Resolution, { kind: "targets" }>, language: ReplyLanguage): string {
    const say = phrases(language);
    switch (resolution.kind) {
      case "ambiguous":
        return say.ambiguous(
          resolution.said,
          resolution.candidates.map((target) => nameIn(target, language, undefined, true)),
        );
      case "unknown_name":
        return say.unknownName(resolution.said, resolution.closest, this.#options.targets().length);
      case "unknown_place":
        return say.unknownPlace(resolution.said, resolution.closest);
      case "nothing": {
        const known = this.#options.targets().slice(0, 8).map((target) => nameIn(target, language, undefined).name);
        return say.nothingThere(resolution.what, resolution.place, known);
      }
      case "which":
        return say.whichOne(resolution.what);
    }
  }

  async #act(
    action: HomeAction,
    targets: readonly HomeTarget[],
    turn: LocalTurn,
    say: Phrases,
    how: { language: ReplyLanguage; said: string | undefined; broad: boolean },
  ): Promise<string> {
    const named = (target: HomeTarget, withPlace = false) => nameIn(target, how.language, how.said, withPlace);
    const plans = targets.map((target) => ({ target, plan: target.plan(action) }));
    const refused = plans.find((item) => item.plan && "refused" in item.plan);
    if (refused?.plan && "refused" in refused.plan) {
      const range = refused.plan.range;
      return range
        ? say.outOfRange(range.setting, range.value, range.min, range.max, range.unit)
        : say.failed(action, named(refused.target), refused.plan.refused);
    }
    const runnable = plans.filter((item) => item.plan !== undefined);
    if (runnable.length === 0) return say.cannot(action, named(targets[0]!));
    // A place alone that holds several things this could do: which one is a question, never a guess.
    if (how.broad && runnable.length > 1) {
      return say.ambiguous(targets[0]!.places[0] ?? "", runnable.map((item) => named(item.target, true)));
    }
    const done: Named[] = [];
    const lines: string[] = [];
    // Two things of one name in one reply ("台灯" in the study and the bedroom) are told apart by their place.
    const said = new Map<string, number>();
    for (const target of targets) said.set(named(target).name, (said.get(named(target).name) ?? 0) + 1);
    for (const { target, plan } of runnable) {
      if (!plan || "refused" in plan) continue;
      const outcome = await turn.call(plan.tool, plan.args);
      const who = named(target, (said.get(named(target).name) ?? 0) > 1);
      if (!outcome.ok) lines.push(say.failed(action, who, outcome.content.replace(/^Error: /, "")));
      else if (outcome.held) lines.push(say.waitsForOwner(action, who));
      else done.push(who);
    }
    return [...(done.length ? [say.done(action, done)] : []), ...lines].join("\n");
  }

  #state(understood: Understood, targets: readonly HomeTarget[], say: Phrases): string {
    const { slots } = understood.match;
    const named = (target: HomeTarget, withPlace = false) => nameIn(target, understood.language, slots.name, withPlace);
    const measures = slots.quantity;
    if (measures === "setpoint") {
      const readings = targets.flatMap((target) =>
        target.setpoint ? [{ target: named(target), value: `${target.setpoint.value}${target.setpoint.unit}` }] : []
      );
      return readings.length ? say.reading(slots.place, measures, readings) : say.noReading(measures, slots.place);
    }
    if (measures !== undefined) {
      const readings = targets.flatMap((target) => {
        if (target.measures !== measures) return [];
        const value = target.kind === "climate" ? target.reading : undefined;
        if (value) return [{ target: named(target), value: `${value.value}${value.unit}` }];
        if (target.kind === "climate" || target.state === undefined) return [];
        return [{ target: named(target), value: `${target.state}${target.unit ? ` ${target.unit}` : ""}` }];
      });
      return readings.length ? say.reading(slots.place, measures, readings) : say.noReading(measures, slots.place);
    }
    if (slots.state !== undefined && (slots.all || targets.length > 1)) {
      // "Which lights are on?": those in that state, by name and place.
      const asked = slots.state;
      const matching = targets.filter((target) => target.state !== undefined && sameState(asked, target.state));
      return say.inState(asked, slots.domain ?? "device", matching.map((target) => named(target, true)));
    }
    if (slots.state !== undefined && targets.length === 1) {
      const target = targets[0]!;
      const state = target.state ?? "unknown";
      return say.yesNo(sameState(slots.state, state), named(target), state);
    }
    return targets.map((target) => say.state(named(target, targets.length > 1), target.state ?? "unknown", target.unit))
      .join("\n");
  }

  async #remind(understood: Understood, turn: LocalTurn, say: Phrases): Promise<string> {
    const { when, message } = understood.match.slots;
    const text = message?.trim();
    if (!when || !text) throw new RangeError(`${understood.match.template}: a reminder needs {when} and {message}`);
    const { clock } = this.#options;
    const timezone = this.#timezone();
    const args: Record<string, unknown> = when.kind === "every"
      ? { text, cron: everyCron(when), timezone }
      : { text, at: isoWithOffset(whenMoment(when, clock.now(), timezone), timezone) };
    const outcome = await turn.call("schedule_create", args);
    if (!outcome.ok) return say.failed({ kind: "turn_on" }, { name: text }, outcome.content.replace(/^Error: /, ""));
    const created = parseJson(outcome.content);
    const next = typeof created?.next_run === "string" ? Date.parse(created.next_run) : NaN;
    const whenText = when.kind === "every"
      ? everyText(when, understood.language)
      : Number.isNaN(next)
      ? String(args.at)
      : this.#shortTime(next, understood.language);
    return say.reminderSet(whenText, text, String(created?.id ?? "?"));
  }

  async #schedules(turn: LocalTurn): Promise<Array<{ id: string; text: string; next: number }> | string> {
    const outcome = await turn.call("schedule_list", {});
    if (!outcome.ok) return outcome.content.replace(/^Error: /, "");
    const list = parseAny(outcome.content);
    if (!Array.isArray(list)) return "schedule_list gave no list";
    return list.filter((item): item is Record<string, unknown> => item !== null && typeof item === "object")
      .map((item) => ({
        id: String(item.id),
        text: String(item.text),
        next: typeof item.next_run === "string" ? Date.parse(item.next_run) : NaN,
      }));
  }

  async #listReminders(language: ReplyLanguage, turn: LocalTurn, say: Phrases): Promise<string> {
    const list = await this.#schedules(turn);
    if (typeof list === "string") return list;
    return say.reminders(
      list.map((item) => ({ id: item.id, text: item.text, when: this.#shortTime(item.next, language) })),
    );
  }

  async #cancelReminder(understood: Understood, turn: LocalTurn, say: Phrases): Promise<string> {
    const { id, message } = understood.match.slots;
    let target = id;
    if (target === undefined) {
      const list = await this.#schedules(turn);
      if (typeof list === "string") return list;
      const wanted = nameKey(message ?? "");
      const found = wanted === "" ? [] : list.filter((item) => nameKey(item.text).includes(wanted));
      if (found.length === 0) return say.noSuchReminder(message ?? "");
      if (found.length > 1) return say.severalReminders(message ?? "", found);
      target = found[0]!.id;
    }
    const outcome = await turn.call("schedule_cancel", { id: target });
    if (!outcome.ok) return say.noSuchReminder(target);
    const text = /\((.*)\)$/.exec(outcome.content)?.[1] ?? "";
    return say.reminderCancelled(target, text);
  }

  #timezone(): string {
    return this.#options.timezone || Intl.DateTimeFormat().resolvedOptions().timeZone;
  }

  #now(language: ReplyLanguage): string {
    return this.#shortTime(this.#options.clock.now(), language, true);
  }

  /** "12月4日 星期五 19:00" / "Fri 4 Dec 19:00". */
  #shortTime(ms: number, language: ReplyLanguage, withWeekday = false): string {
    if (Number.isNaN(ms)) return "?";
    const wall = wallTime(ms, this.#timezone());
    const clock = `${String(wall.hour).padStart(2, "0")}:${String(wall.minute).padStart(2, "0")}`;
    if (language === "zh") {
      const weekday = withWeekday ? ` 星期${"日一二三四五六"[wall.weekday]}` : "";
      return `${wall.month}月${wall.date}日${weekday} ${clock}`;
    }
    if (withWeekday) {
      // The time asked for: the whole date too ("what's the date today" is answered by it).
      const weekday = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"][wall.weekday];
      return `${clock}, ${weekday} ${wall.date} ${MONTH_NAMES[wall.month - 1]} ${wall.year}`;
    }
    return `${wall.date} ${MONTH_NAMES[wall.month - 1]!.slice(0, 3)} ${clock}`;
  }

  /** The kinds of thing the house has, for "what can you do". */
  #kinds(): string[] {
    return [...new Set(this.#options.targets().map((target) => target.kind))].sort();
  }
}

/**
 * A target as a reply names it: the name the person said, else its first name in the reply's language (Chinese
 * characters or not), else its first; with its place (likewise) when asked for.
 */
function nameIn(target: HomeTarget, language: ReplyLanguage, said: string | undefined, withPlace = false): Named {
  const inScript = (text: string) => /\p{Script=Han}/u.test(text) === (language === "zh");
  const inLanguage = (texts: readonly string[]) => texts.find(inScript) ?? texts[0];
  const spoken = said === undefined
    ? undefined
    : target.names.find((name) => nameKey(name) === nameKey(said) && inScript(name));
  const name = spoken ?? inLanguage(target.names) ?? target.id;
  const place = withPlace ? inLanguage(target.places) : undefined;
  return { name, ...(place ? { place } : {}) };
}

/** "每个工作日 07:00" / "every weekday at 07:00". */
function everyText(when: Extract<When, { kind: "every" }>, language: ReplyLanguage): string {
  const clock = `${String(when.hour).padStart(2, "0")}:${String(when.minute).padStart(2, "0")}`;
  const zh = language === "zh";
  const days = when.days === "daily"
    ? (zh ? "每天" : "every day")
    : when.days === "weekdays"
    ? (zh ? "每个工作日" : "every weekday")
    : when.days === "weekends"
    ? (zh ? "每个周末" : "every weekend day")
    : zh
    ? `每周${when.days.map((day) => "日一二三四五六"[day]).join("、")}`
    : `every ${when.days.map((day) => ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"][day]).join(", ")}`;
  return zh ? `${days} ${clock}` : `${days} at ${clock}`;
}

/** Whether an open match says more than an unknown name: a verb of its own, or a kind, a reading or a state. */
function substantial(match: IntentMatch): boolean {
  if (match.intent !== "HassGetState") return true;
  const { quantity, state, domain } = match.slots;
  return quantity !== undefined || state !== undefined || domain !== undefined;
}

/** Whether the state asked about ("locked", "open", "on") is the state the target is in. */
function sameState(asked: string, state: string): boolean {
  const same: Record<string, readonly string[]> = {
    on: ["on", "open", "playing", "heat", "cool", "auto", "heat_cool", "dry", "fan_only"],
    off: ["off", "closed", "idle", "paused", "standby"],
    open: ["open", "on", "opening", "unlocked"],
    closed: ["closed", "off", "closing", "locked"],
    locked: ["locked"],
    unlocked: ["unlocked", "open"],
  };
  return (same[asked] ?? [asked]).includes(state);
}

/** `text` as a JSON object, or undefined. */
function parseJson(text: string): Record<string, unknown> | undefined {
  const value = parseAny(text);
  return value !== null && typeof value === "object" && !Array.isArray(value)
    ? value as Record<string, unknown>
    : undefined;
}

function parseAny(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
