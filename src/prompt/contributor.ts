/**
 * The contract between the agent and whatever adds to its prompt or learns from its turns (knowledge, memory, the
 * plugins' skills, the owner's pending confirmations). Neutral ground: contributors import this, never the agent.
 *
 * What changes rarely goes in the one system message, after the persona; providers cache identical prompt prefixes,
 * so it must stay byte-identical from turn to turn. What belongs to one message goes in that message's reference
 * block, which is sent once and not kept in history. After a turn, contributors hear what was said.
 *
 * @module
 */

import type { Trust } from "../identity/trust.ts";

/** One labelled block. */
export interface PromptSection {
  title: string;
  body: string;
  /**
   * In a reference section: what people said (remembered exchanges, device events), each shown after the body on a
   * line of its own that homed ends with `[said by <sender>, trust <level>]`, so the model — and the agent, which
   * notes the lowest trust a turn's reference block holds — can tell a guest's words from the owner's.
   */
  items?: readonly SaidItem[];
}

/** Something someone said, as a reference section carries it. */
export interface SaidItem {
  /** The text, shown on one line (untrusted: escaped like every other reference text). */
  text: string;
  /** Who said it, as their channel named them; "" when that was not recorded. */
  sender: string;
  /** Their trust when they said it. */
  trust: Trust;
}

/** What a contributor sees of the message being answered. */
export interface PromptInput {
  text: string;
  source: string;
  sender: string;
  /** Milliseconds since the epoch. */
  time: number;
  /**
   * The sender's trust, which the agent passes along. A contributor that gives out what the household said treats a
   * message without one as a guest's (memory's reference block then holds no household memory).
   */
  trust?: Trust;
}

/** One message of the conversation as a contributor sees it, with where it came from. */
export interface HistoryEntry {
  role: "user" | "assistant" | "tool";
  text: string;
  /** The input event whose turn produced it. */
  eventId: string;
  time: number;
  source: string;
  sender: string;
}

/** A finished exchange, for the after-turn hook. */
export interface TurnRecord {
  eventId: string;
  time: number;
  source: string;
  sender: string;
  trust: Trust;
  /** What the user said (without the tag or the reference block). */
  text: string;
  /** The butler's final reply. */
  reply: string;
}

/** Adds to the prompt, or learns from turns. Every part is optional. */
export interface PromptContributor {
  /**
   * Guidance and catalogues for the system message; must change rarely (a new topic, not a new message). `trust` is
   * the asker's: what the household may read but a guest may not (the memory index) is left out of a guest's — one
   * system message per trust level, each stable from turn to turn.
   */
  system?(trust: Trust): PromptSection | undefined | Promise<PromptSection | undefined>;
  /**
   * Material for this message only (search hits, recalled memories); quoted as reference, never as instructions.
   * `history` is the context the request carries, oldest first.
   */
  reference?(
    input: PromptInput,
    history: readonly HistoryEntry[],
  ): PromptSection | undefined | Promise<PromptSection | undefined>;
  /** Called after each successful turn (memory candidates are written here); a throw is logged, never fatal. */
  afterTurn?(turn: TurnRecord): void | Promise<void>;
  /**
   * A message this contributor answers without the model: a tool to call directly (a skill's `/name args` with
   * `command-dispatch: tool`), which goes through the tool registry with the sender's trust like any other call — or
   * homed's own decision (the owner's yes to a waiting action), which is no tool at all, so no model can make it.
   * `input.text` is what the person wrote, without what homed added (the description of a picture, a transcript).
   */
  dispatch?(input: PromptInput): Dispatch | undefined;
}

/** A message answered without the model: a tool call, or homed's own decision. */
export type Dispatch = ToolDispatch | DecisionDispatch;

/** A tool call that answers a message without the model. */
export interface ToolDispatch {
  tool: string;
  args: Record<string, unknown>;
}

/**
 * An answer homed decides itself from the person's own message, such as the owner's yes to a sensitive action. It is
 * reachable only from a message (never from a tool the model could call): its result is the reply.
 */
export interface DecisionDispatch {
  /** What the decision is, for logs and the turn inspector (e.g. `confirmation a1b2`). */
  decision: string;
  /** Carries it out; `signal` aborts when the turn is cancelled. Resolves with the reply. */
  decide(signal: AbortSignal): Promise<string>;
}
