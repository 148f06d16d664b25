/**
 * What the butler says after a local intent, in Chinese or English: short, conclusion first, as the persona asks.
 * Every refusal names what was wrong and what to do.
 *
 * @module
 */

import type { HomeAction } from "../io/home_target.ts";

/** A language local replies are in. */
export type ReplyLanguage = "zh" | "en";

/** One thing named in a reply: its name, and its place when two share a name. */
export interface Named {
  name: string;
  place?: string | undefined;
}

/** The phrase book of one language. */
export interface Phrases {
  done(action: HomeAction, targets: readonly Named[]): string;
  waitsForOwner(action: HomeAction, target: Named): string;
  failed(action: HomeAction, target: Named, why: string): string;
  cannot(action: HomeAction, target: Named): string;
  outOfRange(setting: string, value: number, min: number, max: number, unit: string): string;
  unknownName(said: string, closest: readonly string[], known: number): string;
  unknownPlace(said: string, closest: readonly string[]): string;
  ambiguous(said: string, candidates: readonly Named[]): string;
  nothingThere(what: string, place: string | undefined, known: readonly string[]): string;
  /** Which of a kind are in a state: "开着的灯：A、B" / "On: A and B". */
  inState(state: string, what: string, targets: readonly Named[]): string;
  whichOne(what: string): string;
  state(target: Named, state: string, unit: string | undefined): string;
  yesNo(yes: boolean, target: Named, state: string): string;
  reading(place: string | undefined, measures: string, readings: readonly { target: Named; value: string }[]): string;
  noReading(measures: string, place: string | undefined): string;
  time(text: string): string;
  reminderSet(when: string, text: string, id: string): string;
  reminders(items: readonly { id: string; text: string; when: string }[]): string;
  reminderCancelled(id: string, text: string): string;
  noSuchReminder(said: string): string;
  severalReminders(said: string, items: readonly { id: string; text: string }[]): string;
  capabilities(modelUp: boolean, kinds: readonly string[]): string;
  offline(why: string): string;
  reminderFired(text: string): string;
}

const ZH_SETTINGS: Record<string, string> = {
  brightness: "亮度",
  position: "位置",
  temperature: "温度",
  "colour temperature": "色温",
};

const ZH_STATES: Record<string, string> = {
  on: "开着",
  off: "关着",
  locked: "已上锁",
  unlocked: "没上锁",
  open: "开着",
  opening: "正在打开",
  closed: "关着",
  closing: "正在关上",
  unavailable: "不可用",
  unknown: "状态未知",
  playing: "正在播放",
  paused: "已暂停",
  idle: "空闲",
  heat: "制热",
  cool: "制冷",
  auto: "自动",
};

const ZH_MEASURES: Record<string, string> = { temperature: "温度", humidity: "湿度", setpoint: "设定温度" };

/** The kinds a command can name (the `domain` list's values), as a reply says them. */
const ZH_KINDS: Record<string, string> = {
  light: "灯",
  switch: "开关",
  fan: "风扇",
  cover: "窗帘或门",
  climate: "空调",
  lock: "锁",
  media_player: "电视或音箱",
  sensor: "传感器",
  binary_sensor: "传感器",
  vacuum: "扫地机器人",
  device: "设备",
};

const EN_KINDS: Record<string, string> = {
  cover: "blind or door",
  climate: "thermostat",
  media_player: "TV or speaker",
  binary_sensor: "sensor",
};

function zhAction(action: HomeAction): string {
  switch (action.kind) {
    case "turn_on":
      return "打开";
    case "turn_off":
      return "关闭";
    case "toggle":
      return "切换";
    case "open":
      return "打开";
    case "close":
      return "关上";
    case "lock":
      return "锁上";
    case "unlock":
      return "开锁";
    case "brightness":
      return `把亮度调到 ${action.percent}%：`;
    case "color_temp":
      return `把色温调到 ${action.kelvin}K：`;
    case "position":
      return `把位置调到 ${action.percent}%：`;
    case "temperature":
      return `把温度设为 ${action.degrees}°：`;
  }
}

