/**
 * The local-intent matcher: compiles the data files (see `template.ts` for the template language and
 * `intent_data.ts` for the file layout) and matches a person's sentence against every template, token by token and
 * anchored at both ends, backtracking over alternatives, optional parts, lists, numbers, times and free text. It never
 * guesses: a sentence no template covers completely gives no match.
 *
 * Slots: `{name}` and `{place}` come from the {@link Vocabulary} (indexed once per version in a token trie, longest
 * match first). A name that ends with a word of a language's `name_suffix` list also answers to the rest when that is
 * unambiguous and is not itself a name or place: "Garage door" answers to "garage", 车库门 to 车库. `{percent}`,
 * `{temperature}`, `{kelvin}` are numbers (`numbers.ts`), `{when}` a time (`when.ts`), `{message}` free text and
 * `{id}` a schedule id. Any other `{list}` fills the slot key named like the list, or `{list:key}` the key given.
 *
 * Order of matches, best first: more literal tokens matched; fewer tokens taken by open-vocabulary slots; fewer taken
 * by free text; an intent that fits the kind the device name tells (客厅灯 is a light, Thermostat a climate device:
 * the last words of a name found in the `domain` list) before one that does not; a device name bound before none;
 * fewer slots; the template written first. One sentence can give several intents when only the device's kind tells
 * them apart ("set the thermostat to 22": HassClimateSetTemperature first, then HassLightSet and HassSetPosition); the
 * executor may take the first whose intent fits the resolved device.
 *
 * @module
 */

import type { IntentMatch, IntentName, IntentSlots, Vocabulary, When } from "./intent.ts";
import { IntentDataError } from "./intent.ts";
import {
  type FixedSlots,
  type Language,
  LIST_SLOT_KEYS,
  readIntentFile,
  type SentenceSource,
  valueType,
} from "./intent_data.ts";
import { parseNumber, parsePercent } from "./numbers.ts";
import {
  findRuleCycle,
  parseTemplate,
  requiredChoices,
  requiredTokens,
  type ResolvedNode,
  resolveTemplate,
  type SlotRef,
  type SourceAt,
  type TemplateNode,
} from "./template.ts";
import { type Token, tokenize, tokenTexts } from "./tokens.ts";
import { parseWhen } from "./when.ts";

/** A map from token sequences to values, walked from a position for every match, longest first. */
class TokenTrie<V> {
  readonly #root: TrieNode<V> = { next: new Map() };

  /** Sets the value at `tokens`; an existing value stays unless `replace`. */
  insert(tokens: readonly string[], value: V, replace: boolean): void {
    if (tokens.length === 0) return;
    const node = this.#nodeAt(tokens);
    if (replace || node.value === undefined) node.value = value;
  }

  /** Sets a fallback value, used only where no value is set (a name's short form never hides a full name). */
  insertFallback(tokens: readonly string[], value: V): void {
    if (tokens.length > 0) this.#nodeAt(tokens).fallback = value;
  }

  #nodeAt(tokens: readonly string[]): TrieNode<V> {
    let node = this.#root;
    for (const token of tokens) {
      let next = node.next.get(token);
      if (next === undefined) {
        next = { next: new Map() };
        node.next.set(token, next);
      }
      node = next;
    }
    return node;
  }

  has(tokens: readonly string[]): boolean {
    let node: TrieNode<V> | undefined = this.#root;
    for (const token of tokens) node = node?.next.get(token);
    return node?.value !== undefined;
  }

  matchesAt(tokens: readonly string[], from: number): { value: V; end: number }[] {
    const out: { value: V; end: number }[] = [];
    let node: TrieNode<V> | undefined = this.#root;
    for (let i = from; i < tokens.length; i++) {
      node = node.next.get(tokens[i]!);
      if (node === undefined) break;
      const value = node.value ?? node.fallback;
      if (value !== undefined) out.push({ value, end: i + 1 });
    }
    return out.reverse();
  }
}

interface TrieNode<V> {
  next: Map<string, TrieNode<V>>;
  value?: V;
  fallback?: V;
}

/** What fills a slot, decided when the templates are compiled. */
interface SlotMatcher {
  kind: "slot";
  /** Memo key: the same slot at the same position is read once per sentence. */
  id: string;
  type: "name" | "place" | "percent" | "number" | "when" | "message" | "id" | "list";
  key: keyof IntentSlots;
  language: Language;
  list?: TokenTrie<string | number>;
}

type Node = ResolvedNode<SlotMatcher>;

