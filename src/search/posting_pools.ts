/**
 * The two pools under {@link InvertedIndex}'s typed arrays: every term's postings and every document's terms, each
 * in shared arrays rather than one typed array per term or document (see each class).
 *
 * @module
 */

/**
 * Every term's postings (slot, weight) in two shared arrays, each term owning a region (start, length, capacity).
 * One typed array per term cost ≈ 800 bytes of resident memory each (measured: 20k small typed arrays, +16 MB);
 * here a term costs three integers. A full region moves to the end with twice the room; the space it leaves is
 * reclaimed by compaction, which (like a loaded snapshot) lays the regions out back to back.
 */
export class PostingPool {
  slots = new Int32Array(1024);
  weights = new Float32Array(1024);
  used = 0;
  start = new Int32Array(64);
  length = new Int32Array(64);
  capacity = new Int32Array(64);
  terms = 0;

  /**
   * Makes room, once and exactly, for `terms` terms and `postings` postings — what a loaded snapshot is known to hold —
   * so loading does not grow the arrays by doubling (each step a copy, the old one left to the allocator: at 100k
   * documents that growth stayed resident as tens of MB).
   */
  presize(terms: number, postings: number): void {
    const exact = <T extends Int32Array | Float32Array>(old: T, size: number, make: (n: number) => T): T => {
      if (old.length >= size) return old;
      const next = make(size);
      next.set(old);
      return next;
    };
    this.slots = exact(this.slots, this.used + postings, (n) => new Int32Array(n));
    this.weights = exact(this.weights, this.used + postings, (n) => new Float32Array(n));
    this.start = exact(this.start, this.terms + terms, (n) => new Int32Array(n));
    this.length = exact(this.length, this.terms + terms, (n) => new Int32Array(n));
    this.capacity = exact(this.capacity, this.terms + terms, (n) => new Int32Array(n));
  }

  /** Adds a term with room for `capacity` postings; returns its number. */
  addTerm(capacity = 2): number {
    const term = this.terms++;
    if (term === this.start.length) {
      const size = this.start.length * 2;
      this.start = grown(this.start, this.start.length, size);
      this.length = grown(this.length, this.length.length, size);
      this.capacity = grown(this.capacity, this.capacity.length, size);
    }
    this.start[term] = this.#reserve(capacity);
    this.capacity[term] = capacity;
    return term;
  }

  #reserve(count: number): number {
    if (this.used + count > this.slots.length) {
      const size = Math.max(this.used + count, this.slots.length * 2);
      this.slots = grown(this.slots, this.used, size);
      this.weights = grown(this.weights, this.used, size);
    }
    const at = this.used;
    this.used += count;
    return at;
  }

  push(term: number, slot: number, weight: number): void {
    let length = this.length[term]!;
    if (length === this.capacity[term]) {
      const capacity = Math.max(2, length * 2);
      const moved = this.#reserve(capacity);
      const from = this.start[term]!;
      this.slots.copyWithin(moved, from, from + length);
      this.weights.copyWithin(moved, from, from + length);
      this.start[term] = moved;
      this.capacity[term] = capacity;
    }
    const at = this.start[term]! + length++;
    this.slots[at] = slot;
    this.weights[at] = weight;
    this.length[term] = length;
  }
}

/** A copy of `array` with room for `size` entries, holding its first `used`: the pools grow by doubling. */
function grown(array: Int32Array, used: number, size: number): Int32Array<ArrayBuffer>;
function grown(array: Float32Array, used: number, size: number): Float32Array<ArrayBuffer>;
function grown(
  array: Int32Array | Float32Array,
  used: number,
  size: number,
): Int32Array<ArrayBuffer> | Float32Array<ArrayBuffer> {
  const next = array instanceof Int32Array ? new Int32Array(size) : new Float32Array(size);
  next.set(array.subarray(0, used));
  return next;
}

/**
 * Every document's term ids and weights in two shared arrays (offset and length per slot), instead of two small
 * typed arrays per document — at 100k documents that saves tens of MB of per-object overhead.
 */
export class DocPool {
  terms = new Int32Array(1024);
  weights = new Float32Array(1024);
  used = 0;
  start = new Int32Array(16);
  length = new Int32Array(16);

  add(slot: number, termIds: ArrayLike<number>, weights: ArrayLike<number>, count: number): void {
    if (slot >= this.start.length) {
      const size = Math.max(slot + 1, this.start.length * 2);
      this.start = grown(this.start, this.start.length, size);
      this.length = grown(this.length, this.length.length, size);
    }
    if (this.used + count > this.terms.length) {
      const size = Math.max(this.used + count, this.terms.length * 2);
      this.terms = grown(this.terms, this.used, size);
      this.weights = grown(this.weights, this.used, size);
    }
    for (let i = 0; i < count; i++) {
      this.terms[this.used + i] = termIds[i]!;
      this.weights[this.used + i] = weights[i]!;
    }
    this.start[slot] = this.used;
    this.length[slot] = count;
    this.used += count;
  }

  termsOf(slot: number): Int32Array {
    return this.terms.subarray(this.start[slot]!, this.start[slot]! + this.length[slot]!);
  }

  weightsOf(slot: number): Float32Array {
    return this.weights.subarray(this.start[slot]!, this.start[slot]! + this.length[slot]!);
  }

  /** Forgets a slot's terms; the space is reclaimed by compaction. */
  clear(slot: number): void {
    this.length[slot] = 0;
  }
}
