/**
 * Who a chat channel answers, and with what trust: the owner → `owner`, listed users → `household`, other members of
 * listed groups → `guest`, everyone else nobody (ignored). Shared by chat channels (QQ's `onebot.owner`,
 * `allow_users`, `allow_groups`); the trust comes from what the channel authenticated, never from the text.
 *
 * @module
 */

import type { Trust } from "../identity/trust.ts";

/** A chat: one person, or a group. */
export interface Conversation {
  kind: "private" | "group";
  id: string;
}

/** The lists of one chat channel. */
export interface AllowListOptions {
  /** The owner's id on the channel; "" for none. */
  owner: string;
  users: readonly string[];
  groups: readonly string[];
}

/** A channel's allow list. */
export class AllowList {
  #options: AllowListOptions;

  /**
   * @example
   * ```ts
   * const allow = new AllowList({ owner: "10001", users: ["10002"], groups: ["555"] });
   * allow.trustOf("10003", { kind: "group", id: "555" }); // "guest"
   * ```
   */
  constructor(options: AllowListOptions) {
    this.#options = options;
  }

  /**
   * The trust of `userId` speaking in `conversation`, or undefined when the channel ignores them: in a group not
   * listed nobody is answered; in private only the owner and listed users are.
   *
   * @example
   * ```ts
   * const allow = new AllowList({ owner: "10001", users: [], groups: [] });
   * allow.trustOf("10001", { kind: "private", id: "10001" }); // "owner"
   * allow.trustOf("10009", { kind: "private", id: "10009" }); // undefined
   * ```
   */
  trustOf(userId: string, conversation: Conversation): Trust | undefined {
    const { owner, users, groups } = this.#options;
    if (conversation.kind === "group" && !groups.includes(conversation.id)) return undefined;
    if (owner !== "" && userId === owner) return "owner";
    if (users.includes(userId)) return "household";
    return conversation.kind === "group" ? "guest" : undefined;
  }

  /**
   * Whether a notice from `group` (or, outside a group, from `user`) concerns a chat the channel answers.
   *
   * @example
   * ```ts
   * const allow = new AllowList({ owner: "10001", users: [], groups: ["555"] });
   * allow.knows("555", undefined); // true
   * allow.knows(undefined, "10009"); // false
   * ```
   */
  knows(group: string | undefined, user: string | undefined): boolean {
    const { owner, users, groups } = this.#options;
    if (group !== undefined) return groups.includes(group);
    return user !== undefined && (user === owner || users.includes(user));
  }
}