/** How a sequence may start: the tokens it can begin with (undefined: anything, a slot may come first), and whether it
 * can match nothing at all. A group skips options that cannot start at the current token. */
interface Start {
  first: Set<string> | undefined;
  empty: boolean;
}

/** A node ready for matching: groups know how each option starts. */
type MatchNode =
  | { kind: "literal"; token: string }
  | SlotMatcher
  | { kind: "group"; options: MatchNode[][]; starts: Start[]; optional: boolean };

interface CompiledTemplate {
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

function startOf(seq: readonly MatchNode[]): Start {
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
function toMatchNodes(nodes: readonly Node[], memo: Map<readonly Node[], MatchNode[]>): MatchNode[] {
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

/** One way a slot can be filled at a position. */
interface Candidate {
  end: number;
  value: string | number | When;
  /** Open-vocabulary text (matchOpen): the slot it stands for. */
  open?: "name" | "place";
  /** Tokens of free text or open text. */
  loose: number;
}

interface Binding {
  key: keyof IntentSlots;
  candidate: Candidate;
}

interface Scored {
  match: IntentMatch;
  literals: number;
  open: number;
  free: number;
  /** 1 when the bound name's own words tell a kind the intent does not act on ("set the thermostat to 22" as a
   * brightness), else 0. */
  mismatch: number;
  /** 0 when a device name is bound (the most specific target), else 1. */
  unnamed: number;
  slots: number;
  order: number;
}

/** The vocabulary's tries, built once per version. */
interface VocabularyIndex {
  names: TokenTrie<string>;
  places: TokenTrie<string>;
  /** The kind a name's last words tell (客厅灯 → light, Thermostat → climate), from the `domain` lists. */
  kinds: Map<string, string>;
}

/** A word of a `domain` list and the kind it names. */
interface KindWord {
  tokens: string[];
  kind: string;
}

/** The list whose words name kinds of device; a device name ending in one tells its kind. */
const KIND_LIST = "domain";

/** The kind of device an intent acts on, where it acts on one kind only. */
const INTENT_KINDS: Partial<Record<IntentName, string>> = {
  HassOpen: "cover",
  HassClose: "cover",
  HassLock: "lock",
  HassUnlock: "lock",
  HassLightSet: "light",
  HassSetPosition: "cover",
  HassClimateSetTemperature: "climate",
};

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
const SCHEDULE_ID = /^s-[0-9a-f]{8}$/;
/** Open-vocabulary text is at most this many tokens ("the big sauna upstairs", 卧室的加湿器). */
const MAX_OPEN_TOKENS = 8;
/** Work per sentence; a pathological user template stops here instead of stalling a turn. */
const MAX_STEPS = 500_000;
const MAX_RESULTS_PER_TEMPLATE = 256;
const VOCABULARY_CACHE = 4;

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
function gatherFiles(files: readonly { name: string; text: string }[]) {
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
interface CompiledLanguage {
  slot: ReturnType<typeof slotResolver>;
  rules: Map<string, TemplateNode[]>;
  cache: Map<string, Node[]>;
  suffixes: string[][];
  kindWords: KindWord[];
}

function compileLanguage(language: Language, data: LanguageData): CompiledLanguage {
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

/**
 * Matches household commands in Chinese and English against compiled sentence templates, without a language model.
 *
 * @example
 * ```ts
 * import { EMBEDDED_INTENT_FILES } from "./embedded_intents.ts";
 *
 * const matcher = IntentMatcher.compile(EMBEDDED_INTENT_FILES);
 * const vocabulary = { version: 1, names: ["客厅灯", "Kitchen light"], places: ["客厅", "Kitchen"] };
 * matcher.match("把客厅灯调到50%", vocabulary)[0];
 * // { intent: "HassLightSet", language: "zh", slots: { name: "客厅灯", percent: 50 }, template: "zh.yaml:…" }
 * matcher.match("今天天气怎么样", vocabulary); // []
 * matcher.matchOpen("turn on the sauna", vocabulary)[0]?.unknownText; // { name: "sauna" }
 * ```
 */
export class IntentMatcher {
  readonly #templates: CompiledTemplate[];
  readonly #suffixes: readonly (readonly string[])[];
  readonly #kindWords: readonly KindWord[];
  readonly #vocabularies = new Map<string | number, VocabularyIndex>();
  /** Counts for status: templates in all and per language, intents with at least one template, languages. */
  readonly counts: { templates: number; languages: string[]; perLanguage: Record<string, number>; intents: number };

  private constructor(
    templates: CompiledTemplate[],
    suffixes: readonly (readonly string[])[],
    kindWords: readonly KindWord[],
  ) {
    this.#templates = templates;
    this.#suffixes = suffixes;
    this.#kindWords = kindWords;
    const perLanguage: Record<string, number> = {};
    for (const template of templates) perLanguage[template.language] = (perLanguage[template.language] ?? 0) + 1;
    this.counts = {
      templates: templates.length,
      languages: Object.keys(perLanguage).sort(),
      perLanguage,
      intents: new Set(templates.map((template) => template.intent)).size,
    };
  }

  /**
   * Compiles the data files (embedded defaults first, then the user's files, which add templates and list values;
   * a rule defined again gains the new body as another alternative). Throws {@link IntentDataError}.
   *
   * @example
   * ```ts
   * const matcher = IntentMatcher.compile([{ name: "mine.yaml", text: 'language: en\nintents:\n  HassTurnOn:\n    - "wake up [the] {name}"\n' }]);
   * matcher.counts; // { templates: 1, languages: ["en"], perLanguage: { en: 1 }, intents: 1 }
   * ```
   */
  static compile(files: readonly { name: string; text: string }[]): IntentMatcher {
    const { byLanguage, sentences } = gatherFiles(files);
    const languages = new Map<Language, CompiledLanguage>();
    for (const [language, data] of byLanguage) languages.set(language, compileLanguage(language, data));
    const memo = new Map<readonly Node[], MatchNode[]>();
    const templates = sentences.map(({ language, file, source }, order): CompiledTemplate => {
      const at = { file, line: source.line };
      const { slot, rules, cache } = languages.get(language)!;
      const nodes = resolveTemplate<SlotMatcher>(
        parseTemplate(source.text, at),
        rules,
        (ref) => slot(ref, at),
        at,
        cache,
      );
      return {
        intent: source.intent,
        language,
        where: `${file}:${source.line}`,
        order,
        nodes: toMatchNodes(nodes, memo),
        fixed: source.slots,
        required: [...requiredTokens<SlotMatcher>(nodes)],
        choices: requiredChoices<SlotMatcher>(nodes),
      };
    });
    const compiled = [...languages.values()];
    const kindWords = compiled.flatMap((language) => language.kindWords);
    kindWords.sort((a, b) => b.tokens.length - a.tokens.length);
    return new IntentMatcher(templates, compiled.flatMap((language) => language.suffixes), kindWords);
  }

  /**
   * All complete matches (deduplicated, best first: more literal tokens matched = more specific first). Never throws.
   *
   * @example
   * ```ts
   * import { EMBEDDED_INTENT_FILES } from "./embedded_intents.ts";
   *
   * const matcher = IntentMatcher.compile(EMBEDDED_INTENT_FILES);
   * matcher.match("turn off all the lights downstairs", { version: 1, names: [], places: ["Downstairs"] })[0]?.slots;
   * // { all: true, domain: "light", place: "Downstairs" }
   * ```
   */
  match(text: string, vocabulary: Vocabulary): IntentMatch[] {
    return this.#run(text, vocabulary, false);
  }

  /**
   * Like {@link match}, but `{name}`/`{place}` also accept any text of up to 8 tokens (a second pass, for when match()
   * found nothing); such slots are listed in `unknown` with their text in `unknownText`.
   *
   * @example
   * ```ts
   * import { EMBEDDED_INTENT_FILES } from "./embedded_intents.ts";
   *
   * const matcher = IntentMatcher.compile(EMBEDDED_INTENT_FILES);
   * matcher.matchOpen("turn on the sauna", { version: 1, names: [], places: [] })[0];
   * // { intent: "HassTurnOn", …, slots: { name: "sauna" }, unknown: ["name"], unknownText: { name: "sauna" } }
   * ```
   */
  matchOpen(text: string, vocabulary: Vocabulary): IntentMatch[] {
    return this.#run(text, vocabulary, true);
  }

  #run(text: string, vocabulary: Vocabulary, open: boolean): IntentMatch[] {
    try {
      return this.#matchAll(text, vocabulary, open);
    } catch {
      return []; // a bug in a slot parser must not end the turn: no match means "ask the model"
    }
  }

  #vocabulary(vocabulary: Vocabulary): VocabularyIndex {
    const cached = this.#vocabularies.get(vocabulary.version);
    if (cached) return cached;
    const index = buildVocabularyIndex(vocabulary, this.#suffixes, this.#kindWords);
    if (this.#vocabularies.size >= VOCABULARY_CACHE) this.#vocabularies.delete(this.#vocabularies.keys().next().value!);
    this.#vocabularies.set(vocabulary.version, index);
    return index;
  }

  #matchAll(text: string, vocabulary: Vocabulary, open: boolean): IntentMatch[] {
    const tokens = tokenize(text);
    if (tokens.length === 0) return [];
    const words = tokens.map((token) => token.text);
    const present = new Set(words);
    const context: MatchContext = {
      text,
      tokens,
      words,
      vocabulary: this.#vocabulary(vocabulary),
      open,
      memo: new Map(),
      steps: 0,
    };
    const best = new Map<string, Scored>();
    for (const template of this.#templates) {
      if (!template.required.every((token) => present.has(token))) continue;
      if (!template.choices.every((choice) => choice.some((token) => present.has(token)))) continue;
      for (const scored of matchTemplate(template, context)) {
        const key = matchKey(scored.match);
        const seen = best.get(key);
        if (seen === undefined || compareScored(scored, seen) < 0) best.set(key, scored);
      }
      if (context.steps > MAX_STEPS) break;
    }
    return [...best.values()].sort(compareScored).map((scored) => scored.match);
  }
}

interface MatchContext {
  text: string;
  tokens: readonly Token[];
  words: readonly string[];
  vocabulary: VocabularyIndex;
  open: boolean;
  memo: Map<string, Candidate[]>;
  steps: number;
}

function compareScored(a: Scored, b: Scored): number {
  return b.literals - a.literals || a.open - b.open || a.free - b.free || a.mismatch - b.mismatch ||
    a.unnamed - b.unnamed ||
    a.slots - b.slots || a.order - b.order;
}

function matchKey(match: IntentMatch): string {
  const slots = Object.entries(match.slots).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return JSON.stringify([match.intent, match.language, slots, match.unknown ?? []]);
}

/** The original text of tokens [from, end), trimmed, as the person wrote it. */
function originalText(context: MatchContext, from: number, end: number): string {
  return context.text.slice(context.tokens[from]!.start, context.tokens[end - 1]!.end).trim();
}

function candidatesFor(slot: SlotMatcher, pos: number, context: MatchContext): Candidate[] {
  const key = `${slot.id}@${pos}`;
  const memo = context.memo.get(key);
  if (memo) return memo;
  const found = readCandidates(slot, pos, context);
  context.memo.set(key, found);
  return found;
}

function readCandidates(slot: SlotMatcher, pos: number, context: MatchContext): Candidate[] {
  const { words } = context;
  if (pos >= words.length) return [];
  switch (slot.type) {
    case "name":
    case "place": {
      const trie = slot.type === "name" ? context.vocabulary.names : context.vocabulary.places;
      const out: Candidate[] = trie.matchesAt(words, pos).map(({ value, end }) => ({ end, value, loose: 0 }));
      if (context.open) {
        const exact = new Set(out.map((candidate) => candidate.end));
        for (let end = pos + 1; end <= Math.min(words.length, pos + MAX_OPEN_TOKENS); end++) {
          if (!exact.has(end)) {
            out.push({ end, value: originalText(context, pos, end), open: slot.type, loose: end - pos });
          }
        }
      }
      return out;
    }
    case "percent":
      return parsePercent(words, pos).map(({ value, end }) => ({ end, value, loose: 0 }));
    case "number":
      return parseNumber(words, pos).map(({ value, end }) => ({ end, value, loose: 0 }));
    case "when":
      return parseWhen(words, pos, slot.language).map(({ when, end }) => ({ end, value: when, loose: 0 }));
    case "message": {
      const out: Candidate[] = [];
      for (let end = pos + 1; end <= words.length; end++) {
        out.push({ end, value: originalText(context, pos, end), loose: end - pos });
      }
      return out;
    }
    case "id":
      return SCHEDULE_ID.test(words[pos]!) ? [{ end: pos + 1, value: words[pos]!, loose: 0 }] : [];
    case "list":
      return slot.list!.matchesAt(words, pos).map(({ value, end }) => ({ end, value, loose: 0 }));
  }
}

/** A continuation: what is left of the enclosing sequences once the current one ends. */
interface Continuation {
  seq: readonly MatchNode[];
  index: number;
  next: Continuation | null;
}

/** Every complete match of one template, walking its nodes with backtracking. */
function matchTemplate(template: CompiledTemplate, context: MatchContext): Scored[] {
  const { words } = context;
  const bindings: Binding[] = [];
  const out: Scored[] = [];
  let literals = 0;

  const record = () => {
    const slots: Record<string, unknown> = { ...template.fixed };
    const unknown: ("name" | "place")[] = [];
    const unknownText: { name?: string; place?: string } = {};
    let open = 0;
    let free = 0;
    for (const { key, candidate } of bindings) {
      slots[key] = candidate.value;
      if (candidate.open) {
        unknown.push(candidate.open);
        unknownText[candidate.open] = candidate.value as string;
        open += candidate.loose;
      } else free += candidate.loose;
    }
    const match: IntentMatch = {
      intent: template.intent,
      language: template.language,
      slots: slots as IntentSlots,
      template: template.where,
    };
    if (unknown.length > 0) {
      match.unknown = unknown;
      match.unknownText = unknownText;
    }
    const name = typeof slots.name === "string" && unknown.length === 0 ? slots.name : undefined;
    const nameKind = name === undefined ? undefined : context.vocabulary.kinds.get(name);
    const intentKind = INTENT_KINDS[template.intent];
    const mismatch = nameKind !== undefined && intentKind !== undefined && nameKind !== intentKind ? 1 : 0;
    const unnamed = name === undefined ? 1 : 0;
    out.push({ match, literals, open, free, mismatch, unnamed, slots: bindings.length, order: template.order });
  };

  const step = (seq: readonly MatchNode[], index: number, pos: number, next: Continuation | null): void => {
    if (++context.steps > MAX_STEPS || out.length >= MAX_RESULTS_PER_TEMPLATE) return;
    if (index === seq.length) {
      if (next !== null) step(next.seq, next.index, pos, next.next);
      else if (pos === words.length) record();
      return;
    }
    const node = seq[index]!;
    switch (node.kind) {
      case "literal":
        if (words[pos] === node.token) {
          literals++;
          step(seq, index + 1, pos + 1, next);
          literals--;
        }
        return;
      case "group": {
        const after: Continuation = { seq, index: index + 1, next };
        const token = words[pos];
        node.options.forEach((option, k) => {
          const start = node.starts[k]!;
          if (!start.empty && start.first !== undefined && (token === undefined || !start.first.has(token))) return;
          step(option, 0, pos, after);
        });
        if (node.optional) step(seq, index + 1, pos, next);
        return;
      }
      case "slot":
        for (const candidate of candidatesFor(node, pos, context)) {
          const clash = bindings.find((binding) => binding.key === node.key);
          if (clash && JSON.stringify(clash.candidate.value) !== JSON.stringify(candidate.value)) continue;
          bindings.push({ key: node.key, candidate });
          step(seq, index + 1, candidate.end, next);
          bindings.pop();
        }
        return;
    }
  };

  step(template.nodes, 0, 0, null);
  return out;
}

/** Tries of the names and places, with short forms of names that end with a `name_suffix` word. */
function buildVocabularyIndex(
  vocabulary: Vocabulary,
  suffixes: readonly (readonly string[])[],
  kindWords: readonly KindWord[],
): VocabularyIndex {
  const kinds = new Map<string, string>();
  for (const name of vocabulary.names) {
    const tokens = tokenTexts(name);
    const word = kindWords.find((w) =>
      w.tokens.length <= tokens.length && w.tokens.every((t, k) => tokens[tokens.length - w.tokens.length + k] === t)
    );
    if (word) kinds.set(name, word.kind);
  }
  const names = new TokenTrie<string>();
  const places = new TokenTrie<string>();
  const nameTokens = vocabulary.names.map((name) => ({ name, tokens: tokenTexts(name) }));
  for (const { name, tokens } of nameTokens) names.insert(tokens, name, false);
  for (const place of vocabulary.places) places.insert(tokenTexts(place), place, false);

  const shortForms = new Map<string, { tokens: string[]; names: Set<string> }>();
  for (const { name, tokens } of nameTokens) {
    for (const suffix of suffixes) {
      const prefixLength = tokens.length - suffix.length;
      if (prefixLength < 1 || !suffix.every((token, k) => tokens[prefixLength + k] === token)) continue;
      const prefix = tokens.slice(0, prefixLength);
      // One CJK character (台 of 台灯) says too little to stand for a device.
      if (prefix.length < 2 && /[\p{Script=Han}]/u.test(prefix[0]!)) continue;
      if (names.has(prefix) || places.has(prefix)) continue;
      const key = prefix.join(" ");
      const entry = shortForms.get(key) ?? { tokens: prefix, names: new Set() };
      entry.names.add(name);
      shortForms.set(key, entry);
    }
  }
  for (const { tokens, names: owners } of shortForms.values()) {
    if (owners.size === 1) names.insertFallback(tokens, [...owners][0]!);
  }
  return { names, places, kinds };
}
