/**
 * The strict rule by which `eval:memory-locomo` credits what recall returns: an item is read within a budget of
 * characters, so it earns credit for at most one turn per {@link CHARS_PER_TURN} characters it shows — a long item
 * cannot cover ten turns with the text of two. Its provenance lists its turns in the order it shows them; the first
 * ⌈length / 40⌉ of them are credited, the rest are not.
 *
 * @module
 */

/** One credited turn per this many characters an item shows. */
export const CHARS_PER_TURN = 40;

/** What the scoring reads of an item: its text and its turns in the order it shows them. */
export interface ShownItem {
  text: string;
  provenance: readonly string[];
}

/**
 * The turns `item` earns credit for: the first ⌈its length / {@link CHARS_PER_TURN}⌉ of its provenance (at least one
 * when it shows anything).
 *
 * @example
 * ```ts
 * credited({ text: "Anna: Top drawer.", provenance: ["e1", "e2"] }); // ["e1"] (17 characters: one turn)
 * credited({ text: "x".repeat(41), provenance: ["e1", "e2", "e3"] }); // ["e1", "e2"]
 * ```
 */
export function credited(item: ShownItem): string[] {
  return item.provenance.slice(0, Math.ceil(item.text.length / CHARS_PER_TURN));
}

/**
 * The items best first while their texts fit in `budget` characters (the first always, however long).
 *
 * @example
 * ```ts
 * const a = { text: "x".repeat(700), provenance: ["e1"] };
 * const b = { text: "y".repeat(600), provenance: ["e2"] };
 * withinBudget([a, b, a], 1250); // [a]: b would make 1,300 characters
 * ```
 */
export function withinBudget<T extends ShownItem>(items: readonly T[], budget: number): T[] {
  const kept: T[] = [];
  let used = 0;
  for (const item of items) {
    if (kept.length && used + item.text.length > budget) break;
    kept.push(item);
    used += item.text.length;
  }
  return kept;
}

/** Whether a list of items answers a question, by each of the rules `eval:memory-locomo` reports. */
export interface Scored {
  /** The best item holds an evidence turn (any of its provenance). */
  r1: boolean;
  /** One of the first `k` items holds one. */
  r10: boolean;
  /** One of the items within the budget holds one. */
  budget: boolean;
  /** The best item earns credit for an evidence turn (the strict rule). */
  strict_r1: boolean;
  /**
   * The same, reading only the first `firstChars` characters of the best item (k = 1 at the per-item budget): an item
   * that gathers a conversation's turns is long, and recall@1 should not grow with its length alone.
   */
  strict_r1_short: boolean;
  /** One of the items within the budget earns credit for one (the strict rule: the headline figure). */
  strict_budget: boolean;
}

/**
 * Scores `items` (best first, at most k of them) against the `gold` evidence turns of a question.
 *
 * @example
 * ```ts
 * const items = [
 *   { text: "Anna: Hi!\nBen: Hi.\nAnna: The key is under the pot.", provenance: ["e1", "e2", "e3"] },
 * ];
 * score(items, new Set(["e3"]), 1250, 125);
 * // { r1: true, r10: true, budget: true, strict_r1: false, strict_r1_short: false, strict_budget: false }:
 * // 51 characters credit 2 turns
 * ```
 */
export function score(
  items: readonly ShownItem[],
  gold: ReadonlySet<string>,
  budget: number,
  firstChars = budget,
): Scored {
  const holds = (turns: readonly string[]) => turns.some((id) => gold.has(id));
  const kept = withinBudget(items, budget);
  return {
    r1: items[0] ? holds(items[0].provenance) : false,
    r10: items.some((item) => holds(item.provenance)),
    budget: kept.some((item) => holds(item.provenance)),
    strict_r1: items[0] ? holds(credited(items[0])) : false,
    strict_r1_short: items[0]
      ? holds(credited({ text: items[0].text.slice(0, firstChars), provenance: items[0].provenance }))
      : false,
    strict_budget: kept.some((item) => holds(credited(item))),
  };
}
