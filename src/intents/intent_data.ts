/**
 * Reading one intent data file (YAML) into checked parts that remember their lines: `language`, `rules`, `lists` and
 * `intents`. Everything wrong is an {@link IntentDataError} `file:line: …` saying what is wrong and what to do; the
 * template syntax itself is checked later by `template.ts`.
 *
 * npm:yaml reads the environment variables LOG_TOKENS and LOG_STREAM on every parse, so whoever reads these files
 * needs `--allow-env=LOG_TOKENS,LOG_STREAM` (the daemon has it, see `LIBRARY_ENV_NAMES` in `rights/permissions.ts`).
 *
 * @module
 */

import { isMap, isScalar, isSeq, LineCounter, type Node, type Pair, parseDocument } from "yaml";
import { INTENT_NAMES, IntentDataError, type IntentName, type IntentSlots } from "./intent.ts";

/** The languages a data file may be written in. */
export const LANGUAGES = ["zh", "en"] as const;

/** A language of {@link LANGUAGES}. */
export type Language = typeof LANGUAGES[number];

/** Slot keys a list may fill, with the type of value each takes. */
export const LIST_SLOT_KEYS: Readonly<Record<string, "string" | "number">> = {
  domain: "string",
  quantity: "string",
  state: "string",
  message: "string",
  percent: "number",
  kelvin: "number",
  temperature: "number",
};

/** Slot keys a template may fix (`slots:`), with their value types: the list keys and `all`. */
export const FIXED_SLOT_KEYS: Readonly<Record<string, "string" | "number" | "boolean">> = {
  ...LIST_SLOT_KEYS,
  all: "boolean",
};

/** Slot values a template fixes. */
export type FixedSlots = Pick<
  IntentSlots,
  "domain" | "quantity" | "state" | "message" | "all" | "percent" | "kelvin" | "temperature"
>;

/** An expansion rule as written. */
export interface RuleSource {
  name: string;
  text: string;
  line: number;
}

/** A list entry: the words and the value they stand for. */
export interface ListEntrySource {
  text: string;
  value: string | number;
  line: number;
}

/** A value list as written. */
export interface ListSource {
  name: string;
  line: number;
  entries: ListEntrySource[];
}

/** One template sentence of an intent, with the slot values it fixes. */
export interface SentenceSource {
  intent: IntentName;
  text: string;
  line: number;
  slots: FixedSlots;
}

/** One data file, checked. */
export interface IntentDataFile {
  file: string;
  language: Language;
  rules: RuleSource[];
  lists: ListSource[];
  sentences: SentenceSource[];
}

const TOP_KEYS = ["language", "rules", "lists", "intents"];
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Reads one file; every method that finds something wrong throws with the line. */
class FileReader {
  readonly #lines = new LineCounter();

  constructor(readonly file: string) {}

  lineCounter(): LineCounter {
    return this.#lines;
  }

  lineOf(node: Node | Pair | null | undefined): number {
    const target = node && "range" in node ? node : node && "key" in node ? node.key as Node | null : null;
    const offset = target?.range?.[0];
    return offset === undefined ? 1 : this.#lines.linePos(offset).line;
  }

  fail(line: number, detail: string): never {
    throw new IntentDataError(this.file, line, detail);
  }

  /** The string key of a map pair. */
  key(pair: Pair, where: string): string {
    if (!isScalar(pair.key) || (typeof pair.key.value !== "string" && typeof pair.key.value !== "number")) {
      this.fail(this.lineOf(pair), `${where}: a key must be plain text`);
    }
    return String(pair.key.value);
  }

  /** The pairs of `node`, which must be a map. */
  pairs(node: unknown, where: string, line: number): Pair[] {
    if (node === null || node === undefined) return [];
    if (!isMap(node)) this.fail(this.lineOf(node as Node) || line, `${where} must be a map of "key: value" lines`);
    return node.items as Pair[];
  }
}

