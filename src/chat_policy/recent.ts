/**
 * What a chat channel remembers of recent messages — the ids the butler sent (so a reply to one of them is a reply to
 * the butler), where an input came from (to answer it in place) — bounded, the oldest forgotten first. Shared by chat
 * channels.
 *
 * @module
 */

/** A map that keeps its `limit` most recently added keys. */
export class RecentMap<K, V> {
  #entries = new Map<K, V>();
  #limit: number;

  /**
   * @example
   * ```ts
   * const recent = new RecentMap<string, number>(2);
   * recent.set("a", 1);
   * recent.set("b", 2);
   * recent.set("c", 3);
   * recent.get("a"); // undefined: the oldest went
   * ```
   */
  constructor(limit: number) {
    this.#limit = limit;
  }

  set(key: K, value: V): void {
    this.#entries.delete(key);
    this.#entries.set(key, value);
    if (this.#entries.size > this.#limit) this.#entries.delete(this.#entries.keys().next().value!);
  }

  get(key: K): V | undefined {
    return this.#entries.get(key);
  }

  has(key: K): boolean {
    return this.#entries.has(key);
  }

  get size(): number {
    return this.#entries.size;
  }
}