function enAction(action: HomeAction): string {
  switch (action.kind) {
    case "turn_on":
      return "turned on";
    case "turn_off":
      return "turned off";
    case "toggle":
      return "toggled";
    case "open":
      return "opened";
    case "close":
      return "closed";
    case "lock":
      return "locked";
    case "unlock":
      return "unlocked";
    case "brightness":
      return `set to ${action.percent}% brightness`;
    case "color_temp":
      return `set to ${action.kelvin} K`;
    case "position":
      return `set to ${action.percent}% open`;
    case "temperature":
      return `set to ${action.degrees}°`;
  }
}

function enVerb(action: HomeAction): string {
  const verbs: Record<HomeAction["kind"], string> = {
    turn_on: "turn on",
    turn_off: "turn off",
    toggle: "toggle",
    open: "open",
    close: "close",
    lock: "lock",
    unlock: "unlock",
    brightness: "set the brightness of",
    color_temp: "set the colour temperature of",
    position: "set the position of",
    temperature: "set the temperature of",
  };
  return verbs[action.kind];
}

const zhName = (target: Named) => target.place ? `${target.place}的${target.name}` : target.name;
const enName = (target: Named) => target.place ? `${target.name} (${target.place})` : target.name;

function enList(items: readonly string[]): string {
  if (items.length <= 1) return items.join("");
  return `${items.slice(0, -1).join(", ")} and ${items.at(-1)}`;
}

const ZH: Phrases = {
  done: (action, targets) => {
    const names = targets.map(zhName).join("、");
    const verb = zhAction(action);
    return verb.endsWith("：") ? `好的，已${verb}${names}。` : `好的，已${verb}${names}。`;
  },
  waitsForOwner: (action, target) =>
    `${zhAction(action).replace(/：$/, "")}${zhName(target)}需要主人确认，我已经去问了；主人同意后才会执行。`,
  failed: (action, target, why) => `没能${zhAction(action).replace(/：$/, "")}${zhName(target)}：${why}`,
  cannot: (action, target) => `${zhName(target)}不能${zhAction(action).replace(/：$/, "")}。`,
  outOfRange: (setting, value, min, max, unit) =>
    `没有执行：${ZH_SETTINGS[setting] ?? setting} ${value}${unit} 超出范围，只能在 ${min}–${max}${unit} 之间。`,
  unknownName: (said, closest, known) =>
    `我不知道叫「${said}」的设备。${
      closest.length ? `最接近的有：${closest.join("、")}。` : ""
    }（共认识 ${known} 个设备，可以说「打开客厅的灯」这样的话。）`,
  unknownPlace: (said, closest) =>
    `我不知道「${said}」这个地方。${closest.length ? `已知的有：${closest.join("、")}。` : ""}`,
  ambiguous: (said, candidates) =>
    `有 ${candidates.length} 个叫「${said}」的：${candidates.map(zhName).join("、")}。要哪一个？`,
  nothingThere: (what, place, known) =>
    `${place ?? "家里"}没有${ZH_KINDS[what] ?? what}。${known.length ? `认识的设备有：${known.join("、")}。` : ""}`,
  inState: (state, what, targets) =>
    targets.length
      ? `${ZH_STATES[state] ?? state}的${ZH_KINDS[what] ?? what}：${targets.map(zhName).join("、")}。`
      : `没有${ZH_STATES[state] ?? state}的${ZH_KINDS[what] ?? what}。`,
  whichOne: (what) =>
    `家里有好几个${ZH_KINDS[what] ?? what}，要哪一个？请说名字或房间，比如「打开客厅的${ZH_KINDS[what] ?? what}」。`,
  state: (target, state, unit) =>
    `${zhName(target)}现在${ZH_STATES[state] ?? `是 ${state}${unit ? ` ${unit}` : ""}`}。`,
  yesNo: (yes, target, state) => `${yes ? "是的" : "不是"}，${zhName(target)}现在${ZH_STATES[state] ?? state}。`,
  reading: (place, measures, readings) =>
    `${place ?? "家里"}现在${ZH_MEASURES[measures] ?? measures}：${
      readings.map((reading) => readings.length > 1 ? `${zhName(reading.target)} ${reading.value}` : reading.value)
        .join("，")
    }。`,
  noReading: (measures, place) => `${place ?? "家里"}没有能读${ZH_MEASURES[measures] ?? measures}的传感器。`,
  time: (text) => `现在是 ${text}。`,
  reminderSet: (when, text, id) => `好的，${when} 提醒你：${text}（编号 ${id}）。`,
  reminders: (items) =>
    items.length
      ? `你有 ${items.length} 个提醒：\n${items.map((item) => `- ${item.when}：${item.text}（${item.id}）`).join("\n")}`
      : "你现在没有提醒。",
  reminderCancelled: (id, text) => `好的，已取消提醒 ${id}：${text}。`,
  noSuchReminder: (said) => `没有找到「${said}」的提醒；说「我有哪些提醒」可以看全部。`,
  severalReminders: (said, items) =>
    `有 ${items.length} 个提醒和「${said}」有关：${
      items.map((item) => `${item.id}（${item.text}）`).join("、")
    }。请说「取消提醒 编号」。`,
  capabilities: (modelUp, kinds) =>
    `${modelUp ? "语言模型在线，什么都可以问我。" : "现在连不上语言模型，"}不联网也能做的：${
      [
        "开关和调节家里的设备（" + (kinds.join("、") || "暂无设备") + "）",
        "查询设备状态和温湿度",
        "设置、查看、取消提醒",
        "报时",
      ]
        .join("；")
    }。`,
  offline: (why) =>
    `现在连不上语言模型（${why}）。不用模型也能做的：开关灯和设备、调亮度/温度/窗帘、查状态、设提醒、报时——比如「打开客厅的灯」「二十分钟后提醒我关火」。`,
  reminderFired: (text) => `⏰ 提醒：${text}`,
};

