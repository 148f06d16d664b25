/**
 * Who may make the butler act. A channel sets an input's trust level from what it authenticated — a token, a QQ
 * account on the allow list — never from message text or a field the sender fills in.
 *
 * @module
 */

/** How far homed trusts the sender of an input. */
export type Trust = "owner" | "household" | "guest";

/** Who may cause a tool: anyone who can chat, household members and the owner, or the owner alone. */
export type ToolAllow = "anyone" | "household" | "owner";

const RANK: Record<Trust, number> = { guest: 0, household: 1, owner: 2 };
const NEEDED: Record<ToolAllow, number> = { anyone: 0, household: 1, owner: 2 };

/**
 * True when a sender of `trust` may cause a tool that allows `rule`.
 *
 * @example
 * ```ts
 * permits("household", "household"); // true
 * permits("owner", "guest"); // false
 * ```
 */
export function permits(rule: ToolAllow, trust: Trust): boolean {
  return RANK[trust] >= NEEDED[rule];
}

/**
 * The lower of two trust levels; a value that is no trust level (read back from a file, say) counts as `guest`.
 *
 * @example
 * ```ts
 * lowerTrust("owner", "household"); // "household"
 * lowerTrust("owner", "stranger" as Trust); // "guest"
 * ```
 */
export function lowerTrust(a: Trust, b: Trust): Trust {
  const rank = (trust: Trust) => RANK[trust] ?? -1;
  const lower = rank(a) <= rank(b) ? a : b;
  return rank(lower) < 0 ? "guest" : lower;
}

/** The rule in words, for refusals: "the owner only", "household members and the owner". */
export function describeRule(rule: ToolAllow): string {
  return rule === "owner" ? "the owner only" : rule === "household" ? "household members and the owner" : "anyone";
}
