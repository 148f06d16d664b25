/**
 * The sentence-template language of homed's local intents (in the spirit of Home Assistant's hassil), parsed into
 * token-level nodes the matcher walks.
 *
 * ## Syntax
 *
 * - Literal words: `turn on the`, `打开`. They are normalised and tokenised exactly like the person's sentence (see
 *   `tokens.ts`): lowercase, punctuation dropped, every CJK character one token, so `打开` is two tokens and spaces
 *   between CJK characters do not matter.
 * - Alternatives `(a|b|c)`: exactly one of them. Optional `[x]` or `[a|b]`: one of them or nothing. They nest.
 * - Slots `{name}`: a value taken from the sentence; `{list:key}` stores a list's value under another slot key
 *   (`{kelvin_word:kelvin}`). Built-in slots: `{name}`, `{place}` (the household's names and areas), `{percent}`,
 *   `{temperature}`, `{kelvin}` (numbers), `{when}` (a time for a reminder), `{message}` (free text, one token or
 *   more), `{id}` (a schedule id `s-` + 8 hex digits). Any other slot is a list of the same language's `lists:`.
 * - Expansion rules `<turn_on>`: the body of a rule of the same language's `rules:`, as if written in place.
 * - Parts of an English word: `light[s]`, `turn(ed|ing)`: a group written against a Latin word with no space between
 *   joins it (only groups of plain words can be joined). Two groups side by side are two words: `(a|b)(c|d)`.
 * - A `|` outside any group separates alternatives of the whole sentence.
 *
 * Errors (an unclosed or unexpected bracket, an empty alternative, a bad slot or rule name) are
 * {@link IntentDataError}s naming the file and line.
 *
 * @module
 */

import { IntentDataError } from "./intent.ts";
import { tokenTexts } from "./tokens.ts";

/** One token that must be there. */
export interface LiteralNode {
  kind: "literal";
  token: string;
}

/** One of `options` (a sequence each), or nothing when `optional`. */
export interface GroupNode<Slot = SlotRef> {
  kind: "group";
  options: TemplateNode<Slot>[][];
  optional: boolean;
}

/** A slot as written: `{list}` or `{list:key}` (`key` is `list` when not given). */
export interface SlotRef {
  kind: "slot";
  name: string;
  key: string;
}

/** A reference to an expansion rule, `<name>`. */
export interface RuleNode {
  kind: "rule";
  name: string;
}

/** A parsed template node; after {@link resolveTemplate} rules are gone and slots carry what the caller made of them. */
export type TemplateNode<Slot = SlotRef> = LiteralNode | GroupNode<Slot> | Slot | RuleNode;

/** A node with its rules expanded and its slots resolved to `Slot`. */
export type ResolvedNode<Slot extends { kind: "slot" }> = LiteralNode | ResolvedGroup<Slot> | Slot;

/** A group whose options are resolved. */
export interface ResolvedGroup<Slot extends { kind: "slot" }> {
  kind: "group";
  options: ResolvedNode<Slot>[][];
  optional: boolean;
}

/** Where a template was written, for errors. */
export interface SourceAt {
  file: string;
  line: number;
}

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const OPENERS: Readonly<Record<string, string>> = { "(": ")", "[": "]", "{": "}", "<": ">" };
const LATIN_WORD = /[\p{L}\p{N}]/u;
const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;

function isLatinWordChar(c: string | undefined): boolean {
  return c !== undefined && LATIN_WORD.test(c) && !CJK.test(c);
}

/** A raw item before tokenising: text keeps its characters so word parts can be joined. */
type RawItem =
  | { kind: "text"; text: string }
  | { kind: "group"; options: RawItem[][]; optional: boolean; open: number }
  | SlotRef
  | RuleNode;

class TemplateParser {
  #pos = 0;

  constructor(readonly source: string, readonly at: SourceAt) {}

  fail(detail: string): never {
    throw new IntentDataError(this.at.file, this.at.line, `${detail} in template ${JSON.stringify(this.source)}`);
  }

