/**
 * A recalled line cut to what answers the query: recall's items are read within a budget, so a long turn shows its
 * matching sentences, not all of them.
 *
 * @module
 */

import { similarities } from "../../search/relevance.ts";

/** The longest a line of a recalled document shows: its sentences that match the query best, in their order. */
const LINE_SHOWN_CHARS = 120;

/**
 * A line cut to its sentences that share a word with the query, the best first while they fit in `max` characters,
 * shown in their own order ("…" where sentences were left out). A line none of whose sentences matches shows its
 * first sentences that fit; a line that fits and whose every sentence matches stays as it is. A speaker's "Name: "
 * stays in front. Recall's items are read within a budget: a long turn's one relevant sentence should not cost the
 * room of three other items, nor should the pleasantries around a short turn's.
 *
 * @example
 * ```ts
 * focused("Anna: We went camping. The tent leaked all night! Next time we take the blue one.", "which tent leaked", 40);
 * // "Anna: … The tent leaked all night! …"
 * focused("Ben: Hi Anna! The passport is in the top drawer.", "where is the passport");
 * // "Ben: … The passport is in the top drawer."
 * ```
 */
export function focused(line: string, query: string, max = LINE_SHOWN_CHARS): string {
  const speaker = /^[^:\n]{1,40}: /.exec(line)?.[0] ?? "";
  const body = line.slice(speaker.length);
  const sentences = body.match(/[^.!?。！？]+[.!?。！？]*\s*/gu) ?? [body];
  if (sentences.length < 2 && line.length <= max) return line;
  const scores = similarities(sentences, query);
  const matches = scores.map((score) => score > 0);
  const anyMatches = matches.some(Boolean);
  const order = sentences.map((_, i) => i).sort((a, b) => scores[b]! - scores[a]! || a - b);
  const kept = new Set<number>();
  let used = speaker.length;
  for (const i of order) {
    const length = sentences[i]!.trim().length + 2;
    if (kept.size && (used + length > max || (anyMatches && !matches[i]))) continue;
    kept.add(i);
    used += length;
  }
  if (kept.size === sentences.length && line.length <= max) return line;
  let text = "";
  sentences.forEach((sentence, i) => {
    if (kept.has(i)) text += `${text === "" && i > 0 ? "… " : ""}${sentence.trim()} `;
    else if (text !== "" && !text.endsWith("… ")) text += "… ";
  });
  const shown = text.trim();
  return `${speaker}${shown.length > max ? `${shown.slice(0, max - 1)}…` : shown}`;
}
