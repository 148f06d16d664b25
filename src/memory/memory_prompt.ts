/**
 * Memory's part of the prompt. In the system message, the graph index — the entities memory_recall knows about — kept
 * as text and rebuilt only when told (after the memory job, a forget), so the message stays byte-identical between
 * turns and providers can cache it. In a message's reference block, up to three documents that match it, only those
 * its sender may read, each naming who said it then — after, as the section's body, a compact profile of the sender
 * and of each member the message names (`profile/profile_prompt.ts`: only facts the sender may read).
 *
 * @module
 */

import type { HistoryEntry, PromptContributor, PromptInput, PromptSection } from "../prompt/contributor.ts";
import { REFERENCE_MIN_SCORE } from "../prompt/reference_floor.ts";
import type { Trust } from "../identity/trust.ts";
import type { GraphStore } from "./graph/graph_store.ts";
import { factVisibleTo } from "./graph/heard.ts";
import type { Memory } from "./memory.ts";
import { ProfilePrompt } from "./profile/profile_prompt.ts";

/** The memory's prompt contributor; the {@link MemoryService} answers the agent through it. */
export class MemoryPrompt implements PromptContributor {
  #memory: () => Promise<Memory>;
  #indexEntities: number;
  #graphIndex = "";
  /** The sender's and the named members' profiles (issue 39.2), at the head of the memory section. */
  #profiles: ProfilePrompt;

  /**
   * `memory` gives the open memory (waiting for it to open; rejecting when it could not be); the index lists at most
   * `indexEntities` entities.
   *
   * @example
   * ```ts
   * import type { Memory } from "./memory.ts";
   *
   * declare const memory: Memory;
   * const prompt = new MemoryPrompt(() => Promise.resolve(memory), 60);
   * prompt.refresh(memory.graph()); // after each memory job
   * prompt.system("owner"); // { title: "Household memory index (…)", body: "spare key (thing) ×2; Leo (person) ×1" }
   * ```
   */
  constructor(memory: () => Promise<Memory>, indexEntities = 60) {
    this.#memory = memory;
    this.#indexEntities = indexEntities;
    // Members here are those who have told memory something (the graph knows no configuration); the sender is always
    // looked up, so a configured member who never spoke still has their line when they speak.
    this.#profiles = new ProfilePrompt({
      memberIds: async () => (await memory()).graph().speakers().map((speaker) => speaker.name),
      factsAbout: async (person, viewer) =>
        (await memory()).graph().openFactsNamed(person).filter((fact) => factVisibleTo(viewer, fact)),
    });
  }

  /** Rebuilds the graph index from `graph`. */
  refresh(graph: GraphStore): void {
    // The system message is everyone's: it names only entities with a fact the whole household may read, said by a
    // household member or the owner — never what was learnt only in someone's private chat, nor a guest's claim.
    const limit = this.#indexEntities;
    const household = { sender: "", trust: "household" as const };
    // Each candidate's own facts that hold, read by id: this runs after every memory job, and a read per name
    // (`graph.facts`) scanned every entity's aliases, so the job's cost grew with the whole graph.
    const entities = graph.indexWithFacts(limit * 4).filter((entity) =>
      entity.facts.some((fact) => fact.trust !== "guest" && factVisibleTo(household, fact))
    ).slice(0, limit);
    this.#graphIndex = entities.map((e) => `${e.name} (${e.type}) ×${e.mentions}`).join("; ");
  }

  /** The graph index for the system message; it changes only on {@link MemoryPrompt.refresh}. */
  system(trust: Trust): PromptSection | undefined {
    // A guest reads no graph facts, so not even their names.
    if (this.#graphIndex === "" || trust === "guest") return undefined;
    return {
      title: "Household memory index (what memory_recall knows about; details on request)",
      body: this.#graphIndex,
    };
  }

  /**
   * The reference block's memory part: up to three documents that match the message, by summary — for a guest's
   * message (or one whose trust is not given), only documents of that guest's own turns. Each is an item naming who
   * asked in that exchange and their trust then.
   */
  async reference(input: PromptInput, _history: readonly HistoryEntry[]): Promise<PromptSection | undefined> {
    // A memory that could not be opened leaves the turn without references rather than failing it.
    const memory = await this.#memory().catch(() => undefined);
    if (!memory) return undefined;
    // Only what the sender may read (identity/visibility.ts); a message without a trust is a guest's.
    const viewer = { sender: input.sender, trust: input.trust ?? "guest" };
    const hits = memory.documents().search(input.text, 3, false, viewer).filter((hit) =>
      hit.score >= REFERENCE_MIN_SCORE
    );
    const profiles = await this.#profiles.reference(input).catch(() => undefined);
    if (!hits.length && !profiles) return undefined;
    return {
      title: "Earlier in this household (memory; memory_recall for more)",
      body: profiles ? `${profiles.title}:\n${profiles.body}` : "",
      items: hits.map(({ document }) => ({
        text: `${new Date(document.created).toISOString().slice(0, 16)} ${document.summary}`,
        sender: document.sender,
        trust: document.trust,
      })),
    };
  }
}
