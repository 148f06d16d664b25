/**
 * Asking the owner before a sensitive action (unlocking a door, disarming an alarm, opening the garage). The action
 * is not run: the owner is asked — in the chat where they asked, or on their own channel when someone else did — and
 * the owner's *next* message in that chat decides it: exactly `yes`, `是` or `确认` within the timeout runs it once,
 * costing no LLM call; anything else, the timeout, or anyone else's yes runs nothing. When two actions wait in one
 * chat a bare yes runs neither (homed lists them and asks for `/confirm <id>`): a yes decides only the action it names.
 * `/deny <id>` declines the one it names (a chat's no button sends it).
 *
 * The owner may also answer in the web console ({@link Confirmations.decide}, behind `POST /api/confirmations/<id>`
 * and the owner's token): the same action, run once by the same code, reported the same way (decided on `console`).
 *
 * The decision is homed's, never the model's: it is reachable only from the owner's own message (a
 * {@link DecisionDispatch}) or the owner's own API request, never from a tool, so no model — nor text a model obeys —
 * can confirm anything.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import type { Clock } from "../clock.ts";
import type { Trust } from "../identity/trust.ts";
import type { DecisionDispatch, PromptContributor, PromptInput } from "../prompt/contributor.ts";

/** Who asked for an action, from the turn's tool context. */
export interface AskingTurn {
  eventId: string;
  source: string;
  sender: string;
  trust: Trust;
}

/** One action waiting for the owner. */
interface Pending {
  id: string;
  summary: string;
  run: () => Promise<string>;
  /** The chat whose next owner message decides it. */
  channel: string;
  asked: AskingTurn;
  expiresAt: number;
}

/** What happened to an action that needed the owner: for the audit list. */
export interface ConfirmationOutcome {
  id: string;
  summary: string;
  asked: AskingTurn;
  outcome: "confirmed" | "declined" | "expired";
  result?: string;
  /** The chat of the owner's message that decided it, or `console` (absent when it expired). */
  decidedOn?: string;
  at: number;
}

/** One action waiting for the owner, as `GET /api/confirmations` and the console show it. */
export interface WaitingAction {
  id: string;
  summary: string;
  /** The chat the question went to (whose next owner message decides it). */
  channel: string;
  /** Who asked for it, on which channel, with what trust. */
  asked_by: string;
  asked_on: string;
  trust: Trust;
  /** ISO 8601. */
  expires_at: string;
}

/** What the owner's decision outside a chat did ({@link Confirmations.decide}). */
export interface DecidedAction {
  id: string;
  outcome: "confirmed" | "declined";
  /** The action's result (or its failure) when it was confirmed. */
  result?: string;
}

/** Options of {@link Confirmations}. */
export interface ConfirmationsOptions {
  /** The owner's own channel (`qq:private:<onebot.owner>`), for actions someone else asked for; none: refused. */
  ownerChannel: string | undefined;
  /** Every private chat of the owner's (QQ, Telegram, WeChat): a `/confirm <id>` there decides, as on `ownerChannel`. */
  ownerChats?: readonly string[];
  /** Sends the question to a channel. */
  send(channel: string, text: string): Promise<void>;
  timeoutMs: number;
  clock: Clock;
  logger: Logger;
  /** Each decided action, for the audit list. */
  onOutcome?(outcome: ConfirmationOutcome): void;
  /** Ids for actions; random 4 hex digits by default. */
  newId?: () => string;
}

const YES = new Set(["yes", "y", "是", "是的", "确认", "好", "ok"]);
/** `/confirm <id>`, or a yes followed by the id (`yes a1b2`, `是 a1b2`). */
const CONFIRM_COMMAND = /^(?:\/confirm|yes|y|ok|是|是的|确认|好)\s+([0-9a-f]{4,8})$/i;
/** `/deny <id>`: the no of a chat's button (Telegram's inline keyboard), naming the action it declines. */
const DENY_COMMAND = /^\/deny\s+([0-9a-f]{4,8})$/i;

/** The pending confirmations, their question, and the owner's message that decides each. */
export class Confirmations implements PromptContributor {
  #options: ConfirmationsOptions;
  #pending = new Map<string, Pending>();

  /**
   * @example
   * ```ts
   * import { getLogger } from "@logtape/logtape";
   * import { systemClock } from "../clock.ts";
   *
   * const confirmations = new Confirmations({
   *   ownerChannel: "qq:private:10001",
   *   send: async (channel, text) => console.log(channel, text),
   *   timeoutMs: 120_000,
   *   clock: systemClock,
   *   logger: getLogger(["homed", "smart_home"]),
   * });
   * ```
   */
  constructor(options: ConfirmationsOptions) {
    this.#options = options;
  }

