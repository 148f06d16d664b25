/**
 * What a tool is: one JSON Schema that the LLM sees and that validates the arguments, and a handler.
 *
 * @module
 */

import type { ToolAllow, Trust } from "../identity/trust.ts";

/** A JSON Schema object, as sent to the LLM. */
export type JsonSchema = Record<string, unknown>;

/** A tool as the LLM sees it. */
export interface ToolSpec {
  /** Matches `^[a-zA-Z0-9_-]{1,64}$` (DeepSeek's rule). */
  name: string;
  description: string;
  /** A JSON Schema whose top level has `type: "object"`. */
  parameters: JsonSchema;
  /** Who may cause it; a device's tools default to `household` (they act on the house). Not sent to the LLM. */
  allow?: ToolAllow;
}

/** The turn a tool runs in: who spoke, where the reply goes, and how to change that. */
export interface ToolContext {
  /** Id of the InputEvent that started the turn. */
  eventId: string;
  /** Source of that event, e.g. `http` or `qq:private:10001`. */
  source: string;
  sender: string;
  /** The source device's own note on that event (the IO layer's `InputEvent.handle`), for outputs that answer it. */
  handle?: Readonly<Record<string, string>>;
  /** The sender's trust level, as the channel authenticated it. */
  trust: Trust;
  /** Aborts when the turn is cancelled (shutdown) or, inside a tool, when the call's deadline passes. */
  signal: AbortSignal;
  /**
   * The lowest trust among the words this turn's prompt holds so far — the sender's, the reference block's speakers',
   * the results of the tools called before — when it is below the sender's, the turn is tainted: the policy holds its
   * `act` calls and its `speak` to others for the owner. The sender's trust when absent.
   */
  lowestTrustSeen?: Trust;
  /** The channel the reply will go to. */
  replyChannel(): string;
  /** Sends this turn's reply to another channel. */
  setReplyChannel(channel: string): void;
}

/**
 * What a call does, for the one policy gate in the registry: `read` (household data), `speak` (sends to a person or
 * channel), `act` (changes the home or the world), `sensitive` (waits for the owner's yes: locks, alarms, the garage, a
 * destructive MCP tool).
 */
export type ToolEffect = "read" | "speak" | "act" | "sensitive";

/** A tool with its handler. The handler's return value becomes the tool result (strings as is, others as JSON). */
export interface Tool extends ToolSpec {
  /** Who may cause it: checked before anything else on every call (see `docs` in DESIGN.md, "Trust"). */
  allow: ToolAllow;
  /**
   * What a call does (`act` when absent); a function when that depends on the arguments (unlocking is `sensitive`,
   * a light is `act`). The registry's gate reads it — a tool never decides for itself whether it needs the owner.
   */
  effect?: ToolEffect | ((args: Record<string, unknown>, context: ToolContext) => ToolEffect);
  /**
   * Whose words a result carries, for the turn's taint: an MCP server's text, a web page, a device's payload. The
   * sender's own trust (no taint) when absent — homed's own data, which the sender may read.
   */
  resultTrust?: Trust;
  /**
   * One line saying what this call would do, for the owner's question ("Unlock lock.front_door (lock.unlock)"); it
   * throws when the call could not run anyway (no such entity), so nobody is asked about a call that would fail.
   */
  describeCall?(args: Record<string, unknown>): string;
  /**
   * Runs the call. `context.signal` aborts when the call's deadline passes or the turn is cancelled; a handler that
   * keeps going after that is abandoned and its result ignored.
   */
  execute(args: Record<string, unknown>, context: ToolContext): unknown;
  /** How long one call may take; the registry's default (`agent.tool_timeout`) when absent. */
  timeoutMs?: number;
}

/** What a call produced, always ready to send back to the LLM. */
export interface ToolOutcome {
  ok: boolean;
  content: string;
  /** Whose words `content` carries when below the sender's (the tool's `resultTrust`): the turn is tainted by them. */
  trust?: Trust;
  /** The call waits for the owner's yes (the policy held it); `content` says so. */
  held?: boolean;
}

/** Allowed tool names. */
export const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
