/**
 * The months' English names, written out here: Intl's would cost resident memory the daemon does not otherwise pay.
 *
 * @module
 */

/**
 * January to December; index 0 is January.
 *
 * @example
 * ```ts
 * MONTH_NAMES[11]; // "December"
 * ```
 */
export const MONTH_NAMES: readonly string[] = [
  "January",
  "February",
  "March",
  "April",
  "May",
  "June",
  "July",
  "August",
  "September",
  "October",
  "November",
  "December",
];
