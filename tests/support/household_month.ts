/**
 * A household's month, scripted: what the owner, alice and bob (household members) and a visitor (a guest) told the
 * butler over four weeks, and the facts a distiller would draw from each line — for the profile tests (issue 39.2).
 * {@link distillerAnswer} plays the LLM distiller: it reads the event ids of the lines it is sent and answers with
 * those lines' facts, in the distiller's contract.
 *
 * @module
 */

import type { Trust } from "../../src/identity/trust.ts";

/** One fact the distiller draws from a line. */
export interface MonthFact {
  subject: string;
  predicate: string;
  object: string;
  single: boolean;
}

/** One message of the month. */
export interface MonthLine {
  /** The event id (the unit test journals under it; the daemon names its own). */
  id: string;
  /** Days after the month's start. */
  day: number;
  sender: "owner" | "alice" | "bob" | "visitor";
  trust: Trust;
  text: string;
  facts: MonthFact[];
}

const person = (subject: string, predicate: string, object: string, single = false): MonthFact => ({
  subject,
  predicate,
  object,
  single,
});

const TRUST = { owner: "owner", alice: "household", bob: "household", visitor: "guest" } as const;

const line = (
  id: string,
  day: number,
  sender: MonthLine["sender"],
  text: string,
  ...facts: MonthFact[]
): MonthLine => ({
  id,
  day,
  sender,
  trust: TRUST[sender],
  text,
  facts,
});

/** The month, in order: 30 messages, about half of them stating something about a person. */
export const HOUSEHOLD_MONTH: readonly MonthLine[] = [
  line("m01", 0, "alice", "I'm allergic to peanuts.", person("alice", "allergic to", "peanuts")),
  line("m02", 0, "bob", "My birthday is on March 4.", person("bob", "birthday", "March 4", true)),
  line(
    "m03",
    1,
    "owner",
    "Alice takes cetirizine 10 mg every morning.",
    person("alice", "takes medicine", "cetirizine 10 mg"),
  ),
  line("m04", 1, "alice", "I love strawberries.", person("alice", "likes", "strawberries")),
  line("m05", 2, "bob", "I'm Alice's brother.", person("bob", "brother of", "alice")),
  line("m06", 2, "visitor", "Alice hates cats, by the way.", person("alice", "dislikes", "cats")),
  line("m07", 3, "owner", "The spare key is under the blue flowerpot."),
  line("m08", 3, "alice", "What's the weather tomorrow?"),
  line("m09", 4, "bob", "Remind me to water the plants."),
  line("m10", 5, "owner", "We are out of milk."),
  line("m11", 7, "bob", "My maths exam is on 2026-12-18.", person("bob", "exam", "maths on 2026-12-18")),
  line(
    "m12",
    7,
    "alice",
    "My dentist appointment is on 2026-11-20 at 9.",
    person("alice", "dentist appointment", "2026-11-20 09:00", true),
  ),
  line("m13", 8, "alice", "I prefer green tea in the morning.", person("alice", "prefers", "green tea in the morning")),
  line("m14", 9, "owner", "Turn the hallway light off at 11."),
  line("m15", 10, "bob", "Good night!"),
  line("m16", 11, "alice", "How long do I boil an egg?"),
  line("m17", 12, "owner", "Bob is allergic to penicillin.", person("bob", "allergic to", "penicillin")),
  line(
    "m18",
    14,
    "alice",
    "My dentist appointment moved to 2026-11-27.",
    person("alice", "dentist appointment", "2026-11-27 09:00", true),
  ),
  line("m19", 14, "bob", "I don't like mushrooms.", person("bob", "dislikes", "mushrooms")),
  line("m20", 15, "owner", "Dinner is at 7 tonight."),
  line("m21", 16, "alice", "Play some jazz."),
  line("m22", 17, "bob", "I'm taking ibuprofen for my knee.", person("bob", "takes medicine", "ibuprofen")),
  line("m23", 18, "owner", "Alice's birthday is on June 2.", person("alice", "birthday", "June 2", true)),
  line("m24", 19, "visitor", "Thanks for the tea!"),
  line("m25", 21, "alice", "I'm a big fan of sci-fi films.", person("alice", "likes", "sci-fi films")),
  line("m26", 22, "bob", "My favourite football team is Arsenal.", person("bob", "favourite team", "Arsenal", true)),
  line("m27", 23, "owner", "Bins go out on Tuesday."),
  line("m28", 25, "bob", "I stopped taking ibuprofen; my knee is fine.", person("bob", "takes medicine", "none", true)),
  line("m29", 27, "alice", "Please remind me to call grandma."),
  line("m30", 29, "owner", "Happy end of the month, everyone."),
];

/**
 * The distiller's answer to a request (its messages as the LLM sees them): the facts of every line whose event id
 * the request names and whose text `textOf` finds — the unit test's ids are the month's own; the daemon names its
 * events itself, so lines are also matched by their text.
 *
 * @example
 * ```ts
 * distillerAnswer("Lines:\n[m01] 2026-11-01T09:00 alice: I'm allergic to peanuts.");
 * // '{"facts":[{"subject":{"name":"alice","type":"person"},"predicate":"allergic to","object":"peanuts",…}]}'
 * ```
 */
export function distillerAnswer(userContent: string): string {
  const facts = [];
  for (const match of userContent.matchAll(/^\[([^\]]+)\] \S+ [^:]+: (.*)$/gm)) {
    const [, eventId, text] = match;
    const said = HOUSEHOLD_MONTH.find((entry) => entry.text === text);
    for (const fact of said?.facts ?? []) {
      facts.push({
        subject: { name: fact.subject, type: "person" },
        predicate: fact.predicate,
        object: fact.object,
        single: fact.single,
        provenance: [eventId],
      });
    }
  }
  return JSON.stringify({ facts });
}