  /**
   * Asks the owner; resolves with the tool result for the model now (what was asked, where, for how long). Nothing is
   * run until the owner's yes.
   */
  async ask(
    request: { summary: string; run: () => Promise<string>; turn: AskingTurn; why?: string },
  ): Promise<string> {
    const { turn, summary } = request;
    const channel = turn.trust === "owner" ? turn.source : this.#options.ownerChannel;
    if (!channel) {
      return `Not done: "${summary}" needs the owner's confirmation, and homed has no channel to ask the owner on ` +
        "(set onebot.owner, telegram.owner or weixin.owner — or the owner's addresses in people:)";
    }
    this.#expire();
    const id = this.#newId();
    const minutes = Math.max(1, Math.round(this.#options.timeoutMs / 60_000));
    const pending: Pending = {
      id,
      summary,
      run: request.run,
      channel,
      asked: turn,
      expiresAt: this.#options.clock.now() + this.#options.timeoutMs,
    };
    this.#pending.set(id, pending);
    const who = turn.trust === "owner" ? "" : ` (asked by ${turn.sender} on ${turn.source})`;
    const waiting = this.#waitingIn(channel).length;
    const how = waiting > 1
      ? `${waiting} actions wait here now: reply /confirm ${id} within ${minutes} min to do this one`
      : `Reply 是 / yes within ${minutes} min to do it, anything else to leave it (or /confirm ${id})`;
    try {
      await this.#options.send(channel, `Confirm: ${summary}${who}? ${how}.`);
    } catch (error) {
      this.#pending.delete(id);
      return `Not done: "${summary}" needs the owner's confirmation, but asking on ${channel} failed: ` +
        (error as Error).message;
    }
    this.#options.logger.info("Asked the owner to confirm {summary} ({id}) on {channel}", { summary, id, channel });
    return `Not done yet: "${summary}" needs the owner's confirmation. The owner was asked on ${channel} ` +
      `(confirmation ${id}, ${minutes} min${request.why ? `; why: ${request.why}` : ""}); it runs only if they ` +
      "answer yes. Tell the user it waits for the owner.";
  }

  /**
   * The owner's answer in a chat with a pending action: a yes that names one action — `/confirm <id>` (in the chat
   * it was asked in or on the owner's own channel), or a bare yes where exactly one waits — is decided here, with no
   * model; a bare yes where several wait runs none and lists them; any other message from the owner there declines
   * what waits, and goes on to the model as usual. Only a message that is the owner's own can decide: the channel
   * authenticated its trust, and a schedule firing comes from `timer:…`, which is no chat an action waits in.
   */
  dispatch(input: PromptInput): DecisionDispatch | undefined {
    if (input.trust !== "owner") return undefined;
    this.#expire();
    const text = input.text.trim().replace(/[。.!！\s]+$/u, "");
    const named = CONFIRM_COMMAND.exec(text);
    const id = named?.[1]?.toLowerCase();
    // "/confirm <id>" is always the command; "ok cafe" only when cafe is an action waiting (else it is just words).
    if (id !== undefined && (text.startsWith("/") || this.#pending.has(id))) {
      return { decision: `confirmation ${id}`, decide: () => this.#confirmNamed(id, input.source) };
    }
    const denied = DENY_COMMAND.exec(text)?.[1]?.toLowerCase();
    if (denied !== undefined) {
      return { decision: `declined ${denied}`, decide: () => Promise.resolve(this.#denyNamed(denied, input.source)) };
    }
    const waiting = this.#waitingIn(input.source);
    if (waiting.length === 0) return undefined;
    if (YES.has(text.toLowerCase())) {
      if (waiting.length === 1) {
        const only = waiting[0]!;
        return { decision: `confirmation ${only.id}`, decide: () => this.#confirm(only, input.source) };
      }
      return { decision: "confirmation (ambiguous yes)", decide: () => Promise.resolve(ambiguous(waiting)) };
    }
    for (const pending of waiting) this.#decide(pending, "declined", input.source);
    return undefined;
  }

  /**
   * The owner's decision given elsewhere than in a chat — the console, on the owner's token: `approve` runs the action
   * once, `deny` declines it, each reported as decided on `by.source`, exactly as a yes or a no in the chat. Resolves
   * to `undefined` when nothing waits under `id` (it ran, was declined or expired). The caller has checked that the
   * decision is the owner's.
   */
  async decide(id: string, decision: "approve" | "deny", by: { source: string }): Promise<DecidedAction | undefined> {
    this.#expire();
    const pending = this.#pending.get(id);
    if (!pending) return undefined;
    if (decision === "deny") {
      this.#decide(pending, "declined", by.source);
      return { id, outcome: "declined" };
    }
    const { result } = await this.#run(pending, by.source);
    return { id, outcome: "confirmed", result };
  }

  /** The actions waiting now, oldest first (for `GET /api/confirmations` and status). */
  status(): WaitingAction[] {
    this.#expire();
    return [...this.#pending.values()].map((pending) => ({
      id: pending.id,
      summary: pending.summary,
      channel: pending.channel,
      asked_by: pending.asked.sender,
      asked_on: pending.asked.source,
      trust: pending.asked.trust,
      expires_at: new Date(pending.expiresAt).toISOString(),
    }));
  }

  #confirmNamed(id: string, source: string): Promise<string> {
    const found = this.#namedIn(id, source);
    return typeof found === "string" ? Promise.resolve(found) : this.#confirm(found, source);
  }

  #denyNamed(id: string, source: string): string {
    const found = this.#namedIn(id, source);
    if (typeof found === "string") return found;
    this.#decide(found, "declined", source);
    return `Not done: ${found.summary}. Declined.`;
  }

  /** The action `id` when `source` may decide it (its chat or the owner's own), else why not, as a line. */
  #namedIn(id: string, source: string): Pending | string {
    this.#expire();
    const pending = this.#pending.get(id);
    if (!pending) return `Nothing is waiting for confirmation ${id} (it ran, was declined or expired)`;
    const owners = this.#options.ownerChats ?? [];
    if (source !== pending.channel && source !== this.#options.ownerChannel && !owners.includes(source)) {
      return `Confirmation ${id} is decided on ${pending.channel}` +
        (this.#options.ownerChannel && this.#options.ownerChannel !== pending.channel
          ? ` or on your own channel ${this.#options.ownerChannel}`
          : "") +
        `, not on ${source}; nothing was done`;
    }
    return pending;
  }

  /** The chat's answer to a yes: the action run once, as a line for the owner. */
  async #confirm(pending: Pending, source: string): Promise<string> {
    const { ok, result } = await this.#run(pending, source);
    return `${ok ? "Done" : "Not done"}: ${pending.summary}. ${result}`;
  }

  /**
   * Runs a confirmed action, once: it stops waiting before it runs, so no second yes (in a chat or the console) finds
   * it. Reports it as confirmed on `source`, with its result or its failure.
   */
  async #run(pending: Pending, source: string): Promise<{ ok: boolean; result: string }> {
    this.#pending.delete(pending.id);
    this.#options.logger.info("Confirmation {id} ({summary}) confirmed on {source}", {
      id: pending.id,
      summary: pending.summary,
      source,
    });
    let ran: { ok: boolean; result: string };
    try {
      ran = { ok: true, result: await pending.run() };
    } catch (error) {
      ran = { ok: false, result: `Confirmed, but it failed: ${(error as Error).message}` };
    }
    this.#report(pending, "confirmed", source, ran.result);
    return ran;
  }

  #decide(pending: Pending, outcome: "declined" | "expired", source?: string): void {
    this.#pending.delete(pending.id);
    this.#options.logger.info("Confirmation {id} ({summary}) {outcome}; nothing was done", {
      id: pending.id,
      summary: pending.summary,
      outcome,
    });
    this.#report(pending, outcome, source);
  }

  #report(pending: Pending, outcome: ConfirmationOutcome["outcome"], source?: string, result?: string): void {
    this.#options.onOutcome?.({
      id: pending.id,
      summary: pending.summary,
      asked: pending.asked,
      outcome,
      ...(result === undefined ? {} : { result }),
      ...(source === undefined ? {} : { decidedOn: source }),
      at: this.#options.clock.now(),
    });
  }

  /** The actions whose question went to `channel`, oldest first. */
  #waitingIn(channel: string): Pending[] {
    return [...this.#pending.values()].filter((pending) => pending.channel === channel);
  }

  #expire(): void {
    const now = this.#options.clock.now();
    for (const pending of [...this.#pending.values()]) if (pending.expiresAt <= now) this.#decide(pending, "expired");
  }

  #newId(): string {
    for (;;) {
      const id = this.#options.newId?.() ??
        Math.floor(Math.random() * 0x10000).toString(16).padStart(4, "0");
      if (!this.#pending.has(id)) return id;
    }
  }
}

/** The reply to a bare yes where several actions wait: which they are, and how to name one. Nothing runs. */
function ambiguous(waiting: readonly Pending[]): string {
  const lines = waiting.map((pending) =>
    `- ${pending.id}: ${pending.summary}` +
    (pending.asked.trust === "owner" ? "" : ` (asked by ${pending.asked.sender} on ${pending.asked.source})`)
  );
  return `${waiting.length} actions wait for your yes here, so a bare yes does none of them:\n${lines.join("\n")}\n` +
    `Reply /confirm <id> for the one you mean.`;
}
