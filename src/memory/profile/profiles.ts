/**
 * The household's profiles as the console's people endpoints and the prompt read them: who the members are, whose
 * profile a reader may open, and one member's profile as that reader may see it. Reads through the memory service's
 * own views ({@link ProfileSource}), so every fact and every source shown follows `identity/visibility.ts`.
 *
 * Who may open a profile (issue 39.2): the person themself and the owner — a household member only their own, a guest
 * none. Within a profile, a member still sees only the facts and messages they may read (a fact about them learnt in
 * the owner's private chat stays the owner's).
 *
 * @module
 */

import type { Config } from "../../config/schema.ts";
import type { Trust } from "../../identity/trust.ts";
import type { Viewer } from "../../identity/visibility.ts";
import type { Fact } from "../graph/fact.ts";
import { factVisibleTo } from "../graph/heard.ts";
import { type FactView, factViews } from "../fact_views.ts";
import { entityFacts } from "../memory_inspection.ts";
import type { Memory } from "../memory.ts";
import { buildProfile, householdMembers, type Member, type Profile } from "./profile.ts";

/** What the profiles read of memory (`MemoryService.profileSource()`, {@link memoryProfileSource}). */
export interface ProfileSource {
  /** An entity's facts as `viewer` may read them, with their sources (the console's view). */
  inspectGraph(name: string, viewer?: Viewer): Promise<FactView[]>;
  /** Other entities' facts whose value is `name`, as `viewer` may read them, with their sources. */
  inspectFactsNaming(name: string, viewer: Viewer): Promise<FactView[]>;
  /** Senders of facts not a guest's, with their highest trust. */
  speakers(): Promise<Array<{ name: string; trust: Trust }>>;
  /** An entity's facts `viewer` may read, without sources. */
  factsAbout(name: string, viewer: Viewer): Promise<Fact[]>;
}

/**
 * The profiles' reads over an open memory (`memory` waits for it to open): every fact filtered by `factVisibleTo` and
 * every source by `visibleTo`, as the console's memory views do.
 *
 * @example
 * ```ts
 * import type { Memory } from "../memory.ts";
 *
 * declare const memory: Memory;
 * const source = memoryProfileSource(() => Promise.resolve(memory));
 * await source.speakers(); // [{ name: "alice", trust: "household" }]
 * ```
 */
export function memoryProfileSource(memory: () => Promise<Memory>): ProfileSource {
  return {
    inspectGraph: async (name, viewer) => await entityFacts(await memory(), name, viewer),
    inspectFactsNaming: async (name, viewer) => {
      const open = await memory();
      return await factViews(
        open,
        open.graph().factsNaming(name).filter((fact) => factVisibleTo(viewer, fact)),
        viewer,
      );
    },
    speakers: async () => (await memory()).graph().speakers(),
    factsAbout: async (name, viewer) =>
      (await memory()).graph().facts(name).filter((fact) => factVisibleTo(viewer, fact)),
  };
}

/** A member as `GET /api/people` lists them: with how many facts about them hold that the reader may read. */
export interface MemberView extends Member {
  facts: number;
}

/**
 * Why `viewer` may not open `person`'s profile, or `undefined` when they may: the owner opens every profile, a
 * household member their own, a guest none.
 *
 * @example
 * ```ts
 * profileRefusal({ sender: "owner", trust: "owner" }, "alice"); // undefined
 * profileRefusal({ sender: "alice", trust: "household" }, "alice"); // undefined
 * profileRefusal({ sender: "alice", trust: "household" }, "bob");
 * // 'A profile is read by its person and the owner only; "alice" (trust household) asked for "bob"'s'
 * ```
 */
export function profileRefusal(viewer: Viewer, person: string): string | undefined {
  if (viewer.trust === "owner") return undefined;
  if (viewer.trust === "household" && viewer.sender === person) return undefined;
  return `A profile is read by its person and the owner only; ${
    JSON.stringify(viewer.sender)
  } (trust ${viewer.trust}) asked for ${JSON.stringify(person)}'s`;
}

