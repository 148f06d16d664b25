/**
 * Who may read what was said (issue 34.4): the one rule every read path applies — a turn's prompt (recent context,
 * reference block, recall, tool results), the console's memory pages, the MCP server's `memory_recall`.
 *
 * An item (a context entry, a journal line, a document, one of the messages a fact was learnt from) is known by where
 * it was said (`source`), who said it (`sender`) and their trust then. A group chat (`qq:group:*`, any `…:group:…`)
 * is *shared*: the household is in it. Every other channel is a person's *private* chat — `qq:private:*`, `http`,
 * `openai:*`, `mcp`, `serial:*`, `mic`, a timer's `timer:<id>` (the schedule's creator is the event's sender), and any
 * channel homed does not know. An item whose source was not recorded (`""`: kept before this rule) is the household's.
 *
 * - The owner reads everything.
 * - A household member reads their own items, everything said in shared chats, and the household's items.
 * - A guest reads only their own items (and public knowledge, which is not an item).
 *
 * "Own" means the same sender, said at no higher trust than the reader's now: a guest whose QQ number happens to equal
 * a household member's token name never reads that member's words.
 *
 * @module
 */

import type { Trust } from "./trust.ts";

/** Who reads: the turn's sender (or the API token's person) and their trust. */
export interface Viewer {
  sender: string;
  trust: Trust;
}

/** Where an item came from. */
export interface Provenance {
  /** The channel it was said on; `""` when not recorded (the household's). */
  source: string;
  /** Who said it, as their channel named them; `""` when not recorded. */
  sender: string;
  /** Their trust then; absent when not recorded (the household's). */
  trust?: Trust | undefined;
}

const RANK: Record<Trust, number> = { guest: 0, household: 1, owner: 2 };

/**
 * True when `source` is a chat the household shares (a group), or an item of unknown source (the household's).
 *
 * @example
 * ```ts
 * isSharedSource("qq:group:500050005"); // true
 * isSharedSource("qq:private:20002000"); // false
 * isSharedSource("http"); // false
 * isSharedSource(""); // true: not recorded, the household's
 * ```
 */
export function isSharedSource(source: string): boolean {
  return source === "" || /(^|:)group:/.test(source);
}

/**
 * True when `item` was said by `viewer` themself (same sender, at no higher trust than theirs now).
 *
 * @example
 * ```ts
 * isOwn({ sender: "alice", trust: "household" }, { source: "http", sender: "alice", trust: "household" }); // true
 * isOwn({ sender: "alice", trust: "guest" }, { source: "http", sender: "alice", trust: "owner" }); // false
 * ```
 */
export function isOwn(viewer: Viewer, item: Provenance): boolean {
  if (item.sender === "" || item.sender !== viewer.sender) return false;
  return (RANK[item.trust ?? "household"] ?? 0) <= (RANK[viewer.trust] ?? 0);
}

/**
 * The rule: may `viewer` read `item`?
 *
 * @example
 * ```ts
 * const owner = { source: "qq:private:20002000", sender: "20002000", trust: "owner" } as const;
 * visibleTo({ sender: "20002000", trust: "owner" }, owner); // true
 * visibleTo({ sender: "alice", trust: "household" }, owner); // false: the owner's private chat
 * visibleTo({ sender: "alice", trust: "household" }, { ...owner, source: "qq:group:1" }); // true: a shared chat
 * visibleTo({ sender: "visitor", trust: "guest" }, { ...owner, source: "qq:group:1" }); // false: a guest's own only
 * ```
 */
export function visibleTo(viewer: Viewer, item: Provenance): boolean {
  if (viewer.trust === "owner") return true;
  if (isOwn(viewer, item)) return true;
  return viewer.trust === "household" && isSharedSource(item.source);
}

/**
 * True when everyone who may read `outer` may also read `inner` — e.g. whether the turn said before a document may be
 * kept with it (its context field, which recall shows): an owner's private words never ride along with a member's.
 *
 * @example
 * ```ts
 * const alice = { source: "http", sender: "alice", trust: "household" } as const;
 * readersIncluded({ source: "http", sender: "owner", trust: "owner" }, alice); // false
 * readersIncluded({ source: "http", sender: "alice", trust: "household" }, alice); // true
 * ```
 */
export function readersIncluded(inner: Provenance, outer: Provenance): boolean {
  // Outer's readers: the owner, outer's sender, and (when shared) every household member.
  const sender = { sender: outer.sender, trust: outer.trust ?? "household" };
  if (outer.sender !== "" && !visibleTo(sender, inner)) return false;
  return !isSharedSource(outer.source) || isSharedSource(inner.source);
}