const EN_MEASURES: Record<string, string> = {
  temperature: "temperature",
  humidity: "humidity",
  setpoint: "set temperature",
};

const EN: Phrases = {
  done: (action, targets) => `Done: ${enList(targets.map(enName))} ${enAction(action)}.`,
  waitsForOwner: (action, target) =>
    `To ${enVerb(action)} ${enName(target)} I need the owner's yes; I have asked, and it happens only if they agree.`,
  failed: (action, target, why) => `Could not ${enVerb(action)} ${enName(target)}: ${why}`,
  cannot: (action, target) => `${enName(target)} cannot be ${enAction(action).replace(/ to .*/, "")}.`,
  outOfRange: (setting, value, min, max, unit) =>
    `Not done: ${setting} ${value}${unit} is out of range; it goes from ${min} to ${max}${unit}.`,
  unknownName: (said, closest, known) =>
    `I don't know a device called "${said}".${
      closest.length ? ` Closest: ${closest.join(", ")}.` : ""
    } (I know ${known} ` +
    `devices; try "turn on the kitchen light".)`,
  unknownPlace: (said, closest) =>
    `I don't know a place called "${said}".${closest.length ? ` Known: ${closest.join(", ")}.` : ""}`,
  ambiguous: (said, candidates) =>
    `There are ${candidates.length} called "${said}": ${enList(candidates.map(enName))}. Which one?`,
  nothingThere: (what, place, known) =>
    `There is no ${EN_KINDS[what] ?? what} ${place ? `in ${place}` : "in the house"}.${
      known.length ? ` Devices I know: ${known.join(", ")}.` : ""
    }`,
  inState: (state, what, targets) =>
    targets.length
      ? `${state.charAt(0).toUpperCase()}${state.slice(1)}: ${enList(targets.map(enName))}.`
      : `No ${EN_KINDS[what] ?? what} is ${state}.`,
  whichOne: (what) =>
    `There are several ${EN_KINDS[what] ?? what}s; which one? Say its name or room, e.g. "turn on the kitchen ` +
    `${EN_KINDS[what] ?? what}".`,
  state: (target, state, unit) => `${enName(target)} is ${state}${unit ? ` ${unit}` : ""}.`,
  yesNo: (yes, target, state) => `${yes ? "Yes" : "No"}, ${enName(target)} is ${state}.`,
  reading: (place, measures, readings) =>
    `${place ? `${place} ` : ""}${EN_MEASURES[measures] ?? measures}: ${
      readings.map((reading) => readings.length > 1 ? `${enName(reading.target)} ${reading.value}` : reading.value)
        .join(", ")
    }.`,
  noReading: (measures, place) => `No sensor reads the ${measures}${place ? ` in ${place}` : ""}.`,
  time: (text) => `It is ${text}.`,
  reminderSet: (when, text, id) => `OK, I'll remind you ${when}: ${text} (${id}).`,
  reminders: (items) =>
    items.length
      ? `You have ${items.length} reminder${items.length === 1 ? "" : "s"}:\n${
        items.map((item) => `- ${item.when}: ${item.text} (${item.id})`).join("\n")
      }`
      : "You have no reminders.",
  reminderCancelled: (id, text) => `Cancelled reminder ${id}: ${text}.`,
  noSuchReminder: (said) => `I found no reminder about "${said}"; ask "list my reminders" to see them all.`,
  severalReminders: (said, items) =>
    `${items.length} reminders match "${said}": ${
      items.map((item) => `${item.id} (${item.text})`).join(", ")
    }. Say "cancel reminder <id>".`,
  capabilities: (modelUp, kinds) =>
    `${modelUp ? "The language model is up: ask me anything. " : "The language model is not answering right now. "}` +
    `Without it I can still: switch and set the house's devices (${kinds.join(", ") || "none yet"}); read their ` +
    `states, temperatures and humidity; set, list and cancel reminders; tell the time.`,
  offline: (why) =>
    `The language model is not answering (${why}). Without it I can still switch lights and devices, set ` +
    `brightness, temperature and blinds, read states, set reminders and tell the time — e.g. "turn on the kitchen ` +
    `light" or "remind me in 20 minutes to turn off the stove".`,
  reminderFired: (text) => `⏰ Reminder: ${text}`,
};

