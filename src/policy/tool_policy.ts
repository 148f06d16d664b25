/**
 * The one policy every tool call passes (the registry's {@link ToolGate}): `agent.tool_policy` rules per tool name
 * pattern and trust — allow, confirm or deny — and, where no rule speaks, the tool's effect: a `sensitive` call (a
 * lock, an alarm, the garage, an MCP tool marked destructive) waits for the owner's yes; anything else runs. Held
 * calls go to the owner through {@link Confirmations}, the one mechanism for every tool: homed decides, no model call,
 * runs once, expires, anyone else's yes runs nothing.
 *
 * @module
 */

import type { Trust } from "../identity/trust.ts";
import type { GateCall, GateDecision, HoldRequest, ToolGate } from "../tools/gate.ts";
import type { Confirmations } from "./confirmations.ts";

/** A decision of `agent.tool_policy`. */
export type PolicyDecision = "allow" | "confirm" | "deny";

/** `agent.tool_policy`: pattern → a decision for everyone, or per trust. */
export type PolicyRules = Readonly<Record<string, PolicyDecision | { [trust in Trust]?: PolicyDecision | undefined }>>;

interface CompiledRule {
  pattern: string;
  test: RegExp;
  decision: PolicyRules[string];
}

/** The configured rules and the confirmations held calls wait in. */
export class ToolPolicy implements ToolGate {
  #rules: CompiledRule[];
  #confirmations: Pick<Confirmations, "ask">;

  /**
   * @example
   * ```ts
   * import type { Confirmations } from "./confirmations.ts";
   *
   * declare const confirmations: Confirmations;
   * const policy = new ToolPolicy({ "mcp__files__*": "confirm", gpio_set: { guest: "deny" } }, confirmations);
   * policy.decide({ tool: "mcp__files__write", owner: "mcp:files", allow: "owner", effect: "act", trust: "owner" });
   * // { decision: "confirm", rule: 'agent.tool_policy "mcp__files__*"' }
   * ```
   */
  constructor(rules: PolicyRules, confirmations: Pick<Confirmations, "ask">) {
    this.#rules = Object.entries(rules).map(([pattern, decision]) => ({
      pattern,
      test: new RegExp(`^${pattern.split("*").map(escapeRegExp).join(".*")}$`),
      decision,
    }));
    this.#confirmations = confirmations;
  }

  /** The first rule whose pattern matches the tool and that speaks for the asker's trust; else the tool's effect. */
  decide(call: GateCall): GateDecision {
    for (const rule of this.#rules) {
      if (!rule.test.test(call.tool)) continue;
      if (typeof rule.decision === "string") {
        return { decision: rule.decision, rule: `agent.tool_policy ${JSON.stringify(rule.pattern)}` };
      }
      const forTrust = rule.decision[call.trust];
      if (forTrust) {
        return { decision: forTrust, rule: `agent.tool_policy ${JSON.stringify(rule.pattern)} for ${call.trust}` };
      }
    }
    if (call.effect === "sensitive") return { decision: "confirm", rule: "a sensitive action" };
    return { decision: "allow", rule: "no rule" };
  }

  /** Asks the owner; the call runs once on their yes. */
  hold(request: HoldRequest): Promise<string> {
    const { context } = request;
    return this.#confirmations.ask({
      summary: request.summary,
      run: request.run,
      turn: { eventId: context.eventId, source: context.source, sender: context.sender, trust: context.trust },
    });
  }
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
