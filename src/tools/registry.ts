/**
 * The one tool registry: every tool, from the core or a device, is registered here, validated once, and called
 * through {@link ToolRegistry.call}, which never throws: every failure becomes an error result for the LLM.
 *
 * @module
 */

import { type Clock, systemClock } from "../clock.ts";
import { describeRule, permits } from "../identity/trust.ts";
import { compileSchema, type SchemaCheck, type SchemaViolation } from "./json_schema.ts";
import { type Tool, TOOL_NAME, type ToolContext, type ToolOutcome, type ToolSpec } from "./tool.ts";
import type { GateCall, GateDecision, ToolGate } from "./gate.ts";
import type { Trust } from "../identity/trust.ts";
import { compareText } from "../text/compare_text.ts";
import type { ListedTool } from "./tool_offer.ts";

/**
 * Who registered a tool, so a reload replaces exactly its tools: the core, one device (`device:<name>`, the IO layer
 * keeps these in step with its device table), one plugin (`plugin:<name>`) or one MCP server (`mcp:<name>`).
 */
export type ToolOwner = "core" | `device:${string}` | `plugin:${string}` | `mcp:${string}`;

/**
 * The owner key of a device's tools.
 *
 * @example
 * ```ts
 * deviceOwner("qq"); // "device:qq"
 * ```
 */
export function deviceOwner(deviceName: string): ToolOwner {
  return `device:${deviceName}`;
}

interface Entry {
  tool: Tool;
  validate: SchemaCheck;
  owner: ToolOwner;
}

/** Options of {@link ToolRegistry}. */
export interface ToolRegistryOptions {
  clock?: Clock;
  /** How long a call may take unless the tool declares its own `timeoutMs` (`agent.tool_timeout`); 30 s. */
  defaultTimeoutMs?: number;
  /**
   * The policy every call passes after its trust rule and arguments (`src/policy/`). Without one, a call runs when
   * its trust rule allows it.
   */
  gate?: ToolGate;
}

function describeErrors(violations: readonly SchemaViolation[]): string {
  return violations.map(({ path, keyword, message }) => {
    if (keyword === "required" || keyword === "additionalProperties") {
      return path ? `${message} in "${path}"` : message;
    }
    return `${path ? `field "${path}"` : "the arguments"} ${message}`;
  }).join("; ");
}

/** Every tool of a table as the LLM sees it, sorted by name so the prompt is stable. */
function specsOf(entries: ReadonlyMap<string, Entry>): ToolSpec[] {
  return [...entries.values()]
    .map(({ tool }) => ({ name: tool.name, description: tool.description, parameters: tool.parameters }))
    .sort((a, b) => compareText(a.name, b.name));
}

/** Every tool of a table with its owner and rule, sorted by name. */
function listingOf(entries: ReadonlyMap<string, Entry>): ListedTool[] {
  const specs = specsOf(entries);
  return specs.map((spec) => {
    const entry = entries.get(spec.name)!;
    return { spec, owner: entry.owner, allow: entry.tool.allow };
  });
}

function render(value: unknown): string {
  return typeof value === "string" ? value : JSON.stringify(value) ?? "null";
}

function seconds(ms: number): string {
  return `${Math.round(ms / 100) / 10}s`;
}

/** Holds the tools, checks their declarations at registration and their arguments at every call. */
export class ToolRegistry {
  #entries = new Map<string, Entry>();
  #clock: Clock;
  #defaultTimeoutMs: number;
  #gate: ToolGate | undefined;

  /**
   * @example
   * ```ts
   * import { systemClock } from "../clock.ts";
   *
   * const registry = new ToolRegistry({ clock: systemClock, defaultTimeoutMs: 30_000 });
   * ```
   */
  constructor(options: ToolRegistryOptions = {}) {
    this.#clock = options.clock ?? systemClock;
    this.#defaultTimeoutMs = options.defaultTimeoutMs ?? 30_000;
    this.#gate = options.gate;
  }

