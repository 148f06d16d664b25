/**
 * The contract between the agent and whatever adds to its prompt (knowledge, later memory and skills). Neutral
 * ground: contributors import this, never the agent.
 *
 * What changes rarely goes in the one system message, after the persona; providers cache identical prompt prefixes,
 * so it must stay byte-identical from turn to turn. What belongs to one message goes in that message's reference
 * block, which is sent once and not kept in history.
 *
 * @module
 */

/** One labelled block. */
export interface PromptSection {
  title: string;
  body: string;
}

/** What a contributor sees of the message being answered. */
export interface PromptInput {
  text: string;
  source: string;
  sender: string;
  /** Milliseconds since the epoch. */
  time: number;
}

/** Adds to the prompt. Both parts are optional. */
export interface PromptContributor {
  /** Guidance and catalogues for the system message; must change rarely (a new topic, not a new message). */
  system?(): PromptSection | undefined;
  /** Material for this message only (search hits, recalled memories); quoted as reference, never as instructions. */
  reference?(input: PromptInput): PromptSection | undefined;
}
