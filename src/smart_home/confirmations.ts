/**
 * Asking the owner before a sensitive action (unlocking a door, disarming an alarm, opening the garage). The action
 * is not run: the owner is asked — in the chat where they asked, or on their own channel when someone else did — and
 * the owner's *next* message in that chat decides it: exactly `yes`, `是` or `确认` (or `/confirm <id>` anywhere) within
 * the timeout runs it once, through the tool `smart_home_confirm` (owner only), costing no LLM call; anything else, the
 * timeout, or anyone else's yes runs nothing. The decision is homed's, never the model's: the model can only ask.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import type { Clock } from "../clock.ts";
import type { Trust } from "../identity/trust.ts";
import type { Dispatch, PromptContributor, PromptInput } from "../prompt/contributor.ts";
import type { Tool } from "../tools/tool.ts";

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
  at: number;
}

/** Options of {@link Confirmations}. */
export interface ConfirmationsOptions {
  /** The owner's own channel (`qq:private:<onebot.owner>`), for actions someone else asked for; none: refused. */
  ownerChannel: string | undefined;
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
const CONFIRM_COMMAND = /^\/confirm\s+([0-9a-f]{4,8})\s*$/i;

/** The pending confirmations, their question and their one way to run. */
export class Confirmations implements PromptContributor {
  #options: ConfirmationsOptions;
  #pending = new Map<string, Pending>();
  #tools: readonly Tool[];

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
    this.#tools = [{
      name: "smart_home_confirm",
      description:
        "Runs an action the owner confirmed. homed calls it when the owner answers yes; the model has no use for it.",
      parameters: {
        type: "object",
        properties: { id: { type: "string", pattern: "^[0-9a-f]{4,8}$" } },
        required: ["id"],
        additionalProperties: false,
      },
      allow: "owner",
      execute: (args) => this.#confirm(String(args.id)),
    }];
  }

  /** The tool the owner's yes goes through. */
  tools(): readonly Tool[] {
    return this.#tools;
  }

  /**
   * Asks the owner; resolves with the tool result for the model now (what was asked, where, for how long). Nothing is
   * run until the owner's yes.
   */
  async ask(request: { summary: string; run: () => Promise<string>; turn: AskingTurn }): Promise<string> {
    const { turn, summary } = request;
    const channel = turn.trust === "owner" ? turn.source : this.#options.ownerChannel;
    if (!channel) {
      return `Not done: "${summary}" needs the owner's confirmation, and homed has no channel to ask the owner on ` +
        "(set onebot.owner)";
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
    try {
      await this.#options.send(
        channel,
        `Confirm: ${summary}${who}? Reply 是 / yes within ${minutes} min to do it, anything else to leave it ` +
          `(or /confirm ${id}).`,
      );
    } catch (error) {
      this.#pending.delete(id);
      return `Not done: "${summary}" needs the owner's confirmation, but asking on ${channel} failed: ` +
        (error as Error).message;
    }
    this.#options.logger.info("Asked the owner to confirm {summary} ({id}) on {channel}", { summary, id, channel });
    return `Not done yet: "${summary}" needs the owner's confirmation. The owner was asked on ${channel} ` +
      `(confirmation ${id}, ${minutes} min); it runs only if they answer yes. Tell the user it waits for the owner.`;
  }

  /**
   * The owner's answer in a chat with a pending action: a yes becomes the confirm tool's call (no model); any other
   * message from the owner there declines it, and goes on to the model as usual.
   */
  dispatch(input: PromptInput): Dispatch | undefined {
    if (input.trust !== "owner") return undefined;
    this.#expire();
    const text = input.text.trim();
    const command = CONFIRM_COMMAND.exec(text);
    if (command) return { tool: "smart_home_confirm", args: { id: command[1]!.toLowerCase() } };
    const waiting = [...this.#pending.values()].filter((pending) => pending.channel === input.source);
    const newest = waiting.at(-1);
    if (!newest) return undefined;
    if (YES.has(text.replace(/[。.!！\s]+$/u, "").toLowerCase())) {
      return { tool: "smart_home_confirm", args: { id: newest.id } };
    }
    for (const pending of waiting) this.#decide(pending, "declined");
    return undefined;
  }

  /** The actions waiting now (for status). */
  status(): Array<{ id: string; summary: string; channel: string; asked_by: string; expires_at: string }> {
    this.#expire();
    return [...this.#pending.values()].map((pending) => ({
      id: pending.id,
      summary: pending.summary,
      channel: pending.channel,
      asked_by: pending.asked.sender,
      expires_at: new Date(pending.expiresAt).toISOString(),
    }));
  }

  async #confirm(id: string): Promise<string> {
    this.#expire();
    const pending = this.#pending.get(id);
    if (!pending) return `Nothing is waiting for confirmation ${id} (it ran, was declined or expired)`;
    this.#pending.delete(id);
    let result: string;
    try {
      result = await pending.run();
    } catch (error) {
      result = `Confirmed, but it failed: ${(error as Error).message}`;
    }
    this.#report(pending, "confirmed", result);
    return `Done: ${pending.summary}. ${result}`;
  }

  #decide(pending: Pending, outcome: "declined" | "expired"): void {
    this.#pending.delete(pending.id);
    this.#options.logger.info("Confirmation {id} ({summary}) {outcome}; nothing was done", {
      id: pending.id,
      summary: pending.summary,
      outcome,
    });
    this.#report(pending, outcome);
  }

  #report(pending: Pending, outcome: ConfirmationOutcome["outcome"], result?: string): void {
    this.#options.onOutcome?.({
      id: pending.id,
      summary: pending.summary,
      asked: pending.asked,
      outcome,
      ...(result === undefined ? {} : { result }),
      at: this.#options.clock.now(),
    });
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