/**
 * `typeof value`, as a string to compare with the slot types of {@link FIXED_SLOT_KEYS}.
 *
 * @example
 * ```ts
 * valueType(2700) === LIST_SLOT_KEYS.kelvin; // true
 * valueType("warm") === LIST_SLOT_KEYS.kelvin; // false
 * ```
 */
export function valueType(value: unknown): string {
  return typeof value;
}

function describe(node: unknown): string {
  if (isScalar(node)) return JSON.stringify(node.value);
  if (isMap(node)) return "a map";
  if (isSeq(node)) return "a list";
  return "nothing";
}

function readRules(reader: FileReader, node: unknown, line: number): RuleSource[] {
  return reader.pairs(node, "rules", line).map((pair) => {
    const name = reader.key(pair, "rules");
    const at = reader.lineOf(pair);
    if (!NAME.test(name)) reader.fail(at, `rule name ${JSON.stringify(name)}: use letters, digits and "_"`);
    if (!isScalar(pair.value) || typeof pair.value.value !== "string") {
      reader.fail(
        at,
        `rule <${name}> is ${describe(pair.value)}; write its template as a string, e.g. "(turn|switch) on"`,
      );
    }
    return { name, text: pair.value.value, line: at };
  });
}

function readLists(reader: FileReader, node: unknown, line: number): ListSource[] {
  return reader.pairs(node, "lists", line).map((pair) => {
    const name = reader.key(pair, "lists");
    const at = reader.lineOf(pair);
    if (!NAME.test(name)) reader.fail(at, `list name ${JSON.stringify(name)}: use letters, digits and "_"`);
    const entries = reader.pairs(pair.value, `list ${name}`, at).map((entry): ListEntrySource => {
      const text = reader.key(entry, `list ${name}`);
      const entryLine = reader.lineOf(entry);
      const value = isScalar(entry.value) ? entry.value.value : undefined;
      if (typeof value !== "string" && typeof value !== "number") {
        reader.fail(
          entryLine,
          `list ${name}: ${JSON.stringify(text)} maps to ${
            describe(entry.value)
          }; a list value must be a string or a number (quote words like "true" or "null")`,
        );
      }
      return { text, value, line: entryLine };
    });
    return { name, line: at, entries };
  });
}

function readFixedSlots(reader: FileReader, node: unknown, line: number): FixedSlots {
  const slots: Record<string, string | number | boolean> = {};
  for (const pair of reader.pairs(node, "slots", line)) {
    const key = reader.key(pair, "slots");
    const at = reader.lineOf(pair);
    const type = Object.hasOwn(FIXED_SLOT_KEYS, key) ? FIXED_SLOT_KEYS[key] : undefined;
    if (type === undefined) {
      reader.fail(
        at,
        `slots: unknown slot ${JSON.stringify(key)}; a template may fix: ${Object.keys(FIXED_SLOT_KEYS).join(", ")}`,
      );
    }
    const value = isScalar(pair.value) ? pair.value.value : undefined;
    if (valueType(value) !== type) {
      reader.fail(at, `slots: ${key} is ${describe(pair.value)}; it must be a ${type}`);
    }
    slots[key] = value as string | number | boolean;
  }
  return slots as FixedSlots;
}

