/**
 * The compiling side of the matcher (`matcher.ts`): data files read and merged per language, rules checked for cycles,
 * slots resolved to built-ins or lists (with their value types checked) and templates turned into match nodes that
 * know how each option starts. Split out of `matcher.ts` so compiling is apart from vocabulary indexing
 * (`matcher_vocabulary.ts`) and matching (`matcher_match.ts`).
 *
 * @module
 */

import type { IntentName, IntentSlots } from "./intent.ts";
import { IntentDataError } from "./intent.ts";
import {
  type FixedSlots,
  type Language,
  LIST_SLOT_KEYS,
  readIntentFile,
  type SentenceSource,
  valueType,
} from "./intent_data.ts";
import {
  findRuleCycle,
  parseTemplate,
  type ResolvedNode,
  resolveTemplate,
  type SlotRef,
  type SourceAt,
  type TemplateNode,
} from "./template.ts";
import { tokenTexts } from "./tokens.ts";
import { type KindWord, TokenTrie } from "./matcher_vocabulary.ts";

/** What fills a slot, decided when the templates are compiled. */
export interface SlotMatcher {
  kind: "slot";
  /** Memo key: the same slot at the same position is read once per sentence. */
  id: string;
  type: "name" | "place" | "percent" | "number" | "when" | "message" | "id" | "list";
  key: keyof IntentSlots;
  language: Language;
  list?: TokenTrie<string | number>;
}

export type Node = ResolvedNode<SlotMatcher>;

/** How a sequence may start: the tokens it can begin with (undefined: anything, a slot may come first), and whether it
 * can match nothing at all. A group skips options that cannot start at the current token. */
export interface Start {
  first: Set<string> | undefined;
  empty: boolean;
}

/** A node ready for matching: groups know how each option starts. */
export type MatchNode =
  | { kind: "literal"; token: string }
  | SlotMatcher
  | { kind: "group"; options: MatchNode[][]; starts: Start[]; optional: boolean };

export interface CompiledTemplate {
  intent: IntentName;
  language: Language;
  where: string;
  order: number;
  nodes: MatchNode[];
  fixed: FixedSlots;
  /** Tokens the sentence must hold. */
  required: readonly string[];
  /** Of each of these, the sentence must hold one. */
  choices: readonly (readonly string[])[];
}

export function startOf(seq: readonly MatchNode[]): Start {
  const first = new Set<string>();
  for (const node of seq) {
    let start: Start;
    if (node.kind === "literal") start = { first: new Set([node.token]), empty: false };
    else if (node.kind === "slot") return { first: undefined, empty: false };
    else {
      const union = new Set<string>();
      let open = false;
      for (const option of node.starts) {
        if (option.first === undefined) open = true;
        else for (const token of option.first) union.add(token);
      }
      start = { first: open ? undefined : union, empty: node.optional || node.starts.some((option) => option.empty) };
    }
    if (start.first === undefined) return { first: undefined, empty: false };
    for (const token of start.first) first.add(token);
    if (!start.empty) return { first, empty: false };
  }
  return { first, empty: true };
}

/** Turns resolved nodes into match nodes; shared rule bodies stay shared through `memo`. */
export function toMatchNodes(nodes: readonly Node[], memo: Map<readonly Node[], MatchNode[]>): MatchNode[] {
  const known = memo.get(nodes);
  if (known) return known;
  const out = nodes.map((node): MatchNode => {
    if (node.kind !== "group") return node;
    const options = node.options.map((option) => toMatchNodes(option, memo));
    return { kind: "group", options, starts: options.map(startOf), optional: node.optional };
  });
  memo.set(nodes, out);
  return out;
}

/** The list whose words name kinds of device; a device name ending in one tells its kind. */
const KIND_LIST = "domain";

const BUILT_IN: Readonly<Record<string, Pick<SlotMatcher, "type" | "key">>> = {
  name: { type: "name", key: "name" },
  place: { type: "place", key: "place" },
  percent: { type: "percent", key: "percent" },
  temperature: { type: "number", key: "temperature" },
  kelvin: { type: "number", key: "kelvin" },
  when: { type: "when", key: "when" },
  message: { type: "message", key: "message" },
  id: { type: "id", key: "id" },
};

/** Lists with this name are not slots: their words may be left off the end of a device name. */
const NAME_SUFFIX_LIST = "name_suffix";

/** The lists, rules and templates of one language while compiling. */
interface LanguageData {
  rules: Map<string, { file: string; line: number; options: TemplateNode[][] }>;
  lists: Map<string, { file: string; line: number; entries: Map<string, { value: string | number; at: SourceAt }> }>;
}

function newLanguageData(): LanguageData {
  return { rules: new Map(), lists: new Map() };
}

function known(names: Iterable<string>, open: string, close: string): string {
  const sorted = [...names].sort();
  return sorted.length === 0 ? "none" : sorted.map((name) => `${open}${name}${close}`).join(", ");
}

