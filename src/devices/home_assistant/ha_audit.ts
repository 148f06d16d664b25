/**
 * The audit list of the Home Assistant device: every service call that reached it — refused, confirmed, done or
 * failed — with the turn and who asked, each step kept with its time, for `GET /api/smart_home/actions`. Service data
 * is kept masked ({@link maskData}). The list is bounded: the oldest entries go first.
 *
 * @module
 */

import type { Clock } from "../../clock.ts";
import type { Trust } from "../../identity/trust.ts";
import { maskData } from "./ha_summary.ts";

/** Most entries the audit list keeps (the oldest go first). */
export const AUDIT_LIMIT = 500;

/** What an audited action came to. */
export type AuditOutcome = "refused" | "asked" | "confirmed" | "done" | "failed";

/** One action the butler was asked to take, for `GET /api/smart_home/actions`. */
export interface AuditEntry {
  /** `ha-1`, `ha-2`… */
  id: string;
  /** When it was asked (ISO 8601). */
  at: string;
  /** The id of the input event whose turn asked for it. */
  turn: string;
  source: string;
  sender: string;
  trust: Trust;
  domain: string;
  service: string;
  entity_id: string;
  /** The service data, codes and passwords masked. */
  data: Record<string, unknown>;
  /** Whether it needed the owner's yes. */
  confirm: boolean;
  /** Where it stands now. */
  outcome: AuditOutcome;
  /** HA's answer, the refusal, or the error. */
  detail: string;
  /** Every step, oldest first. */
  steps: Array<{ at: string; outcome: AuditOutcome; detail: string }>;
}

/** The turn a call was asked in. */
export interface AskingTurn {
  eventId: string;
  source: string;
  sender: string;
  trust: Trust;
}

/** The audit list, at most {@link AUDIT_LIMIT} entries. */
export class HaAudit {
  readonly #clock: Clock;
  #entries: AuditEntry[] = [];
  #seq = 0;

  /**
   * @example
   * ```ts
   * import { systemClock } from "../../clock.ts";
   *
   * const audit = new HaAudit(systemClock);
   * const turn = { eventId: "ev-1", source: "qq:1", sender: "1", trust: "owner" as const };
   * const entry = audit.record(turn, "light", "turn_on", "light.kitchen", {});
   * audit.step(entry, "done", "Home Assistant ran light.turn_on on light.kitchen");
   * audit.list()[0]?.outcome; // "done"
   * ```
   */
  constructor(clock: Clock) {
    this.#clock = clock;
  }

  /** Entries in the list. */
  get size(): number {
    return this.#entries.length;
  }

  /** The list, newest first, as copies. */
  list(): AuditEntry[] {
    return this.#entries.map((entry) => structuredClone(entry)).reverse();
  }

  /** Adds a call as `asked`, its data masked; the oldest entry goes when the list is full. */
  record(
    turn: AskingTurn,
    domain: string,
    service: string,
    entityId: string,
    data: Record<string, unknown>,
  ): AuditEntry {
    const at = new Date(this.#clock.now()).toISOString();
    const entry: AuditEntry = {
      id: `ha-${++this.#seq}`,
      at,
      turn: turn.eventId,
      source: turn.source,
      sender: turn.sender,
      trust: turn.trust,
      domain,
      service,
      entity_id: entityId,
      data: maskData(data),
      confirm: false,
      outcome: "asked",
      detail: "",
      steps: [],
    };
    this.#entries.push(entry);
    while (this.#entries.length > AUDIT_LIMIT) this.#entries.shift();
    return entry;
  }

  /** Moves an entry on to `outcome`, keeping the step. */
  step(entry: AuditEntry, outcome: AuditOutcome, detail: string): void {
    entry.outcome = outcome;
    entry.detail = detail;
    entry.steps.push({ at: new Date(this.#clock.now()).toISOString(), outcome, detail });
  }
}
