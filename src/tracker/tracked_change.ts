/**
 * One change the tracker found: what it reports ({@link TrackedChange}) and, for diff, commit and revert, what is on
 * both sides of it ({@link ChangeItem}); with how two sides compare and how one is named in messages. Kept apart from
 * the tracker's class so the comparison, the diff and the revert — each in its own file — speak of the same thing.
 *
 * @module
 */

import type { Entry } from "./tree_access.ts";

/** One change since the last commit. */
export interface TrackedChange {
  /** `knowledge/tea/content.md`. */
  path: string;
  /**
   * `retargeted`: a link that points elsewhere than at the last commit; a link where a file was is `modified`.
   * `hardlinked`: a file with hard links outside the tracked parts, not read (so whether it changed is not known).
   */
  change: "added" | "modified" | "deleted" | "replaced" | "retargeted" | "hardlinked";
  /** Bytes now (absent for a deletion, a link, a replaced folder or a file not read). */
  size?: number;
  /** Bytes at the last commit or in the lower layer. */
  baselineSize?: number;
  /** The target of the symbolic link there now (never followed). */
  link?: string;
  /** The target of the link at the last commit or in the lower layer. */
  baselineLink?: string;
  /** For `hardlinked`: how many hard links the file has… */
  hardLinks?: number;
  /** …and how many of them are in the tracked parts. */
  hardLinksInside?: number;
  /** How it was found. */
  source: "overlay" | "manifest";
}

/** A change with what is on both sides, for diff, commit and revert. */
export interface ChangeItem extends TrackedChange {
  current?: Entry;
  baseline?: Entry;
  /** Where the baseline came from. */
  origin?: "commit" | "lower";
}

/**
 * Whether two sides hold the same: the same bytes, or links to the same target. A file not read is never the same
 * as anything.
 *
 * @example
 * ```ts
 * sameEntry({ kind: "link", target: "a" }, { kind: "link", target: "a" }); // true
 * ```
 */
export function sameEntry(a: Entry, b: Entry): boolean {
  // A file not read is never the same as anything.
  if (a.kind !== "file" || b.kind !== "file") return a.kind === "link" && b.kind === "link" && a.target === b.target;
  if (a.data.length !== b.data.length) return false;
  for (let i = 0; i < a.data.length; i++) if (a.data[i] !== b.data[i]) return false;
  return true;
}

/**
 * `link → target` or `12 bytes`, for messages and the diff.
 *
 * @example
 * ```ts
 * described({ kind: "link", target: "/etc" }); // "link → /etc"
 * ```
 */
export function described(entry: Entry): string {
  if (entry.kind === "hardlinked") return `a file with ${entry.links} hard links, not read`;
  return entry.kind === "link" ? `link → ${entry.target}` : `${entry.data.length} bytes`;
}