/**
 * The phrase book of `language`.
 *
 * @example
 * ```ts
 * phrases("en").done({ kind: "turn_off" }, [{ name: "Kitchen light" }]); // "Done: Kitchen light turned off."
 * phrases("zh").done({ kind: "turn_on" }, [{ name: "客厅灯" }]); // "好的，已打开客厅灯。"
 * ```
 */
export function phrases(language: ReplyLanguage): Phrases {
  return language === "zh" ? ZH : EN;
}

/**
 * The language replies are in: the persona's, or — for a persona written in both (as the embedded one is, and which
 * says to answer in the language one is addressed in) — the message's.
 *
 * @example
 * ```ts
 * replyLanguage("You are Alfred, the butler.", "打开灯"); // "en"
 * replyLanguage("你是管家阿福。You are Alfred.", "turn on the light"); // "en"
 * replyLanguage("你是管家阿福。You are Alfred.", "打开灯"); // "zh"
 * ```
 */
export function replyLanguage(persona: string, message: string): ReplyLanguage {
  const spoken = languagesOf(persona);
  if (spoken.length === 1) return spoken[0]!;
  return /\p{Script=Han}/u.test(message) ? "zh" : "en";
}

/**
 * The languages a text is written in: by the share of Chinese characters against Latin words (a Chinese sentence of
 * ten characters weighs like a few English words); a text with a fair share of each is in both.
 *
 * @example
 * ```ts
 * languagesOf("你是管家阿福。You are Alfred, the butler."); // ["zh", "en"]
 * languagesOf("You are Alfred (阿福), the butler of this household."); // ["en"]
 * ```
 */
export function languagesOf(text: string): ReplyLanguage[] {
  const cjk = (text.match(/\p{Script=Han}/gu) ?? []).length;
  const latin = (text.match(/[A-Za-z]+/g) ?? []).length;
  if (cjk === 0) return ["en"];
  if (latin === 0) return ["zh"];
  const share = cjk / (cjk + latin * 3);
  return share > 0.9 ? ["zh"] : share < 0.1 ? ["en"] : ["zh", "en"];
}
