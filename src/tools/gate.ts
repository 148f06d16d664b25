/**
 * The one policy gate every tool call passes, after its trust rule and its arguments are checked: it may let the call
 * run, refuse it, or hold it for the owner's yes. The registry owns the gate's place in the call; what it decides
 * comes from outside (`src/policy/`: the configured rules, the tool's effect), so no tool decides for itself.
 *
 * @module
 */

import type { ToolAllow, Trust } from "../identity/trust.ts";
import type { ToolContext, ToolEffect } from "./tool.ts";

/** A call as the gate sees it. */
export interface GateCall {
  /** The tool's name (`ha_call_service`, `mcp__files__write_file`). */
  tool: string;
  /** Who registered it (`core`, `device:ha`, `mcp:files`, `plugin:lamp`). */
  owner: string;
  /** Who may cause it at all (already checked). */
  allow: ToolAllow;
  /** What this call does, from the tool's declaration and its arguments. */
  effect: ToolEffect;
  /** The asker's trust. */
  trust: Trust;
  /** The lowest trust whose words the turn's prompt holds (the asker's when nothing lower): below `trust`, tainted. */
  taint: Trust;
}

/** What the gate decided, and the rule that decided it (named in refusals and questions). */
export interface GateDecision {
  decision: "allow" | "confirm" | "deny";
  /** E.g. `tools.policy "mcp__files__*" for guest`, or `a sensitive tool`. */
  rule: string;
}

/** A held call: what to ask, and the one way to run it once the owner says yes. */
export interface HoldRequest {
  /** One line: what the call would do. */
  summary: string;
  /** Why it waits (the rule). */
  rule: string;
  /** Runs the call through the registry's deadline; resolves with its result text. */
  run(): Promise<string>;
  /** The turn that asked. */
  context: ToolContext;
}

/** Decides each call and holds those that wait for the owner. */
export interface ToolGate {
  /** The decision for a call. */
  decide(call: GateCall): GateDecision;
  /** Holds a call for the owner's yes; resolves with the tool result for the model now ("not done yet: …"). */
  hold(request: HoldRequest): Promise<string>;
  /** Hears how each call the gate decided ended (for the audit): the call, its turn, the decision, the result. */
  settled?(settlement: GateSettlement): void;
}

/** One decided call and how it ended. */
export interface GateSettlement {
  call: GateCall;
  context: ToolContext;
  decision: GateDecision;
  /** What was asked of the owner, for a held call. */
  summary?: string;
  /** The result text the model got (an error, "not done yet", or the tool's result). */
  result: string;
  ok: boolean;
}