  /** Alternatives until `close` (or the end when `close` is undefined). */
  alternatives(close: string | undefined, open: number): RawItem[][] {
    const options: RawItem[][] = [[]];
    for (;;) {
      const c = this.source[this.#pos];
      if (c === undefined) {
        if (close !== undefined) {
          this.fail(`unclosed "${this.source[open]}" at column ${open + 1}: add a "${close}"`);
        }
        return options;
      }
      if (c === close) {
        this.#pos++;
        return options;
      }
      if (c === ")" || c === "]" || c === "}" || c === ">") {
        this.fail(
          `unexpected "${c}" at column ${
            this.#pos + 1
          }: nothing is open for it to close; remove it or add its opening bracket`,
        );
      }
      if (c === "|") {
        this.#pos++;
        options.push([]);
        continue;
      }
      options[options.length - 1]!.push(this.item());
    }
  }

  item(): RawItem {
    const start = this.#pos;
    const c = this.source[start]!;
    if (c === "(" || c === "[") {
      this.#pos++;
      const options = this.alternatives(OPENERS[c], start);
      options.forEach((option) => {
        if (!option.some(hasContent)) {
          this.fail(
            `empty alternative in the group at column ${
              start + 1
            }: every "|"-separated part needs words (for an optional part use "[…]")`,
          );
        }
      });
      return { kind: "group", options, optional: c === "[", open: start };
    }
    if (c === "{" || c === "<") {
      const close = OPENERS[c]!;
      const end = this.source.indexOf(close, start + 1);
      if (end < 0) this.fail(`unclosed "${c}" at column ${start + 1}: add "${close}"`);
      const inside = this.source.slice(start + 1, end).trim();
      this.#pos = end + 1;
      if (c === "<") {
        if (!NAME.test(inside)) this.fail(`bad rule name <${inside}>: use letters, digits and "_"`);
        return { kind: "rule", name: inside };
      }
      const [name = "", key, ...rest] = inside.split(":").map((part) => part.trim());
      if (!NAME.test(name) || rest.length > 0 || (key !== undefined && !NAME.test(key))) {
        this.fail(`bad slot {${inside}}: write {list} or {list:key} with letters, digits and "_"`);
      }
      return { kind: "slot", name, key: key ?? name };
    }
    let end = start;
    while (end < this.source.length && !"()[]{}<>|".includes(this.source[end]!)) end++;
    this.#pos = end;
    return { kind: "text", text: this.source.slice(start, end) };
  }
}

function hasContent(item: RawItem): boolean {
  return item.kind !== "text" || tokenTexts(item.text).length > 0;
}

/** Every string a group of plain text can stand for, or undefined when it holds a slot or a rule. */
function groupStrings(item: RawItem): string[] | undefined {
  if (item.kind === "text") return [item.text];
  if (item.kind !== "group") return undefined;
  const out: string[] = item.optional ? [""] : [];
  for (const option of item.options) {
    let strings = [""];
    for (const part of option) {
      const parts = groupStrings(part);
      if (parts === undefined) return undefined;
      strings = strings.flatMap((head) => parts.map((tail) => head + tail));
    }
    out.push(...strings);
  }
  return out;
}

/** The characters a group may put at its start or end. */
function edgeChars(item: RawItem, side: "start" | "end"): string[] {
  const strings = groupStrings(item) ?? [];
  return strings.map((s) => (side === "start" ? s[0] : s[s.length - 1])).filter((c): c is string => c !== undefined);
}

/** Whether `left` and `right`, written with no space between, make one English word (`light[s]`). */
function joined(left: RawItem, right: RawItem): boolean {
  if (left.kind === "text" && right.kind === "group") {
    return isLatinWordChar(left.text[left.text.length - 1]) && edgeChars(right, "start").some(isLatinWordChar);
  }
  if (left.kind === "group" && right.kind === "text") {
    return isLatinWordChar(right.text[0]) && edgeChars(left, "end").some(isLatinWordChar);
  }
  return false;
}

const MAX_JOINED = 64;

/** Turns raw items into token nodes, joining word parts into alternatives of whole words. */
function toNodes(items: readonly RawItem[], parser: TemplateParser): TemplateNode[] {
  const out: TemplateNode[] = [];
  let i = 0;
  while (i < items.length) {
    let j = i;
    while (j + 1 < items.length && joined(items[j]!, items[j + 1]!)) j++;
    if (j > i) {
      let strings = [""];
      for (const item of items.slice(i, j + 1)) {
        const parts = groupStrings(item);
        if (parts === undefined) parser.fail("a word joined to a group holding a slot or a rule (put a space between)");
        strings = strings.flatMap((head) => parts.map((tail) => head + tail));
        if (strings.length > MAX_JOINED) parser.fail(`a joined word with more than ${MAX_JOINED} spellings`);
      }
      // The text around a joined word still carries its other words: "turn on the light[s]" → "turn on the" + word.
      const options = [...new Set(strings)].map((s) => tokenTexts(s));
      const nonEmpty = options.filter((tokens) => tokens.length > 0);
      const optional = nonEmpty.length < options.length;
      out.push(...wordsAsGroup(nonEmpty, optional));
      i = j + 1;
      continue;
    }
    const item = items[i]!;
    if (item.kind === "text") {
      for (const token of tokenTexts(item.text)) out.push({ kind: "literal", token });
    } else if (item.kind === "group") {
      out.push({
        kind: "group",
        optional: item.optional,
        options: item.options.map((option) => toNodes(option, parser)),
      });
    } else out.push(item);
    i++;
  }
  return out;
}

/** Alternatives of token sequences as one group node, sharing the tokens all of them start or end with. */
function wordsAsGroup(options: string[][], optional: boolean): TemplateNode[] {
  if (options.length === 1 && !optional) return options[0]!.map((token) => ({ kind: "literal", token }));
  // Leading words every spelling shares stay plain literals ("turn on the light[s]" keeps "turn on the" required).
  const prefix: LiteralNode[] = [];
  if (!optional) {
    while (options.every((o) => o.length > prefix.length + 1 && o[prefix.length] === options[0]![prefix.length])) {
      prefix.push({ kind: "literal", token: options[0]![prefix.length]! });
    }
  }
  const rest = options.map((o) => o.slice(prefix.length).map((token): TemplateNode => ({ kind: "literal", token })));
  return [...prefix, { kind: "group", optional, options: rest }];
}

/**
 * Parses one template (or a rule's body) into nodes. Throws {@link IntentDataError} naming `at` when the syntax is
 * wrong.
 *
 * @example
 * ```ts
 * parseTemplate("<turn_on> [the] light[s]", { file: "en.yaml", line: 3 });
 * // [{ kind: "rule", name: "turn_on" }, { kind: "group", optional: true, options: [[the]] },
 * //  { kind: "group", optional: false, options: [[light], [lights]] }]
 * parseTemplate("打开(客厅", { file: "zh.yaml", line: 9 }); // IntentDataError: zh.yaml:9: unclosed "(" …
 * ```
 */
export function parseTemplate(source: string, at: SourceAt): TemplateNode[] {
  const parser = new TemplateParser(source, at);
  const options = parser.alternatives(undefined, 0);
  if (options.length === 1) {
    const nodes = toNodes(options[0]!, parser);
    if (nodes.length === 0) parser.fail("empty template: write the words it should match");
    return nodes;
  }
  options.forEach((option) => {
    if (!option.some(hasContent)) parser.fail('empty alternative: a "|" with no words on one side');
  });
  return [{ kind: "group", optional: false, options: options.map((option) => toNodes(option, parser)) }];
}

/**
 * The rule references and slots a node list uses, outside in.
 *
 * @example
 * ```ts
 * const nodes = parseTemplate("<turn_on> [the] {name}", { file: "en.yaml", line: 1 });
 * [...references(nodes)]; // [{ kind: "rule", name: "turn_on" }, { kind: "slot", name: "name", key: "name" }]
 * ```
 */
export function* references(nodes: readonly TemplateNode[]): Generator<RuleNode | SlotRef> {
  for (const node of nodes) {
    if (node.kind === "group") { for (const option of node.options) yield* references(option); }
    else if (node.kind === "rule" || node.kind === "slot") yield node;
  }
}

/**
 * The first cycle among rules (`<a>` uses `<b>` uses `<a>`) as the chain of names, or undefined.
 *
 * @example
 * ```ts
 * const rules = new Map([["a", parseTemplate("<b>", { file: "x.yaml", line: 1 })],
 *   ["b", parseTemplate("x <a>", { file: "x.yaml", line: 2 })]]);
 * findRuleCycle(rules); // ["a", "b", "a"]
 * ```
 */
export function findRuleCycle(rules: ReadonlyMap<string, readonly TemplateNode[]>): string[] | undefined {
  const state = new Map<string, "visiting" | "done">();
  const path: string[] = [];
  const visit = (name: string): string[] | undefined => {
    const seen = state.get(name);
    if (seen === "done") return undefined;
    if (seen === "visiting") return [...path.slice(path.indexOf(name)), name];
    const body = rules.get(name);
    if (body === undefined) return undefined;
    state.set(name, "visiting");
    path.push(name);
    for (const ref of references(body)) {
      if (ref.kind !== "rule") continue;
      const cycle = visit(ref.name);
      if (cycle) return cycle;
    }
    path.pop();
    state.set(name, "done");
    return undefined;
  };
  for (const name of rules.keys()) {
    const cycle = visit(name);
    if (cycle) return cycle;
  }
  return undefined;
}

/**
 * Expands rules in place (their bodies become groups) and turns every slot into what `slot` makes of it. Throws
 * {@link IntentDataError} at `at` for an unknown rule, listing the known ones; `slot` throws for unknown slots. Rules
 * must be free of cycles ({@link findRuleCycle}).
 *
 * @example
 * ```ts
 * const at = { file: "en.yaml", line: 7 };
 * const rules = new Map([["turn_on", parseTemplate("(turn|switch) on", at)]]);
 * resolveTemplate(parseTemplate("<turn_on> {name}", at), rules, (ref) => ({ kind: "slot", id: ref.name }), at);
 * // [{ kind: "group", optional: false, options: [[group(turn|switch), on]] }, { kind: "slot", id: "name" }]
 * ```
 */
export function resolveTemplate<Slot extends { kind: "slot" }>(
  nodes: readonly TemplateNode[],
  rules: ReadonlyMap<string, readonly TemplateNode[]>,
  slot: (ref: SlotRef) => Slot,
  at: SourceAt,
  cache: Map<string, ResolvedNode<Slot>[]> = new Map(),
): ResolvedNode<Slot>[] {
  return nodes.map((node): ResolvedNode<Slot> => {
    switch (node.kind) {
      case "literal":
        return node;
      case "slot":
        return slot(node);
      case "group":
        return {
          kind: "group",
          optional: node.optional,
          options: node.options.map((option) => resolveTemplate(option, rules, slot, at, cache)),
        };
      case "rule": {
        let body = cache.get(node.name);
        if (body === undefined) {
          const source = rules.get(node.name);
          if (source === undefined) {
            const known = [...rules.keys()].sort().map((name) => `<${name}>`).join(", ") || "none";
            throw new IntentDataError(at.file, at.line, `unknown rule <${node.name}>; known rules: ${known}`);
          }
          body = resolveTemplate(source, rules, slot, at, cache);
          cache.set(node.name, body);
        }
        return { kind: "group", optional: false, options: [body] };
      }
    }
  });
}

/**
 * The tokens every match of `nodes` must contain (literals outside optional parts and on every branch), so a
 * sentence lacking one is skipped without walking the template.
 *
 * @example
 * ```ts
 * const nodes = parseTemplate("(turn|switch) on [the] {name}", { file: "en.yaml", line: 1 });
 * requiredTokens(nodes); // Set { "on" }
 * ```
 */
export function requiredTokens<Slot extends { kind: "slot" }>(
  nodes: readonly (TemplateNode | ResolvedNode<Slot>)[],
): Set<string> {
  const out = new Set<string>();
  for (const node of nodes) {
    if (node.kind === "literal") out.add(node.token);
    else if (node.kind === "group" && !node.optional) {
      const sets = (node.options as readonly (TemplateNode | ResolvedNode<Slot>)[][]).map((option) =>
        requiredTokens<Slot>(option)
      );
      const [first, ...others] = sets;
      for (const token of first ?? []) if (others.every((set) => set.has(token))) out.add(token);
    }
  }
  return out;
}

/**
 * Choices every match of `nodes` must make: for each group that is not optional and whose every option needs some
 * token, one needed token per option; a sentence holding none of a choice's tokens cannot match. Finer than
 * {@link requiredTokens}, which sees nothing in `(set|turn|put) …`.
 *
 * @example
 * ```ts
 * const nodes = parseTemplate("(set|turn) [the] {name} to {percent}", { file: "en.yaml", line: 1 });
 * requiredChoices(nodes); // [["set", "turn"]]
 * ```
 */
export function requiredChoices<Slot extends { kind: "slot" }>(
  nodes: readonly (TemplateNode | ResolvedNode<Slot>)[],
): string[][] {
  const out: string[][] = [];
  for (const node of nodes) {
    if (node.kind !== "group" || node.optional) continue;
    const options = node.options as readonly (TemplateNode | ResolvedNode<Slot>)[][];
    const needs = options.map((option) => [...requiredTokens<Slot>(option)][0]);
    if (options.length > 1 && needs.every((token) => token !== undefined)) out.push([...new Set(needs as string[])]);
    if (options.length === 1) out.push(...requiredChoices<Slot>(options[0]!));
  }
  return out;
}
