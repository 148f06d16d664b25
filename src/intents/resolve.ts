/**
 * From a matched sentence to the things it names: by name (and place, when two share a name), or by place and kind
 * ("客厅的灯", "all the lights downstairs"). Never a guess: two things that fit a name without "all" are a question,
 * an unknown name is answered with the closest known ones.
 *
 * @module
 */

import type { HomeTarget, HomeTargetKind } from "../io/home_target.ts";
import type { IntentSlots } from "./intent.ts";

/** What the slots name. */
export type Resolution =
  /** `broad`: by place alone ("close the garage"): what there can do the action, if that is one thing. */
  | { kind: "targets"; targets: HomeTarget[]; broad?: boolean }
  | { kind: "ambiguous"; said: string; candidates: HomeTarget[] }
  | { kind: "unknown_name"; said: string; closest: string[] }
  | { kind: "unknown_place"; said: string; closest: string[] }
  | { kind: "nothing"; what: string; place: string | undefined }
  | { kind: "which"; what: string };

/** The `domain` slot's words, as target kinds (a "light" slot also finds switches people call lights? no: exact). */
const KINDS_OF: Record<string, readonly HomeTargetKind[]> = {
  light: ["light"],
  switch: ["switch"],
  fan: ["fan"],
  cover: ["cover"],
  lock: ["lock"],
  climate: ["climate"],
  media_player: ["media_player"],
  sensor: ["sensor", "binary_sensor"],
  binary_sensor: ["binary_sensor"],
};

/**
 * Normalised for comparing names: NFKC, lower case, no spaces or punctuation.
 *
 * @example
 * ```ts
 * nameKey(" Kitchen  Light! "); // "kitchenlight"
 * ```
 */
export function nameKey(text: string): string {
  return text.normalize("NFKC").toLowerCase().replace(/[\s\p{P}\p{S}]+/gu, "");
}

/**
 * The targets the slots name.
 *
 * @example
 * ```ts
 * import type { HomeTarget } from "../io/home_target.ts";
 * declare const targets: HomeTarget[];
 * resolveTargets({ place: "客厅", domain: "light" }, targets); // { kind: "targets", targets: [the living room's lights] }
 * ```
 */
export function resolveTargets(
  slots: IntentSlots,
  targets: readonly HomeTarget[],
  unknown: { name?: string | undefined; place?: string | undefined } = {},
): Resolution {
  if (unknown.name !== undefined) {
    // "Close the garage": a place said where a name was expected means what is there.
    const key = nameKey(unknown.name);
    const place = targets.flatMap((target) => target.places).find((candidate) => nameKey(candidate) === key);
    if (place !== undefined) {
      const { name: _name, ...rest } = slots;
      return resolveTargets({ ...rest, place }, targets);
    }
    return {
      kind: "unknown_name",
      said: unknown.name,
      closest: closestOrSome(unknown.name, targets.flatMap((target) => target.names)),
    };
  }
  if (unknown.place !== undefined) {
    return {
      kind: "unknown_place",
      said: unknown.place,
      closest: closestOrSome(unknown.place, targets.flatMap((target) => target.places)),
    };
  }
  const kinds = slots.domain === undefined ? undefined : KINDS_OF[slots.domain] ?? [];
  const place = slots.place === undefined ? undefined : nameKey(slots.place);
  const inPlace = (target: HomeTarget) => place === undefined || target.places.some((p) => nameKey(p) === place);
  const ofKind = (target: HomeTarget) => kinds === undefined || kinds.includes(target.kind);
  if (slots.name !== undefined) {
    const name = nameKey(slots.name);
    const named = targets.filter((target) => target.names.some((n) => nameKey(n) === name));
    // A place or kind said with the name narrows it ("卧室的台灯"); one that leaves nothing is not applied.
    const narrowed = named.filter((target) => inPlace(target) && ofKind(target));
    const found = narrowed.length ? narrowed : named;
    if (found.length > 1 && !slots.all) return { kind: "ambiguous", said: slots.name, candidates: found };
    return found.length
      ? { kind: "targets", targets: found }
      : { kind: "nothing", what: slots.name, place: slots.place };
  }
  const what = slots.domain ?? "device";
  if (kinds === undefined && place === undefined) return { kind: "which", what };
  const found = targets.filter((target) => inPlace(target) && ofKind(target));
  if (found.length === 0) return { kind: "nothing", what, place: slots.place };
  // "Turn on the light" with several lights and no room: ask rather than switch the whole house.
  if (place === undefined && !slots.all && found.length > 1) return { kind: "which", what };
  return kinds === undefined ? { kind: "targets", targets: found, broad: true } : { kind: "targets", targets: found };
}

/** The nearest known names, or (none near) the first few known ones: a person always learns what they could say. */
function closestOrSome(said: string, known: readonly string[]): string[] {
  const near = closest(said, known);
  return near.length ? near : [...new Set(known)].slice(0, 8);
}

/**
 * Up to five known names nearest to `said` (character-pair overlap), best first.
 *
 * @example
 * ```ts
 * closest("kitchen lamp", ["Kitchen light", "Garage door", "Bedroom lamp"]); // ["Kitchen light", "Bedroom lamp"]
 * ```
 */
export function closest(said: string, known: readonly string[]): string[] {
  const pairs = (text: string) => {
    const key = nameKey(text);
    const out = new Set<string>();
    for (let i = 0; i < key.length - 1; i++) out.add(key.slice(i, i + 2));
    if (key.length === 1) out.add(key);
    return out;
  };
  const wanted = pairs(said);
  const scored = [...new Set(known)].map((name) => {
    const have = pairs(name);
    let shared = 0;
    for (const pair of wanted) if (have.has(pair)) shared++;
    const dice = (2 * shared) / Math.max(1, wanted.size + have.size);
    // A short word inside a longer name ("门" in 前门 and 车库门) is near it, whatever the pairs say.
    return { name, score: nameKey(name).includes(nameKey(said)) ? Math.max(dice, 0.5) : dice };
  }).filter((item) => item.score > 0.15);
  return scored.sort((a, b) => b.score - a.score || a.name.localeCompare(b.name)).slice(0, 5).map((item) => item.name);
}
