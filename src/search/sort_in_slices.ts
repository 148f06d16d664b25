/**
 * Sorting that yields: a compaction sorts the new terms by their bytes and the new ids by their hash, up to hundreds of
 * thousands of them, and one `Array.prototype.sort` of that many held the event loop for tens of milliseconds.
 *
 * @module
 */

/**
 * Sorts `items` by `compare` (a total order) with `pause()` awaited between slices: runs of 4,096 sorted in place,
 * then merged pairwise, about 32,768 items between pauses. Resolves to the sorted items (`items` itself or a new
 * array).
 *
 * @example
 * ```ts
 * const sorted = await sortInSlices(new Uint32Array([3, 1, 2]), (a, b) => a - b, () => Promise.resolve());
 * [...sorted]; // [1, 2, 3]
 * ```
 */
export async function sortInSlices(
  items: Uint32Array,
  compare: (a: number, b: number) => number,
  pause: () => Promise<void>,
): Promise<Uint32Array> {
  const RUN = 4096;
  for (let i = 0; i < items.length; i += RUN) {
    items.subarray(i, i + RUN).sort(compare);
    if (items.length > RUN) await pause();
  }
  let from: Uint32Array = items, into: Uint32Array = new Uint32Array(items.length);
  for (let width = RUN; width < items.length; width *= 2) {
    let work = 0;
    for (let low = 0; low < items.length; low += 2 * width) {
      const middle = Math.min(low + width, items.length), high = Math.min(low + 2 * width, items.length);
      let a = low, b = middle, at = low;
      while (a < middle && b < high) into[at++] = compare(from[a]!, from[b]!) <= 0 ? from[a++]! : from[b++]!;
      while (a < middle) into[at++] = from[a++]!;
      while (b < high) into[at++] = from[b++]!;
      work += high - low;
      if (work >= 8 * RUN) {
        work = 0;
        await pause();
      }
    }
    [from, into] = [into, from];
  }
  return from;
}
