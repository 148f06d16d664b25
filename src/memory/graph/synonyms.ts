/**
 * Synonym merge for entity names, incremental: a new name is compared only with the names in its own buckets, within
 * its type. Two ways to be the same entity:
 * 1. the same normalised key — NFKC, lower case, no spaces or punctuation, the particles 的/之 and a final 儿 removed,
 *    English articles and possessives removed, a plural -s dropped from words of four letters or more, and the
 *    generic affixes 电- (电冰箱), -机 (电视机) and -室 (主卧室) dropped from longer Chinese names. 客厅的灯 = 客厅灯,
 *    "the living room lamp" = "Living Room Lamp"; 客厅灯 ≠ 卧室灯 because nothing but those rules is forgiven;
 * 2. a slip of the fingers in a Latin name of at least eight letters — two neighbouring letters swapped
 *    ("thermsotat") or a letter doubled ("thermostatt") — found through MinHash-LSH buckets of character bigrams
 *    (blocked by type) and confirmed letter by letter. A substituted letter never merges: grandpa/grandma.
 *
 * @module
 */

const ARTICLES = /^(?:the|a|an|my|our|your)\s+/;
const HAN = /\p{Script=Han}/u;

/**
 * The key two names must share to be one entity.
 *
 * @example
 * ```ts
 * normalizeName("the Living-Room Lamp"); // "livingroomlamp"
 * normalizeName("客厅的灯"); // "客厅灯"
 * ```
 */
export function normalizeName(name: string): string {
  let text = name.normalize("NFKC").toLowerCase().trim().replace(ARTICLES, "");
  text = text.replace(/['’]s\b/g, "").replace(/s['’](?=\s|$)/g, "s");
  const words = text.split(/[^\p{L}\p{N}]+/u).filter(Boolean).map((word) =>
    !HAN.test(word) && word.length >= 4 && word.endsWith("s") && !word.endsWith("ss") ? word.slice(0, -1) : word
  );
  let key = words.join("").replace(/[的之]/g, "").replace(/儿$/, "");
  // One affix at a time, each only while two characters stay: 电视机 → 电视 (not 视), 电冰箱 → 冰箱.
  if (HAN.test(key) && key.length > 2) key = key.replace(/[机室]$/, "");
  if (HAN.test(key) && key.length > 2) key = key.replace(/^电/, "");
  return key;
}

/** Character bigrams of a key (the key itself when shorter). */
function shingles(key: string): string[] {
  const chars = [...key];
  if (chars.length < 2) return [key];
  const out: string[] = [];
  for (let i = 0; i + 1 < chars.length; i++) out.push(chars[i]! + chars[i + 1]!);
  return out;
}

function hash32(text: string, seed: number): number {
  let h = 0x811c9dc5 ^ seed;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

/**
 * True when `a` and `b` differ by one slip of the fingers that cannot change the meaning: two neighbouring letters
 * swapped ("thermsotat") or a letter doubled or undoubled ("thermostatt"). A substituted letter is not forgiven —
 * grandpa/grandma, lamp/lamb and Tom/Tim are different things — and nothing involving a digit is (lamp 101 / 1001).
 */
function isTypo(a: string, b: string): boolean {
  if (a === b) return false;
  if (a.length === b.length) {
    let i = 0;
    while (a[i] === b[i]) i++;
    return i + 1 < a.length && a[i] === b[i + 1] && a[i + 1] === b[i] && a.slice(i + 2) === b.slice(i + 2) &&
      !/\d/.test(a[i]! + a[i + 1]!);
  }
  const [long, short] = a.length > b.length ? [a, b] : [b, a];
  if (long.length !== short.length + 1) return false;
  let i = 0;
  while (i < short.length && long[i] === short[i]) i++;
  const extra = long[i]!;
  return long.slice(i + 1) === short.slice(i) && !/\d/.test(extra) && (long[i - 1] === extra || long[i + 1] === extra);
}

const BANDS = 8;
const ROWS = 2;
const TYPO_MIN = 8;
/** Entities a probe confirms at most: a crowded bucket (many "living room …" names) costs no more than this. */
const CANDIDATES = 64;

/** The index of known names, by type. */
export class SynonymIndex {
  #keys = new Map<string, number>();
  #buckets = new Map<string, Set<number>>();
  #keyOf = new Map<number, string[]>();

  /**
   * Files a name of entity `id` (an entity may have several: its name and aliases).
   *
   * @example
   * ```ts
   * const index = new SynonymIndex();
   * index.add(7, "客厅灯", "device");
   * index.add(7, "living room lamp", "device");
   * ```
   */
  add(id: number, name: string, type: string): void {
    const key = normalizeName(name);
    if (key === "") return;
    this.#keys.set(`${type}\u0000${key}`, id);
    this.#keyOf.set(id, [...(this.#keyOf.get(id) ?? []), key]);
    if (this.#typoCandidate(key)) { for (const bucket of this.#bucketsOf(key, type)) this.#bucket(bucket).add(id); }
  }

  #typoCandidate(key: string): boolean {
    return key.length >= TYPO_MIN && !HAN.test(key);
  }

  #bucket(key: string): Set<number> {
    let bucket = this.#buckets.get(key);
    if (!bucket) this.#buckets.set(key, bucket = new Set());
    return bucket;
  }

  #bucketsOf(key: string, type: string): string[] {
    const grams = shingles(key);
    const signature: number[] = [];
    for (let h = 0; h < BANDS * ROWS; h++) {
      let min = 0xffffffff;
      for (const gram of grams) min = Math.min(min, hash32(gram, h * 0x9e3779b1));
      signature.push(min);
    }
    const buckets: string[] = [];
    for (let band = 0; band < BANDS; band++) {
      buckets.push(`${type}\u0000${band}\u0000${signature.slice(band * ROWS, band * ROWS + ROWS).join(",")}`);
    }
    return buckets;
  }

  /**
   * The entity a new name is another name of, within `type`, or `undefined`.
   *
   * @example
   * ```ts
   * const index = new SynonymIndex();
   * index.add(7, "客厅灯", "device");
   * index.probe("客厅的灯", "device"); // 7
   * index.probe("卧室灯", "device"); // undefined
   * ```
   */
  probe(name: string, type: string): number | undefined {
    const key = normalizeName(name);
    if (key === "") return undefined;
    const exact = this.#keys.get(`${type}\u0000${key}`);
    if (exact !== undefined || !this.#typoCandidate(key)) return exact;
    const seen = new Set<number>();
    for (const bucket of this.#bucketsOf(key, type)) {
      for (const id of this.#buckets.get(bucket) ?? []) {
        if (seen.has(id)) continue;
        seen.add(id);
        if ((this.#keyOf.get(id) ?? []).some((other) => isTypo(key, other))) return id;
        if (seen.size >= CANDIDATES) return undefined;
      }
    }
    return undefined;
  }
}
