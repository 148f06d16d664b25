/**
 * Who a recall is for, and what it may then hold: the trust rule (DESIGN.md, "Trust and the threat model") as recall
 * and the documents kept apply it — a guest's recall holds only what that guest said.
 *
 * @module
 */

import { permits, type Trust } from "../../identity/trust.ts";

/** Who a recall is for: the sender of the turn, as their channel named them, and their trust. */
export interface Asker {
  sender: string;
  trust: Trust;
}

/**
 * The sender whose own words are all that a recall for `asker` may hold — a guest's (or anyone's whose trust is not
 * `owner` or `household`) — or `undefined` when it may hold everything.
 *
 * @example
 * ```ts
 * onlySaidBy({ sender: "visitor", trust: "guest" }); // "visitor"
 * onlySaidBy({ sender: "alice", trust: "household" }); // undefined
 * onlySaidBy(undefined); // undefined
 * ```
 */
export function onlySaidBy(asker: Asker | undefined): string | undefined {
  return !asker || permits("household", asker.trust) ? undefined : asker.sender;
}