/** Compiles one language's slots: built-ins and lists, with the value types of lists checked against their keys. */
function slotResolver(language: Language, data: LanguageData, tries: Map<string, TokenTrie<string | number>>) {
  return (ref: SlotRef, at: SourceAt): SlotMatcher => {
    const builtIn = Object.hasOwn(BUILT_IN, ref.name) ? BUILT_IN[ref.name] : undefined;
    if (builtIn !== undefined) {
      if (ref.key !== ref.name) {
        throw new IntentDataError(
          at.file,
          at.line,
          `built-in slot {${ref.name}} takes no ":${ref.key}"; write {${ref.name}}`,
        );
      }
      const id = builtIn.type === "when" ? `when:${language}` : builtIn.type;
      return { kind: "slot", id, ...builtIn, language };
    }
    const list = data.lists.get(ref.name);
    if (list === undefined || ref.name === NAME_SUFFIX_LIST) {
      throw new IntentDataError(
        at.file,
        at.line,
        `unknown slot {${ref.name}}; built-in slots: ${known(Object.keys(BUILT_IN), "{", "}")}; lists of ${language}: ${
          known([...data.lists.keys()].filter((name) => name !== NAME_SUFFIX_LIST), "{", "}")
        }`,
      );
    }
    const type = Object.hasOwn(LIST_SLOT_KEYS, ref.key) ? LIST_SLOT_KEYS[ref.key] : undefined;
    if (type === undefined) {
      throw new IntentDataError(
        at.file,
        at.line,
        `{${ref.name}${
          ref.key === ref.name ? "" : `:${ref.key}`
        }} fills no slot "${ref.key}"; write {${ref.name}:KEY} with KEY one of ${
          Object.keys(LIST_SLOT_KEYS).join(", ")
        }`,
      );
    }
    for (const [text, entry] of list.entries) {
      if (valueType(entry.value) !== type) {
        throw new IntentDataError(
          at.file,
          at.line,
          `{${ref.name}} fills "${ref.key}", which takes a ${type}, but list ${ref.name} maps "${text}" to ${
            JSON.stringify(entry.value)
          } (${entry.at.file}:${entry.at.line})`,
        );
      }
    }
    return {
      kind: "slot",
      id: `list:${language}:${ref.name}`,
      type: "list",
      key: ref.key as keyof IntentSlots,
      language,
      list: tries.get(ref.name)!,
    };
  };
}

/** A template sentence with where it was written. */
interface PlacedSentence {
  language: Language;
  file: string;
  source: SentenceSource;
}

/** Reads every file and merges rules and lists per language, in file order. */
export function gatherFiles(files: readonly { name: string; text: string }[]) {
  const byLanguage = new Map<Language, LanguageData>();
  const sentences: PlacedSentence[] = [];
  for (const file of files) {
    const data = readIntentFile(file.name, file.text);
    let lang = byLanguage.get(data.language);
    if (lang === undefined) byLanguage.set(data.language, lang = newLanguageData());
    for (const rule of data.rules) {
      const options = [parseTemplate(rule.text, { file: file.name, line: rule.line })];
      const existing = lang.rules.get(rule.name);
      if (existing) existing.options.push(...options);
      else lang.rules.set(rule.name, { file: file.name, line: rule.line, options });
    }
    for (const list of data.lists) {
      let target = lang.lists.get(list.name);
      if (target === undefined) {
        lang.lists.set(list.name, target = { file: file.name, line: list.line, entries: new Map() });
      }
      for (const entry of list.entries) {
        const key = tokenTexts(entry.text).join(" ");
        if (key === "") {
          throw new IntentDataError(
            file.name,
            entry.line,
            `list ${list.name}: ${JSON.stringify(entry.text)} has no words to match; remove it`,
          );
        }
        target.entries.set(key, { value: entry.value, at: { file: file.name, line: entry.line } });
      }
    }
    for (const source of data.sentences) sentences.push({ language: data.language, file: file.name, source });
  }
  return { byLanguage, sentences };
}

/** One language ready to compile its templates: slots, rules (checked, free of cycles), lists' extra uses. */
export interface CompiledLanguage {
  slot: ReturnType<typeof slotResolver>;
  rules: Map<string, TemplateNode[]>;
  cache: Map<string, Node[]>;
  suffixes: string[][];
  kindWords: KindWord[];
}

export function compileLanguage(language: Language, data: LanguageData): CompiledLanguage {
  const rules = new Map<string, TemplateNode[]>();
  for (const [name, rule] of data.rules) {
    rules.set(
      name,
      rule.options.length === 1 ? rule.options[0]! : [{ kind: "group", optional: false, options: rule.options }],
    );
  }
  const cycle = findRuleCycle(rules);
  if (cycle) {
    const first = data.rules.get(cycle[0]!)!;
    throw new IntentDataError(
      first.file,
      first.line,
      `rule cycle ${cycle.map((name) => `<${name}>`).join(" → ")}: a rule may not use itself, even through other rules`,
    );
  }
  const tries = new Map<string, TokenTrie<string | number>>();
  const suffixes: string[][] = [];
  const kindWords: KindWord[] = [];
  for (const [name, list] of data.lists) {
    const trie = new TokenTrie<string | number>();
    for (const [key, entry] of list.entries) trie.insert(key.split(" "), entry.value, true);
    tries.set(name, trie);
    if (name === NAME_SUFFIX_LIST) { for (const key of list.entries.keys()) suffixes.push(key.split(" ")); }
    if (name === KIND_LIST) {
      for (const [key, entry] of list.entries) kindWords.push({ tokens: key.split(" "), kind: String(entry.value) });
    }
  }
  const slot = slotResolver(language, data, tries);
  const cache = new Map<string, Node[]>();
  // Each rule is checked at its own line first, so an error inside a rule names the rule, not a template using it.
  for (const [name, rule] of data.rules) {
    const at = { file: rule.file, line: rule.line };
    if (!cache.has(name)) {
      cache.set(name, resolveTemplate<SlotMatcher>(rules.get(name)!, rules, (ref) => slot(ref, at), at, cache));
    }
  }
  return { slot, rules, cache, suffixes, kindWords };
}