  /**
   * Adds a tool. Throws `TypeError` naming the tool when the name or schema is bad, or the name is taken.
   *
   * @example
   * ```ts
   * const registry = new ToolRegistry();
   * registry.register({
   *   name: "clock_now",
   *   description: "Current time",
   *   parameters: { type: "object", properties: {} },
   *   allow: "anyone",
   *   execute: () => new Date().toISOString(),
   * });
   * registry.has("clock_now"); // true
   * ```
   */
  register(tool: Tool, owner: ToolOwner = "core"): void {
    const entry = this.#prepare(tool, owner);
    // Copy on write: a view taken by a turn keeps the table it started with.
    const next = new Map(this.#entries);
    next.set(tool.name, entry);
    this.#entries = next;
  }

  #prepare(tool: Tool, owner: ToolOwner, replacing?: ReadonlySet<string>): Entry {
    if (!TOOL_NAME.test(tool.name)) {
      throw new TypeError(
        `Tool name ${
          JSON.stringify(tool.name)
        } (from ${owner}) is invalid: allowed are 1 to 64 of a-z, A-Z, 0-9, _ and -`,
      );
    }
    const existing = this.#entries.get(tool.name);
    if (existing && !replacing?.has(tool.name)) {
      throw new TypeError(`Tool name "${tool.name}" (from ${owner}) is already registered by ${existing.owner}`);
    }
    if (tool.timeoutMs !== undefined && !(Number.isFinite(tool.timeoutMs) && tool.timeoutMs > 0)) {
      throw new TypeError(
        `Tool "${tool.name}" (from ${owner}) has timeoutMs ${tool.timeoutMs}; allowed: a positive number of milliseconds`,
      );
    }
    if (tool.parameters.type !== "object") {
      throw new TypeError(
        `Tool "${tool.name}" (from ${owner}) has parameters of type ${
          JSON.stringify(tool.parameters.type)
        }; allowed: a JSON Schema with type "object"`,
      );
    }
    let validate: SchemaCheck;
    try {
      validate = compileSchema(tool.parameters);
    } catch (error) {
      throw new TypeError(
        `Tool "${tool.name}" (from ${owner}) has an invalid parameters schema: ${(error as Error).message}`,
      );
    }
    return { tool, validate, owner };
  }

