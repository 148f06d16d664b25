/**
 * The least relevance score for something to enter a turn's reference block unasked (a knowledge section, a memory
 * document's summary): below it, a hit is noise more often than help. Both contributors use the one value, tuned on
 * the retrieval sets (docs/PERFORMANCE.md).
 *
 * @module
 */

/** Least score for a reference item shown without being asked for. */
export const REFERENCE_MIN_SCORE = 0.12;
