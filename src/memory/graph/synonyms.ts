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
 * The index lives in `memory.db` itself (schema 9), not in the heap: a year of a household (48,000 entities) held it
 * as ≈ 22 MB of maps rebuilt from every entity row at each start (≈ 0.8 s); on disk nothing is read at open and a
 * probe reads a few rows by key. Two `WITHOUT ROWID` tables:
 * - `synonym_keys (type, key) → entity`: the normalised key of every name and alias (a key filed again for another
 *   entity of the type is refiled to it, as the last one filed won in memory);
 * - `synonym_buckets (bucket, entity)`: eight rows per key of a long Latin name, `bucket` a 47-bit integer hash of
 *   (type, band, the band's two MinHash values) — six bytes in the file, looked up exactly. Two buckets that happen to
 *   share a hash only add a candidate, and a candidate merges only when one of its keys of that type is a slip away,
 *   so a collision can never merge anything.
 *
 * A probe that misses the exact key first looks up the keys one slip away (every swap, doubling and undoubling of its
 * own key, a few dozen exact reads of one index): nearly every new name stops there. Only when one is there are the
 * buckets walked, so that which entity merges is what MinHash-LSH chose before — the first confirmed among the first
 * 64 entities of its buckets (a slip LSH does not bucket together still does not merge).
 *
 * The index writes through the caller's connection, so inside a transaction (every write of the graph is one) a
 * rolled-back write rolls its names back too.
 *
 * @module
 */

import type { DatabaseSync } from "node:sqlite";
import { prepared } from "../../sqlite/prepared.ts";

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
/** Entities of its buckets a probe considers at most: a crowded bucket (many "living room …" names) stops there. */
const CANDIDATES = 64;

/** Only keys of long Latin names are filed in buckets (and looked for there). */
function typoCandidate(key: string): boolean {
  return key.length >= TYPO_MIN && !HAN.test(key);
}

/** A 47-bit hash of `text` (cyrb53's mixing, cut to what SQLite stores in six bytes). */
function hash47(text: string): number {
  let h1 = 0xdeadbeef, h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ ch, 2654435761);
    h2 = Math.imul(h2 ^ ch, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return (h2 & 0x7fff) * 0x100000000 + (h1 >>> 0);
}

/** The LSH buckets of a key within `type`: one per band of its MinHash signature. */
function bucketsOf(key: string, type: string): number[] {
  const grams = shingles(key);
  const signature: number[] = [];
  for (let h = 0; h < BANDS * ROWS; h++) {
    let min = 0xffffffff;
    for (const gram of grams) min = Math.min(min, hash32(gram, h * 0x9e3779b1));
    signature.push(min);
  }
  const buckets: number[] = [];
  for (let band = 0; band < BANDS; band++) {
    buckets.push(hash47(`${type}\u0000${band}\u0000${signature.slice(band * ROWS, band * ROWS + ROWS).join(",")}`));
  }
  return buckets;
}

/** A key's eight buckets filed, and taken out, in one statement each (`?1` the entity, `?2`… the buckets). */
const FILE_BUCKETS = `INSERT OR IGNORE INTO synonym_buckets (bucket, entity) VALUES ${
  Array.from({ length: BANDS }, (_, band) => `(?${band + 2}, ?1)`).join(", ")
}`;
const DROP_BUCKETS = `DELETE FROM synonym_buckets WHERE entity = ?1 AND bucket IN (${
  Array.from({ length: BANDS }, (_, band) => `?${band + 2}`).join(", ")
})`;

/** Keys one slip away looked up per read (unused placeholders stay NULL, which matches no key). */
const SLIPS_PER_READ = 64;
const NEAR_KEYS = `SELECT entity, key FROM synonym_keys WHERE type = ? AND key IN (${
  Array(SLIPS_PER_READ).fill("?").join(", ")
})`;

/**
 * Every key one slip of the fingers from `key`: exactly the strings `isTypo(key, ·)` accepts — a neighbouring pair
 * swapped, a letter doubled, a doubled letter undoubled, none of them involving a digit.
 */
function typosOf(key: string): string[] {
  const out = new Set<string>();
  for (let i = 0; i < key.length; i++) {
    const c = key[i]!, next = key[i + 1];
    if (/\d/.test(c)) continue;
    out.add(key.slice(0, i) + c + key.slice(i));
    if (next === c) out.add(key.slice(0, i) + key.slice(i + 1));
    else if (next !== undefined && !/\d/.test(next)) out.add(key.slice(0, i) + next + c + key.slice(i + 2));
  }
  return [...out];
}

/**
 * Files the names of many entities at once — what {@linkcode SynonymIndex.add} of each, in the order given, would
 * leave (the last name filed with a key owns it) — for the migration that builds the index from a file's entities.
 * The rows go in sorted by key, appended to the tables' B-trees instead of scattered over them: a year's 48,000
 * entities in 1.3 s instead of 2.6 s, without growing SQLite's page cache.
 *
 * @example
 * ```ts
 * import { openMemoryDb } from "../database.ts";
 *
 * const db = openMemoryDb(":memory:");
 * fileNames(db, [{ id: 7, name: "客厅灯", type: "device" }, { id: 7, name: "living room lamp", type: "device" }]);
 * new SynonymIndex(db).probe("客厅的灯", "device"); // 7
 * ```
 */
export function fileNames(db: DatabaseSync, names: Iterable<{ id: number; name: string; type: string }>): void {
  const keys = new Map<string, number>();
  const bucketOf: number[] = [];
  const entityOf: number[] = [];
  for (const { id, name, type } of names) {
    const key = normalizeName(name);
    if (key === "") continue;
    keys.set(`${type}\u0000${key}`, id);
    if (!typoCandidate(key)) continue;
    for (const bucket of bucketsOf(key, type)) {
      bucketOf.push(bucket);
      entityOf.push(id);
    }
  }
  const insertKey = prepared(db, "INSERT OR REPLACE INTO synonym_keys (type, key, entity) VALUES (?, ?, ?)");
  for (const typeAndKey of [...keys.keys()].sort()) {
    const cut = typeAndKey.indexOf("\u0000");
    insertKey.run(typeAndKey.slice(0, cut), typeAndKey.slice(cut + 1), keys.get(typeAndKey)!);
  }
  const order = new Uint32Array(bucketOf.length).map((_, i) => i).sort((a, b) =>
    bucketOf[a]! - bucketOf[b]! || entityOf[a]! - entityOf[b]!
  );
  const insertBucket = prepared(db, "INSERT OR IGNORE INTO synonym_buckets (bucket, entity) VALUES (?, ?)");
  for (const i of order) insertBucket.run(bucketOf[i]!, entityOf[i]!);
}

/**
 * The index of known names, by type, in the `synonym_keys` and `synonym_buckets` tables of a database opened by
 * `openMemoryDb` (schema 9; `openMemoryDb(":memory:")` for one that is thrown away). Nothing is read at construction.
 */
export class SynonymIndex {
  #db: DatabaseSync;

  /**
   * @example
   * ```ts
   * import { openMemoryDb } from "../database.ts";
   *
   * const index = new SynonymIndex(openMemoryDb(":memory:"));
   * ```
   */
  constructor(db: DatabaseSync) {
    this.#db = db;
  }

  /**
   * Files a name of entity `id` (an entity may have several: its name and aliases), in the caller's transaction if
   * one is open. A key already filed for another entity of `type` is refiled to this one.
   *
   * @example
   * ```ts
   * import { openMemoryDb } from "../database.ts";
   *
   * const index = new SynonymIndex(openMemoryDb(":memory:"));
   * index.add(7, "客厅灯", "device");
   * index.add(7, "living room lamp", "device");
   * ```
   */
  add(id: number, name: string, type: string): void {
    const key = normalizeName(name);
    if (key === "") return;
    prepared(this.#db, "INSERT OR REPLACE INTO synonym_keys (type, key, entity) VALUES (?, ?, ?)").run(type, key, id);
    if (!typoCandidate(key)) return;
    prepared(this.#db, FILE_BUCKETS).run(id, ...bucketsOf(key, type));
  }

  /**
   * Forgets the names of entity `id` (its name and aliases, as filed with {@linkcode add}), keys and buckets; for an
   * entity that was deleted. A key since refiled to another entity stays that entity's.
   *
   * @example
   * ```ts
   * import { openMemoryDb } from "../database.ts";
   *
   * const index = new SynonymIndex(openMemoryDb(":memory:"));
   * index.add(7, "客厅灯", "device");
   * index.remove(7, ["客厅灯"], "device");
   * index.probe("客厅的灯", "device"); // undefined
   * ```
   */
  remove(id: number, names: readonly string[], type: string): void {
    const drop = prepared(this.#db, "DELETE FROM synonym_keys WHERE type = ? AND key = ? AND entity = ?");
    const dropBuckets = prepared(this.#db, DROP_BUCKETS);
    for (const key of new Set(names.map(normalizeName))) {
      if (key === "") continue;
      drop.run(type, key, id);
      if (typoCandidate(key)) dropBuckets.run(id, ...bucketsOf(key, type));
    }
  }

  /**
   * The entity a new name is another name of, within `type`, or `undefined`.
   *
   * @example
   * ```ts
   * import { openMemoryDb } from "../database.ts";
   *
   * const index = new SynonymIndex(openMemoryDb(":memory:"));
   * index.add(7, "客厅灯", "device");
   * index.probe("客厅的灯", "device"); // 7
   * index.probe("卧室灯", "device"); // undefined
   * ```
   */
  probe(name: string, type: string): number | undefined {
    const key = normalizeName(name);
    if (key === "") return undefined;
    const exact = prepared(this.#db, "SELECT entity FROM synonym_keys WHERE type = ? AND key = ?").get(type, key) as
      | { entity: number }
      | undefined;
    if (exact !== undefined || !typoCandidate(key)) return exact?.entity;
    // The entities a candidate would be confirmed as, looked up directly: a read or two of the key index, and for
    // nearly every new name (no known name one slip away) the end of the probe.
    const near = prepared(this.#db, NEAR_KEYS);
    const slips = typosOf(key);
    const confirmed = new Set<number>();
    for (let i = 0; i < slips.length; i += SLIPS_PER_READ) {
      for (
        const row of near.all(type, ...slips.slice(i, i + SLIPS_PER_READ)) as Array<{ entity: number; key: string }>
      ) {
        if (isTypo(key, row.key)) confirmed.add(row.entity);
      }
    }
    if (!confirmed.size) return undefined;
    // Which of them merges is still the buckets' choice: the first confirmed among the first CANDIDATES entities met.
    const members = prepared(this.#db, "SELECT entity FROM synonym_buckets WHERE bucket = ? ORDER BY entity LIMIT ?");
    const seen = new Set<number>();
    for (const bucket of bucketsOf(key, type)) {
      for (const { entity } of members.all(bucket, CANDIDATES) as Array<{ entity: number }>) {
        if (seen.has(entity)) continue;
        seen.add(entity);
        if (confirmed.has(entity)) return entity;
        if (seen.size >= CANDIDATES) return undefined;
      }
    }
    return undefined;
  }
}
