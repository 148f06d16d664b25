/**
 * The one policy every tool call passes (the registry's {@link ToolGate}): `agent.tool_policy` rules per tool name
 * pattern and trust — allow, confirm or deny — and, where no rule speaks, the call's effect and the turn's taint: a
 * `sensitive` call (a lock, an alarm, the garage, an MCP tool marked destructive) waits for the owner's yes; so does an
 * `act` call, or a `speak` to anyone but the asker, in a turn whose prompt holds words of a lower trust than the
 * asker's (a guest's message in the reference block, an MCP server's result, a picture's description); anything else
 * runs. Held calls go to the owner through {@link Confirmations}, the one mechanism for every tool: homed decides, no
 * model call, runs once, expires, anyone else's yes runs nothing. Every `act`, `speak` and `sensitive` call, and every
 * call not simply allowed, is kept for the audit ({@link ToolPolicy.actions}, the newest 500).
 *
 * @module
 */

import type { Clock } from "../clock.ts";
import { lowerTrust, type Trust } from "../identity/trust.ts";
import type { GateCall, GateDecision, GateSettlement, HoldRequest, ToolGate } from "../tools/gate.ts";
import type { ToolEffect } from "../tools/tool.ts";
import type { Confirmations } from "./confirmations.ts";

/** One audited call, for `GET /api/actions` and the console's Actions page. */
export interface AuditedCall {
  /** ISO 8601. */
  at: string;
  tool: string;
  effect: ToolEffect;
  /** Who asked, on which channel, with what trust; the lowest trust the turn held. */
  sender: string;
  source: string;
  trust: Trust;
  taint: Trust;
  /** The input event whose turn made the call. */
  turn: string;
  decision: GateDecision["decision"];
  rule: string;
  /** What the owner was asked, for a held call. */
  summary?: string;
  ok: boolean;
  /** The result the model got, at most 300 characters. */
  result: string;
}

/** Audited calls kept. */
const AUDIT_KEPT = 500;

/** A decision of `agent.tool_policy`. */
export type PolicyDecision = "allow" | "confirm" | "deny";

/** `agent.tool_policy`: pattern → a decision for everyone, or per trust. */
export type PolicyRules = Readonly<Record<string, PolicyDecision | { [trust in Trust]?: PolicyDecision | undefined }>>;

interface CompiledRule {
  pattern: string;
  test: RegExp;
  decision: PolicyRules[string];
}

/** Options of {@link ToolPolicy}. */
export interface ToolPolicyOptions {
  /** `agent.tool_policy`. */
  rules: PolicyRules;
  /** Where held calls wait for the owner. */
  confirmations: Pick<Confirmations, "ask">;
  clock: Clock;
}

/** The configured rules, the confirmations held calls wait in, and the audit. */
export class ToolPolicy implements ToolGate {
  #rules: CompiledRule[];
  #confirmations: Pick<Confirmations, "ask">;
  #clock: Clock;
  #audit: AuditedCall[] = [];

  /**
   * @example
   * ```ts
   * import type { Confirmations } from "./confirmations.ts";
   *
   * import { systemClock } from "../clock.ts";
   *
   * declare const confirmations: Confirmations;
   * const rules = { "mcp__files__*": "confirm", gpio_set: { guest: "deny" } } as const;
   * const policy = new ToolPolicy({ rules, confirmations, clock: systemClock });
   * policy.decide({
   *   tool: "mcp__files__write",
   *   owner: "mcp:files",
   *   allow: "owner",
   *   effect: "act",
   *   trust: "owner",
   *   taint: "owner",
   * }); // { decision: "confirm", rule: 'agent.tool_policy "mcp__files__*"' }
   * ```
   */
  constructor(options: ToolPolicyOptions) {
    this.#rules = Object.entries(options.rules).map(([pattern, decision]) => ({
      pattern,
      test: new RegExp(`^${pattern.split("*").map(escapeRegExp).join(".*")}$`),
      decision,
    }));
    this.#confirmations = options.confirmations;
    this.#clock = options.clock;
  }

  /**
   * The first rule whose pattern matches the tool and that speaks for the asker's trust decides; else the call's
   * effect and the turn's taint. An `allow` lifts the taint's hold, never a sensitive call's: what is sensitive is
   * decided where it is declared (`smart_home.home_assistant.confirm`, a server's `destructiveHint`), so allowing the
   * lights (`ha_call_service`) does not open the door.
   */
  decide(call: GateCall): GateDecision {
    for (const rule of this.#rules) {
      if (!rule.test.test(call.tool)) continue;
      const decision = typeof rule.decision === "string" ? rule.decision : rule.decision[call.trust];
      if (!decision) continue;
      const named = `agent.tool_policy ${JSON.stringify(rule.pattern)}${
        typeof rule.decision === "string" ? "" : ` for ${call.trust}`
      }`;
      if (decision === "allow" && call.effect === "sensitive") {
        return { decision: "confirm", rule: `a sensitive action (${named} allows the tool, not its sensitive calls)` };
      }
      return { decision, rule: named };
    }
    if (call.effect === "sensitive") return { decision: "confirm", rule: "a sensitive action" };
    const tainted = call.taint !== call.trust && lowerTrust(call.taint, call.trust) === call.taint;
    if (tainted && (call.effect === "act" || call.effect === "speak")) {
      return {
        decision: "confirm",
        rule: `a turn that holds words of trust ${call.taint}, below the asker's (${call.trust}), may not ` +
          (call.effect === "act" ? "act" : "speak to others") + " without the owner",
      };
    }
    return { decision: "allow", rule: "no rule" };
  }

  /** Keeps what the audit lists: every act, speak and sensitive call, and every call not simply allowed. */
  settled(settlement: GateSettlement): void {
    const { call, context, decision } = settlement;
    if (call.effect === "read" && decision.decision === "allow") return;
    this.#audit.unshift({
      at: new Date(this.#clock.now()).toISOString(),
      tool: call.tool,
      effect: call.effect,
      sender: context.sender,
      source: context.source,
      trust: call.trust,
      taint: call.taint,
      turn: context.eventId,
      decision: decision.decision,
      rule: decision.rule,
      ...(settlement.summary === undefined ? {} : { summary: keptCopy(settlement.summary, 300) }),
      ok: settlement.ok,
      result: keptCopy(settlement.result, 300),
    });
    this.#audit.length = Math.min(this.#audit.length, AUDIT_KEPT);
  }

  /** The audited calls, newest first: all of them for the owner, a member's or guest's own for them. */
  actions(viewer: { name: string; trust: Trust }): AuditedCall[] {
    return viewer.trust === "owner" ? [...this.#audit] : this.#audit.filter((entry) => entry.sender === viewer.name);
  }

  /** Asks the owner; the call runs once on their yes. */
  hold(request: HoldRequest): Promise<string> {
    const { context } = request;
    return this.#confirmations.ask({
      summary: request.summary,
      why: request.rule,
      run: request.run,
      turn: { eventId: context.eventId, source: context.source, sender: context.sender, trust: context.trust },
    });
  }
}

/**
 * At most `max` characters of `text`, as a string of its own: a slice of a long string is a view that keeps the whole
 * of it alive in V8, and an MCP result can be 256 K characters (500 audited calls would hold about 128 MB).
 */
function keptCopy(text: string, max: number): string {
  const cut = text.length > max ? `${text.slice(0, max - 1)}…` : text;
  return Array.from(cut).join("");
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
