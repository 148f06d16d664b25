/**
 * Speakers named in a question: "When did Caroline go to the support group?" prefers what Caroline said. Lines of a
 * conversation start with their speaker ("Name: …"), so a query word that is a speaker's name marks their lines.
 *
 * @module
 */

/**
 * A question that names a person prefers what that person said ("When did Caroline go to the support group?": her
 * own turns tell it). Their name is a word of every line they said, too common in a long conversation to weigh much
 * by its own; 1.5 was chosen on LoCoMo's tune half (1.3, 1.5, 1.8: recall@1 0.476, 0.482, 0.483; recall@10 within the
 * text budget 0.780, 0.780, 0.782), reported on its test half by `eval:memory-locomo`.
 */
export const SPEAKER_BOOST = 1.5;

/** A name of two or more Han characters (one character, 王, would match inside too many words). */
const HAN_NAME = /^\p{sc=Han}{2,}$/u;

/**
 * The speakers of the texts' lines ("Name: …") whose names the query says as a word, in lower case.
 *
 * @example
 * ```ts
 * namedSpeakers("When did Caroline go to the support group?", ["Caroline: I went yesterday.\nMel: Nice!"]);
 * // Set { "caroline" }
 * namedSpeakers("前天奶奶去了哪里？", ["奶奶: 我今天去超市了。"]); // Set { "奶奶" }
 * ```
 */
export function namedSpeakers(query: string, texts: readonly string[]): Set<string> {
  const says = sayer(query);
  const named = new Set<string>();
  for (const text of texts) for (const speaker of speakersOf(text)) if (says(speaker)) named.add(speaker);
  return named;
}

/**
 * Whether the query says one of `speakers` (lower case) as {@link namedSpeakers} tells a name.
 *
 * @example
 * ```ts
 * saysAny("前天奶奶去了哪里？", ["wei", "奶奶"]); // true
 * saysAny("Where is the toolbox?", ["wei", "奶奶"]); // false
 * ```
 */
export function saysAny(query: string, speakers: Iterable<string>): boolean {
  const says = sayer(query);
  for (const speaker of speakers) if (says(speaker)) return true;
  return false;
}

/** Whether the query says a speaker's name (lower case): as a word, or a Han name anywhere. */
function sayer(query: string): (speaker: string) => boolean {
  const lower = query.toLowerCase();
  const words = new Set(lower.split(/[^\p{L}\p{N}]+/u).filter((word) => word.length > 1));
  // Chinese writes no spaces: "前天奶奶去了哪里" names 奶奶 inside one run, so a Han name counts where it occurs.
  return (speaker) => words.has(speaker) || (HAN_NAME.test(speaker) && lower.includes(speaker));
}

/** Texts whose speakers are kept: every recall reads the recent lines' and its documents' again. */
const MEMO_ENTRIES = 512;
const memo = new Map<string, readonly string[]>();

/**
 * The speakers of a text's lines ("Name: …"), lower case, in order (repeats kept), from a small memo: they depend on
 * the text alone, so it is never stale.
 */
function speakersOf(text: string): readonly string[] {
  const kept = memo.get(text);
  if (kept) return kept;
  const speakers = lineSpeakers(text);
  // A long text is read again each time: it would keep the memo large.
  if (text.length > 1_000) return speakers;
  if (memo.size >= MEMO_ENTRIES) memo.delete(memo.keys().next().value!);
  memo.set(text, speakers);
  return speakers;
}

/**
 * The speakers of a text's lines ("Name: …"), lower case, in order (repeats kept).
 *
 * @example
 * ```ts
 * lineSpeakers("Mel: Nice!\nCaroline: I went yesterday."); // ["mel", "caroline"]
 * ```
 */
export function lineSpeakers(text: string): string[] {
  const speakers: string[] = [];
  for (const line of text.split("\n")) {
    const speaker = /^([^:\n]{1,40}): /.exec(line)?.[1]?.toLowerCase();
    if (speaker) speakers.push(speaker);
  }
  return speakers;
}

/**
 * Did one of the `named` speakers (lower case, as {@link namedSpeakers} gives them) say a line of `text`?
 *
 * @example
 * ```ts
 * spokenBy("Mel: Nice!\nCaroline: I went yesterday.", new Set(["caroline"])); // true
 * ```
 */
export function spokenBy(text: string, named: ReadonlySet<string>): boolean {
  return text.split("\n").some((line) => named.has(/^([^:\n]{1,40}): /.exec(line)?.[1]?.toLowerCase() ?? ""));
}