function readSentences(reader: FileReader, node: unknown, line: number): SentenceSource[] {
  const out: SentenceSource[] = [];
  for (const pair of reader.pairs(node, "intents", line)) {
    const name = reader.key(pair, "intents");
    const at = reader.lineOf(pair);
    if (!(INTENT_NAMES as readonly string[]).includes(name)) {
      reader.fail(at, `unknown intent ${JSON.stringify(name)}; known intents: ${INTENT_NAMES.join(", ")}`);
    }
    const intent = name as IntentName;
    if (!isSeq(pair.value)) {
      reader.fail(at, `intent ${intent} is ${describe(pair.value)}; give it a list of sentences ("- …" lines)`);
    }
    for (const item of pair.value.items) {
      const itemLine = reader.lineOf(item as Node);
      if (isScalar(item) && typeof item.value === "string") {
        out.push({ intent, text: item.value, line: itemLine, slots: {} });
        continue;
      }
      if (!isMap(item)) {
        reader.fail(
          itemLine,
          `intent ${intent}: ${describe(item)} is not a sentence; write a string or { sentence, slots }`,
        );
      }
      let sentences: { text: string; line: number }[] = [];
      let slots: FixedSlots = {};
      for (const field of item.items as Pair[]) {
        const key = reader.key(field, intent);
        const fieldLine = reader.lineOf(field);
        if (key === "sentence" || key === "sentences") {
          const values = isSeq(field.value) ? field.value.items : [field.value];
          sentences = sentences.concat(values.map((value) => {
            const valueLine = reader.lineOf(value as Node) || fieldLine;
            if (!isScalar(value) || typeof value.value !== "string") {
              reader.fail(valueLine, `intent ${intent}: ${key} holds ${describe(value)}; a sentence is a string`);
            }
            return { text: value.value, line: valueLine };
          }));
        } else if (key === "slots") slots = readFixedSlots(reader, field.value, fieldLine);
        else {reader.fail(
            fieldLine,
            `intent ${intent}: unknown field ${JSON.stringify(key)}; allowed: sentence, sentences, slots`,
          );}
      }
      if (sentences.length === 0) reader.fail(itemLine, `intent ${intent}: an entry without "sentence" or "sentences"`);
      for (const sentence of sentences) out.push({ intent, text: sentence.text, line: sentence.line, slots });
    }
  }
  return out;
}

/**
 * Reads and checks one data file. Throws {@link IntentDataError} (`file:line: …`) for a YAML syntax error, an unknown
 * top-level key, a missing or unknown `language`, an unknown intent, a list value that is not a string or number, or a
 * bad fixed slot.
 *
 * @example
 * ```ts
 * const data = readIntentFile("my.yaml", 'language: en\nintents:\n  HassTurnOn:\n    - "wake up the {name}"\n');
 * data.sentences; // [{ intent: "HassTurnOn", text: "wake up the {name}", line: 4, slots: {} }]
 * ```
 */
export function readIntentFile(file: string, text: string): IntentDataFile {
  const reader: FileReader = new FileReader(file);
  const doc = parseDocument(text, { lineCounter: reader.lineCounter(), uniqueKeys: true });
  const error = doc.errors[0];
  if (error) {
    const detail = error.message.split("\n")[0]!.replace(/ at line \d+, column \d+:?$/, "");
    reader.fail(error.linePos?.[0].line ?? 1, `YAML syntax: ${detail}`);
  }
  const root = doc.contents;
  if (!isMap(root)) {
    reader.fail(1, 'an intent file is a map with "language:" and "intents:" (and optionally "rules:", "lists:")');
  }
  const parts = new Map<string, Pair>();
  for (const pair of root.items as Pair[]) {
    const key = reader.key(pair, "top level");
    if (!TOP_KEYS.includes(key)) {
      reader.fail(reader.lineOf(pair), `unknown key ${JSON.stringify(key)}; allowed: ${TOP_KEYS.join(", ")}`);
    }
    parts.set(key, pair);
  }
  const languagePair = parts.get("language");
  if (languagePair === undefined) reader.fail(1, `"language:" is missing; write language: ${LANGUAGES.join(" or ")}`);
  const language = isScalar(languagePair.value) ? languagePair.value.value : undefined;
  if (!(LANGUAGES as readonly unknown[]).includes(language)) {
    reader.fail(
      reader.lineOf(languagePair),
      `language is ${describe(languagePair.value)}; allowed: ${LANGUAGES.join(", ")}`,
    );
  }
  const lineOf = (key: string) => reader.lineOf(parts.get(key));
  return {
    file,
    language: language as Language,
    rules: readRules(reader, parts.get("rules")?.value, lineOf("rules")),
    lists: readLists(reader, parts.get("lists")?.value, lineOf("lists")),
    sentences: readSentences(reader, parts.get("intents")?.value, lineOf("intents")),
  };
}