/**
 * The members the `daemon` section names: the owner (the holder of `api_token`, or every loopback caller when no
 * token is set at all — both are called "owner") and each `api_tokens` person of trust household or owner. Guests
 * are no members.
 *
 * @example
 * ```ts
 * configuredMembers({
 *   api_token: "owner-token-0123456789",
 *   api_tokens: { alice: { token: "alice-token-0123456789", trust: "household" }, gus: { token: "gus-token-0123456789", trust: "guest" } },
 * });
 * // [{ id: "owner", trust: "owner" }, { id: "alice", trust: "household" }]
 * ```
 */
export function configuredMembers(
  daemon: Pick<Config["daemon"], "api_token" | "api_tokens">,
): Array<{ id: string; trust: Trust }> {
  const members: Array<{ id: string; trust: Trust }> = [{ id: "owner", trust: "owner" }];
  for (const [id, person] of Object.entries(daemon.api_tokens)) {
    if (person.trust !== "guest" && id !== "owner") members.push({ id, trust: person.trust });
  }
  return members;
}

/** The household's profiles over memory. */
export class Profiles {
  #source: ProfileSource;
  #configured: () => ReadonlyArray<{ id: string; trust: Trust }>;

  /**
   * `configured` names the members the configuration knows (the owner, household and owner tokens).
   *
   * @example
   * ```ts
   * import type { MemoryService } from "../memory_service.ts";
   *
   * declare const memory: MemoryService;
   * const profiles = new Profiles(memory.profileSource(), () => [{ id: "owner", trust: "owner" }]);
   * await profiles.profile("alice", { sender: "alice", trust: "household" }); // { person: "alice", kinds: { … } }
   * ```
   */
  constructor(source: ProfileSource, configured: () => ReadonlyArray<{ id: string; trust: Trust }>) {
    this.#source = source;
    this.#configured = configured;
  }

  /** The members' ids, for the prompt's profile section (`profile_prompt.ts`). */
  async memberIds(): Promise<string[]> {
    return (await this.members()).map((member) => member.id);
  }

  /** Every member of the household: configured ones first, then those who have spoken. */
  async members(): Promise<Member[]> {
    return householdMembers(this.#configured(), await this.#source.speakers());
  }

  /**
   * The members whose profile `viewer` may open (the owner: all; a member: themself; a guest: none), each with the
   * number of facts about them that hold and that the viewer may read.
   *
   * @example
   * ```ts
   * declare const profiles: Profiles;
   * await profiles.visibleMembers({ sender: "alice", trust: "household" });
   * // [{ id: "alice", trust: "household", known_from: ["config", "spoken"], facts: 4 }]
   * ```
   */
  async visibleMembers(viewer: Viewer): Promise<MemberView[]> {
    const members = (await this.members()).filter((member) => profileRefusal(viewer, member.id) === undefined);
    return await Promise.all(members.map(async (member) => ({
      ...member,
      facts: (await this.#source.factsAbout(member.id, viewer)).filter((fact) => fact.validTo === null).length,
    })));
  }

  /**
   * The facts about `person` that `viewer` may read, without their sources (the prompt's compact lines).
   *
   * @example
   * ```ts
   * declare const profiles: Profiles;
   * await profiles.factsAbout("alice", { sender: "owner", trust: "owner" }); // [{ predicate: "allergic to", … }]
   * ```
   */
  factsAbout(person: string, viewer: Viewer): Promise<Fact[]> {
    return this.#source.factsAbout(person, viewer);
  }

  /**
   * `person`'s profile as `viewer` may read it, or `undefined` when `person` is no member of the household. The
   * caller checks {@link profileRefusal} first.
   */
  async profile(person: string, viewer: Viewer): Promise<Profile | undefined> {
    const members = await this.members();
    if (!members.some((member) => member.id === person)) return undefined;
    const people = new Set(members.map((member) => member.id.toLowerCase()));
    const [about, naming] = await Promise.all([
      this.#source.inspectGraph(person, viewer),
      this.#source.inspectFactsNaming(person, viewer),
    ]);
    return buildProfile(person, about, people, naming);
  }
}
