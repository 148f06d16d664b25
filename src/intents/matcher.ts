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
 * This file keeps `IntentMatcher`; compiling is in `matcher_compile.ts`, the vocabulary index in `matcher_vocabulary.ts`
 * and matching and scoring in `matcher_match.ts`.
 *
 * @module
 */

import type { IntentMatch, Vocabulary } from "./intent.ts";
import type { Language } from "./intent_data.ts";
import {
  type CompiledLanguage,
  type CompiledTemplate,
  compileLanguage,
  gatherFiles,
  type MatchNode,
  type Node,
  type SlotMatcher,
  toMatchNodes,
} from "./matcher_compile.ts";
import { compareScored, type MatchContext, matchKey, matchTemplate, MAX_STEPS, type Scored } from "./matcher_match.ts";
import { buildVocabularyIndex, type KindWord, type VocabularyIndex } from "./matcher_vocabulary.ts";
import { parseTemplate, requiredChoices, requiredTokens, resolveTemplate } from "./template.ts";
import { tokenize } from "./tokens.ts";

const VOCABULARY_CACHE = 4;

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
