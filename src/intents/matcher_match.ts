/**
 * The matching side of the matcher (`matcher.ts`): one compiled template walked against a sentence with backtracking,
 * slots filled from the vocabulary index, numbers, times and free text, and matches scored and ordered best first
 * (see the header of `matcher.ts` for the order). Split out of `matcher.ts` so matching and ranking are apart from
 * compiling (`matcher_compile.ts`) and vocabulary indexing (`matcher_vocabulary.ts`).
 *
 * @module
 */

import type { IntentMatch, IntentName, IntentSlots, When } from "./intent.ts";
import { parseNumber, parsePercent } from "./numbers.ts";
import type { Token } from "./tokens.ts";
import { parseWhen } from "./when.ts";
import type { CompiledTemplate, MatchNode, SlotMatcher } from "./matcher_compile.ts";
import type { VocabularyIndex } from "./matcher_vocabulary.ts";

/** One way a slot can be filled at a position. */
export interface Candidate {
  end: number;
  value: string | number | When;
  /** Open-vocabulary text (matchOpen): the slot it stands for. */
  open?: "name" | "place";
  /** Tokens of free text or open text. */
  loose: number;
}

export interface Binding {
  key: keyof IntentSlots;
  candidate: Candidate;
}

export interface Scored {
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

const SCHEDULE_ID = /^s-[0-9a-f]{8}$/;
/** Open-vocabulary text is at most this many tokens ("the big sauna upstairs", 卧室的加湿器). */
const MAX_OPEN_TOKENS = 8;
/** Work per sentence; a pathological user template stops here instead of stalling a turn. */
export const MAX_STEPS = 500_000;
const MAX_RESULTS_PER_TEMPLATE = 256;

export interface MatchContext {
  text: string;
  tokens: readonly Token[];
  words: readonly string[];
  vocabulary: VocabularyIndex;
  open: boolean;
  memo: Map<string, Candidate[]>;
  steps: number;
}

export function compareScored(a: Scored, b: Scored): number {
  return b.literals - a.literals || a.open - b.open || a.free - b.free || a.mismatch - b.mismatch ||
    a.unnamed - b.unnamed ||
    a.slots - b.slots || a.order - b.order;
}

export function matchKey(match: IntentMatch): string {
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
export function matchTemplate(template: CompiledTemplate, context: MatchContext): Scored[] {
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