  /**
   * Replaces every tool of `owner` with `tools` in one step: either all of them are valid and swapped in, or
   * nothing changes and a `TypeError` says which tool is wrong.
   *
   * @example
   * ```ts
   * import type { Tool } from "./tool.ts";
   *
   * declare const registry: ToolRegistry;
   * declare const lampTools: Tool[];
   *
   * registry.replaceOwner("plugin:lamp", lampTools); // the plugin's tools after a reload
   * registry.replaceOwner("plugin:lamp", []); // the plugin was removed: its tools go too
   * ```
   */
  replaceOwner(owner: ToolOwner, tools: readonly Tool[]): void {
    const mine = new Set([...this.#entries.values()].filter((e) => e.owner === owner).map((e) => e.tool.name));
    const prepared = new Map<string, Entry>();
    for (const tool of tools) {
      if (prepared.has(tool.name)) throw new TypeError(`Tool name "${tool.name}" appears twice in ${owner}`);
      prepared.set(tool.name, this.#prepare(tool, owner, mine));
    }
    const next = new Map(this.#entries);
    for (const name of mine) next.delete(name);
    for (const [name, entry] of prepared) next.set(name, entry);
    this.#entries = next;
  }

  /**
   * The tools as they are now, for one turn: a reload that swaps tools meanwhile does not change what this turn
   * sees or calls — it finishes on the set it started with.
   *
   * @example
   * ```ts
   * import type { ToolContext } from "./tool.ts";
   *
   * declare const registry: ToolRegistry;
   * declare const context: ToolContext;
   *
   * const tools = registry.view();
   * const specs = tools.specs(); // sent with this turn's first request…
   * await tools.call("clock_now", "{}", context); // …and called later in the same turn, even after a reload
   * ```
   */
  view(): Pick<ToolRegistry, "specs" | "call" | "listing"> {
    const entries = this.#entries;
    return {
      specs: () => specsOf(entries),
      listing: (trust) => this.#listingFor(entries, trust),
      call: (name, rawArguments, context) => this.#callIn(entries, name, rawArguments, context),
    };
  }

  /**
   * Every tool with who registered it and who may cause it, sorted by name — for choosing what a turn offers when
   * there are more than the model accepts (`chooseTools`). With `trust`, the tools a `deny` rule refuses that trust
   * are left out: the model is never offered what it could not call.
   *
   * @example
   * ```ts
   * declare const registry: ToolRegistry;
   * registry.listing().filter((tool) => tool.owner.startsWith("mcp:")).length; // the MCP servers' tools
   * ```
   */
  listing(trust?: Trust): ListedTool[] {
    return this.#listingFor(this.#entries, trust);
  }

  /** The listing, without the tools the gate denies to `trust` whatever their arguments (a `deny` rule). */
  #listingFor(entries: ReadonlyMap<string, Entry>, trust: Trust | undefined): ListedTool[] {
    const listed = listingOf(entries);
    const gate = this.#gate;
    if (!gate || trust === undefined) return listed;
    return listed.filter((tool) => {
      // A tool whose effect depends on its arguments is listed as `act`: a deny rule names tools, not calls.
      const declared = entries.get(tool.spec.name)!.tool.effect;
      const effect = typeof declared === "string" ? declared : "act";
      return gate.decide({ tool: tool.spec.name, owner: tool.owner, allow: tool.allow, effect, trust, taint: trust })
        .decision !== "deny";
    });
  }

  /** True when a tool of that name is registered. */
  has(name: string): boolean {
    return this.#entries.has(name);
  }

  /** Every tool as the LLM sees it, sorted by name so the prompt is stable. */
  specs(): ToolSpec[] {
    return specsOf(this.#entries);
  }

  /**
   * Runs a tool call from the LLM. Unknown tools, arguments that are not JSON or do not match the schema, and
   * handler errors all come back as `{ ok: false }` with a message that names the problem.
   *
   * @example
   * ```ts
   * import type { ToolContext } from "./tool.ts";
   *
   * declare const registry: ToolRegistry;
   * declare const context: ToolContext;
   *
   * await registry.call("clock_now", "{}", context); // { ok: true, content: "2026-11-30T09:00:00.000Z" }
   * await registry.call("clock_now", "{", context);
   * // { ok: false, content: 'Error: arguments of tool "clock_now" are not valid JSON (…): {' }
   * ```
   */
  call(name: string, rawArguments: string, context: ToolContext): Promise<ToolOutcome> {
    return this.#callIn(this.#entries, name, rawArguments, context);
  }

  async #callIn(
    entries: ReadonlyMap<string, Entry>,
    name: string,
    rawArguments: string,
    context: ToolContext,
  ): Promise<ToolOutcome> {
    const entry = entries.get(name);
    if (!entry) {
      const known = [...entries.keys()].sort().join(", ") || "none";
      return { ok: false, content: `Error: unknown tool ${JSON.stringify(name)}; available tools: ${known}` };
    }
    if (!permits(entry.tool.allow, context.trust)) {
      return {
        ok: false,
        content: `Error: tool "${name}" is for ${describeRule(entry.tool.allow)}; this message came from ` +
          `${JSON.stringify(context.sender)} (trust ${context.trust}), so it was not run. Tell them you cannot do ` +
          `that for them.`,
      };
    }
    let args: unknown;
    try {
      args = rawArguments.trim() === "" ? {} : JSON.parse(rawArguments);
    } catch (error) {
      return {
        ok: false,
        content: `Error: arguments of tool "${name}" are not valid JSON (${(error as Error).message}): ${
          rawArguments.slice(0, 200)
        }`,
      };
    }
    const violations = entry.validate(args);
    if (violations.length) {
      return {
        ok: false,
        content: `Error: invalid arguments for tool "${name}": ${describeErrors(violations)}; got ${
          JSON.stringify(args).slice(0, 200)
        }`,
      };
    }
    const callArgs = args as Record<string, unknown>;
    const gate = this.#gate;
    if (!gate) return await this.#execute(entry, name, callArgs, context);
    let call: GateCall;
    let ruling: GateDecision;
    try {
      const declared = entry.tool.effect ?? "act";
      const effect = typeof declared === "function" ? declared(callArgs, context) : declared;
      const taint = context.lowestTrustSeen ?? context.trust;
      call = { tool: name, owner: entry.owner, allow: entry.tool.allow, effect, trust: context.trust, taint };
      ruling = gate.decide(call);
    } catch (error) {
      return { ok: false, content: `Error: tool "${name}" failed: ${(error as Error)?.message ?? String(error)}` };
    }
    const settle = (outcome: ToolOutcome, summary?: string): ToolOutcome => {
      gate.settled?.({
        call,
        context,
        decision: ruling,
        ...(summary === undefined ? {} : { summary }),
        result: outcome.content,
        ok: outcome.ok,
      });
      return outcome;
    };
    if (ruling.decision === "deny") {
      return settle({
        ok: false,
        content: `Error: tool "${name}" is refused to trust ${context.trust} by ${ruling.rule}; it was not run. ` +
          `Tell them you cannot do that for them.`,
      });
    }
    if (ruling.decision === "allow") {
      return settle(await this.#execute(entry, name, callArgs, context));
    }
    let summary: string;
    try {
      summary = entry.tool.describeCall?.(callArgs) ?? `${name} ${JSON.stringify(callArgs).slice(0, 200)}`;
    } catch (error) {
      return settle({
        ok: false,
        content: `Error: tool "${name}" failed: ${(error as Error)?.message ?? String(error)}`,
      });
    }
    // Held: runs once on the owner's yes, in a context of its own (the turn that asked is long over by then).
    let ran = false;
    const run = async (): Promise<string> => {
      if (ran) throw new Error(`${summary} already ran once`);
      ran = true;
      const outcome = await this.#execute(entry, name, callArgs, { ...context, signal: new AbortController().signal });
      if (!outcome.ok) throw new Error(outcome.content.replace(/^Error: /, ""));
      return outcome.content;
    };
    const asked = await gate.hold({ summary, rule: ruling.rule, run, context });
    return settle({ ok: true, content: asked, held: true }, summary);
  }

  /**
   * A handler's outcome with the trust of the words it carries, when the tool declares it (an MCP server's, a web
   * page's); homed's own words (a deadline passed) carry none.
   */
  #withTrust(entry: Entry, outcome: ToolOutcome): ToolOutcome {
    return entry.tool.resultTrust === undefined ? outcome : { ...outcome, trust: entry.tool.resultTrust };
  }

  /** Runs the handler under its deadline and the turn's signal; whichever ends first decides the outcome. */
  async #execute(
    entry: Entry,
    name: string,
    args: Record<string, unknown>,
    context: ToolContext,
  ): Promise<ToolOutcome> {
    const timeoutMs = entry.tool.timeoutMs ?? this.#defaultTimeoutMs;
    const deadline = new AbortController();
    const signal = AbortSignal.any([context.signal, deadline.signal]);
    let cancelTimer = () => {};
    let onTurnAbort = () => {};
    const stopped = new Promise<ToolOutcome>((resolve) => {
      cancelTimer = this.#clock.after(timeoutMs, () => {
        deadline.abort(new DOMException(`Tool ${name} timed out`, "TimeoutError"));
        const whose = entry.tool.timeoutMs === undefined ? "agent.tool_timeout" : `the tool's own timeout`;
        resolve({
          ok: false,
          content: `Error: tool "${name}" did not finish within ${seconds(timeoutMs)} (${whose}); it was stopped and ` +
            `its result discarded`,
        });
      });
      onTurnAbort = () => resolve({ ok: false, content: `Error: tool "${name}" was cancelled with its turn` });
      if (context.signal.aborted) onTurnAbort();
      else context.signal.addEventListener("abort", onTurnAbort, { once: true });
    });
    const running = (async (): Promise<ToolOutcome> => {
      try {
        return this.#withTrust(entry, {
          ok: true,
          content: render(await entry.tool.execute(args, { ...context, signal })),
        });
      } catch (error) {
        // The tool's own failure carries its words too (an MCP server's error text).
        return this.#withTrust(entry, {
          ok: false,
          content: `Error: tool "${name}" failed: ${(error as Error)?.message ?? String(error)}`,
        });
      }
    })();
    try {
      return await Promise.race([running, stopped]);
    } finally {
      cancelTimer();
      context.signal.removeEventListener("abort", onTurnAbort);
    }
  }
}
