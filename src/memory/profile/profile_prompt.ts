/**
 * The profiles' part of a message's reference block (issue 39.2): for the sender and each member the message names,
 * one compact line of what memory holds about them — health first, then dates ahead, then preferences — at most
 * 300 characters each (`PROMPT_LINE_MAX`). Reference material, never the system message: it changes with every
 * message and is learnt text (quoted and escaped like the rest of the block).
 *
 * Each line holds only facts the sender may read (`factVisibleTo`, the rule of every read path): a member naming
 * another member is told what the household may read about them, never what was said about them in someone else's
 * private chat; a guest's message gets no section at all (a guest reads no graph facts).
 *
 * @module
 */

import type { PromptContributor, PromptInput, PromptSection } from "../../prompt/contributor.ts";
import type { Viewer } from "../../identity/visibility.ts";
import type { Fact } from "../graph/fact.ts";
import { compactLine } from "./profile.ts";

/** What the profile section reads ({@linkcode Profiles} has both; the memory's prompt adapts its graph). */
export interface PeopleFacts {
  /** The household's members' ids (sender names). */
  memberIds(): Promise<string[]>;
  /** The facts about `person` that `viewer` may read. */
  factsAbout(person: string, viewer: Viewer): Promise<Fact[]>;
}

/** People a message's section describes at most: the sender and two named. */
export const PROMPT_PEOPLE_MAX = 3;

/** How long the list of members is reused before it is read again (it changes only when the memory job runs). */
const MEMBERS_TTL_MS = 60_000;

/**
 * Whether `text` names `id`: as a whole word for a Latin name or a number, anywhere for a name in Chinese; a name of
 * one character is never taken as named (it would match too much).
 *
 * @example
 * ```ts
 * names("Is bob coming?", "bob"); // true
 * names("bobsleigh tonight", "bob"); // false
 * names("明天小美考试", "小美"); // true
 * ```
 */
export function names(text: string, id: string): boolean {
  if ([...id].length < 2) return false;
  if (/^[\p{Script=Latin}\p{N}_.@-]+$/u.test(id)) {
    const escaped = id.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    return new RegExp(`(?<![\\p{L}\\p{N}])${escaped}(?![\\p{L}\\p{N}])`, "iu").test(text);
  }
  return text.includes(id);
}

/** The profile section of the reference block. */
export class ProfilePrompt implements PromptContributor {
  #people: PeopleFacts;
  #members: { ids: string[]; at: number } | undefined;

  /**
   * @example
   * ```ts
   * import type { MemoryService } from "../memory_service.ts";
   * import { Profiles } from "./profiles.ts";
   *
   * declare const memory: MemoryService;
   * const prompt = new ProfilePrompt(new Profiles(memory.profileSource(), () => [{ id: "owner", trust: "owner" }]));
   * const input = { text: "What should I cook for alice?", source: "http", sender: "owner", trust: "owner" as const, time: Date.now() };
   * await prompt.reference(input);
   * // { title: "People in this message (memory's profiles)", body: "- alice — allergic to: peanuts; …" }
   * ```
   */
  constructor(people: PeopleFacts) {
    this.#people = people;
  }

  async #memberIds(now: number): Promise<string[]> {
    if (this.#members && now - this.#members.at < MEMBERS_TTL_MS) return this.#members.ids;
    const ids = await this.#people.memberIds();
    this.#members = { ids, at: now };
    return ids;
  }

  /** The sender's line and those of the members the message names; `undefined` for a guest or when none has one. */
  async reference(input: PromptInput): Promise<PromptSection | undefined> {
    const trust = input.trust ?? "guest";
    if (trust === "guest") return undefined;
    const viewer = { sender: input.sender, trust };
    // A memory that could not be opened leaves the turn without profiles rather than failing it.
    const ids = await this.#memberIds(input.time).catch(() => undefined);
    if (!ids) return undefined;
    const people = [input.sender, ...ids.filter((id) => id !== input.sender && names(input.text, id))]
      .slice(0, PROMPT_PEOPLE_MAX);
    const known = new Set(ids.map((id) => id.toLowerCase()));
    const lines: string[] = [];
    for (const person of people) {
      const facts = await this.#people.factsAbout(person, viewer).catch(() => []);
      const line = compactLine(person, facts, input.time, known);
      if (line) lines.push(`- ${line}`);
    }
    if (!lines.length) return undefined;
    return { title: "People in this message (memory's profiles)", body: lines.join("\n") };
  }
}
