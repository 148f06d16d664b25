/**
 * The vocabulary side of the matcher (`matcher.ts`): the token trie that lists, names and places are looked up in, and
 * the index of a {@link Vocabulary} (names, places, short forms of names, the kind a name's own words tell) built once
 * per version. Split out of `matcher.ts` so indexing is apart from compiling (`matcher_compile.ts`) and matching
 * (`matcher_match.ts`).
 *
 * @module
 */

import type { Vocabulary } from "./intent.ts";
import { tokenTexts } from "./tokens.ts";

/** A map from token sequences to values, walked from a position for every match, longest first. */
export class TokenTrie<V> {
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

/** The vocabulary's tries, built once per version. */
export interface VocabularyIndex {
  names: TokenTrie<string>;
  places: TokenTrie<string>;
  /** The kind a name's last words tell (客厅灯 → light, Thermostat → climate), from the `domain` lists. */
  kinds: Map<string, string>;
}

/** A word of a `domain` list and the kind it names. */
export interface KindWord {
  tokens: string[];
  kind: string;
}

/** Tries of the names and places, with short forms of names that end with a `name_suffix` word. */
export function buildVocabularyIndex(
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
