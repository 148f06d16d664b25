/**
 * Who may read what the journal holds: a line's turn is its user line's (the butler's reply is read by whoever may
 * read what it answered). Documents, recalled lines and distilled facts take their readers from here.
 *
 * @module
 */

import type { Provenance } from "../../identity/visibility.ts";
import { type HeardIn, OWNER_ONLY } from "../graph/heard.ts";
import type { MemoryEntry } from "./text_memory.ts";

/**
 * The input events among `entries` whose turn was `sender`'s as a guest (both halves of an exchange share one).
 *
 * @example
 * ```ts
 * const time = Date.now();
 * saidByGuest([
 *   { eventId: "e1", time, role: "user", source: "http", sender: "visitor", trust: "guest", text: "Hi" },
 *   { eventId: "e2", time, role: "user", source: "http", sender: "owner", trust: "owner", text: "Hello" },
 * ], "visitor"); // Set { "e1" }
 * ```
 */
export function saidByGuest(entries: readonly MemoryEntry[], sender: string): Set<string> {
  return new Set(
    entries.filter((entry) => entry.role === "user" && entry.trust === "guest" && entry.sender === sender)
      .map((entry) => entry.eventId),
  );
}

/**
 * Where the turn of each journal line was said: its user line's channel, sender and trust (the butler's reply of an
 * exchange is read by whoever may read what it answered); a reply whose question is not among `entries` counts as
 * said on its channel by nobody in particular.
 *
 * @example
 * ```ts
 * const time = Date.now();
 * const question = { eventId: "e1", time, role: "user" as const, source: "qq:private:1", sender: "alice", text: "?" };
 * const reply = { ...question, role: "assistant" as const, sender: "butler", text: "Top drawer." };
 * origins([question, reply])(reply); // { source: "qq:private:1", sender: "alice", trust: undefined }
 * ```
 */
export function origins(entries: readonly MemoryEntry[]): (entry: MemoryEntry) => Provenance {
  const asked = new Map(entries.filter((entry) => entry.role === "user").map((entry) => [entry.eventId, entry]));
  return (entry) => {
    const user = asked.get(entry.eventId) ?? (entry.role === "user" ? entry : undefined);
    return user
      ? { source: user.source, sender: user.sender, trust: user.trust }
      : { source: entry.source, sender: "", trust: entry.trust };
  };
}

/**
 * The messages among `batch` a distilled fact cites, as who may read them (the fact's `heard`); a fact citing none of
 * them is the owner's alone until someone says it where others may read it.
 *
 * @example
 * ```ts
 * const line = { eventId: "e1", time: Date.now(), role: "user" as const, source: "http", sender: "alice", text: "…" };
 * heardIn([line], ["e1"]); // [{ event: "e1", source: "http", sender: "alice", trust: undefined }]
 * heardIn([line], ["e9"]); // [OWNER_ONLY]
 * ```
 */
export function heardIn(batch: readonly MemoryEntry[], provenance: readonly string[]): HeardIn[] {
  const origin = origins(batch);
  const byEvent = new Map(batch.map((entry) => [entry.eventId, entry]));
  const heard = provenance.flatMap((event) => {
    const entry = byEvent.get(event);
    return entry ? [{ event, ...origin(entry) }] : [];
  });
  return heard.length ? heard : [OWNER_ONLY];
}
