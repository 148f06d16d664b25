/**
 * The house keeps a model when the cloud model fails: a {@link Provider} over the primary (`llm.*`) and the
 * fallbacks (`llm.fallbacks`), tried in order. Each has a {@link CircuitBreaker}: a request that fails because a
 * provider cannot answer (down, refused, out of quota — after its own retries) opens its breaker and the chain moves
 * on; later requests skip it until a background probe finds it answering again. The primary is also skipped while it
 * is over its budget (`llm.budget`, {@link Budget}) until the period turns. A request that no provider answers fails
 * with `unavailable`, naming each provider and why.
 *
 * Time: a provider with a usable one behind it is asked with `failFast`, so a hung server costs one idle timeout
 * (`llm.timeout`) — not its retries — before the next one answers; refused connections and 5xx keep their quick
 * retries. A request whose stream already showed text is not handed on (the user saw the answer begin).
 *
 * With one provider there is nothing to fail over to: it is always asked (as before the chain) and its own error is
 * passed on; its breaker only reports (status, events, probes). A budget still holds.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import type { Clock } from "../clock.ts";
import { type Budget, type BudgetPeriod, type BudgetReached, type BudgetView, describeReached } from "./budget.ts";
import { type BreakerChange, CircuitBreaker, isAvailabilityFailure } from "./circuit_breaker.ts";
import {
  type ChatOptions,
  type ChatRequest,
  type ChatResponse,
  emptyUsageTotals,
  type Provider,
  type UsageTotals,
} from "./provider.ts";
import { ProviderError } from "./provider_error.ts";

/** One provider of the chain. */
export interface ChainMember {
  /** `<model>@<host>` or its `name:`. */
  name: string;
  role: "primary" | "fallback";
  provider: Provider & { close?(): void };
  /** Deadline of one probe: the provider's `llm.timeout`. */
  timeoutMs: number;
}

/** Options of {@link ProviderChain}. */
export interface ProviderChainOptions {
  /** The primary first, then the fallbacks in order. */
  members: readonly ChainMember[];
  clock: Clock;
  logger: Logger;
  /** `llm.probe_interval`. */
  probeIntervalMs: number;
  /** The primary's caps (`llm.budget`); none: no cap. */
  budget?: Budget | undefined;
}

/** What changed, for whoever tells the owner; each is emitted once per change. */
export type ChainEvent =
  /** No provider can answer any more. */
  | { type: "lost" }
  /** A provider can answer again after `lost`: the one that will. */
  | { type: "back"; provider: string }
  /** A provider failed and is skipped until a probe finds it answering. */
  | { type: "provider_down"; provider: string; error: string }
  /** A provider that was down answers again. */
  | { type: "provider_up"; provider: string }
  /** The primary reached a cap; it is skipped until the period turns. */
  | {
    type: "budget_reached";
    provider: string;
    period: BudgetPeriod;
    spent: number;
    limit: number;
    /** `llm.prices`' currency, or `tokens`. */
    currency: string;
  };

/** A provider's state: `up` (used), `down` (its breaker is open), `over_budget` (the primary, over a cap). */
export type ProviderState = "up" | "down" | "over_budget";

/** One provider in `/api/status` (`llm.providers`). */
export interface ProviderStatus {
  name: string;
  model: string;
  role: "primary" | "fallback";
  state: ProviderState;
  /** When it entered that state (ISO; homed's start before any change). */
  since: string;
  /** The last failure that made (or kept) it down, or null. */
  last_error: string | null;
  /** Requests that failed because it could not answer. */
  failures: number;
  /** Background probes made while it was down. */
  probes: number;
  /** When the next probe is due (ISO), or null while it is up. */
  next_probe: string | null;
}

/** The chain in `/api/status`: `llm.providers` and `llm.budget`. */
export interface ChainStatus {
  providers: ProviderStatus[];
  /** The primary's caps with spend and what is left; null without `llm.budget`. */
  budget: BudgetView | null;
}

/** What the daemon hands out of the chain (`Daemon.llm`): whether a model answers, its status, its changes. */
export interface LlmAvailability {
  /** Whether some provider may be asked now (up, and the primary within its budget). */
  available(): boolean;
  /**
   * Why no provider may be asked now — the words of the `unavailable` error: `No model is answering: <name>: <why>;
   * …` — or undefined while one may.
   */
  reason(): string | undefined;
  status(): ChainStatus;
  /** Calls `listener` on every {@link ChainEvent}; returns the unsubscribe. */
  onChange(listener: (event: ChainEvent) => void): () => void;
}

interface Member extends ChainMember {
  breaker: CircuitBreaker;
  shown: { state: ProviderState; since: number };
}

/** The providers in order, with their breakers and the primary's budget. */
export class ProviderChain implements Provider, LlmAvailability {
  readonly model: string;
  #options: ProviderChainOptions;
  #members: Member[];
  #listeners = new Set<(event: ChainEvent) => void>();
  #available = true;
  #cancelBudgetWatch: (() => void) | undefined;
  #closed = false;

  /**
   * @example
   * ```ts
   * import { systemClock } from "../clock.ts";
   * import { log } from "../log/logging.ts";
   * import type { Provider } from "./provider.ts";
   *
   * declare const deepseek: Provider;
   * declare const ollama: Provider;
   * const chain = new ProviderChain({
   *   members: [
   *     { name: "deepseek-v4-flash@api.deepseek.com", role: "primary", provider: deepseek, timeoutMs: 30_000 },
   *     { name: "llama3@127.0.0.1:11434", role: "fallback", provider: ollama, timeoutMs: 30_000 },
   *   ],
   *   clock: systemClock,
   *   logger: log("llm"),
   *   probeIntervalMs: 30_000,
   * });
   * chain.onChange((event) => console.log(event.type)); // "provider_down" when DeepSeek fails, then answers on
   * const answer = await chain.chat({ messages: [{ role: "user", content: "hi" }] }); // from whichever answers
   * chain.status().providers.map((provider) => provider.state); // ["down", "up"] while DeepSeek is down
   * chain.close();
   * ```
   */
  constructor(options: ProviderChainOptions) {
    const [primary] = options.members;
    if (!primary) throw new RangeError("A provider chain needs at least one provider");
    this.#options = options;
    this.model = primary.provider.model;
    const started = options.clock.now();
    this.#members = options.members.map((member) => {
      const entry: Member = {
        ...member,
        shown: { state: "up", since: started },
        breaker: new CircuitBreaker({
          name: member.name,
          probe: (signal) => probeOf(member.provider, signal),
          clock: options.clock,
          intervalMs: options.probeIntervalMs,
          timeoutMs: member.timeoutMs,
          logger: options.logger,
          onChange: (change) => this.#breakerChanged(entry, change),
        }),
      };
      return entry;
    });
    const reached = this.#refresh();
    if (reached.length) {
      options.logger.warning("LLM {name} is {why}; it is skipped until the period turns", {
        name: primary.name,
        why: describeReached(reached[0]!),
      });
    }
  }

  /** Whether some provider may be asked now: up, and (the primary) within its budget. */
  available(): boolean {
    this.#refresh();
    return this.#available;
  }

  /** Why no provider may be asked now (the `unavailable` error's words), or undefined while one may. */
  reason(): string | undefined {
    const reached = this.#refresh();
    if (this.#available) return undefined;
    return noneAnswering(this.#members.map((member) => `${member.name}: ${this.#skipReason(member, reached)}`));
  }

  /** Every provider's state, and the primary's budget. */
  status(): ChainStatus {
    this.#refresh();
    const iso = (ms: number | undefined) => ms === undefined ? null : new Date(ms).toISOString();
    return {
      providers: this.#members.map((member) => ({
        name: member.name,
        model: member.provider.model,
        role: member.role,
        state: member.shown.state,
        since: new Date(member.shown.since).toISOString(),
        last_error: member.breaker.lastError?.message ?? null,
        failures: member.breaker.failures,
        probes: member.breaker.probes,
        next_probe: iso(member.breaker.nextProbe),
      })),
      budget: this.#options.budget ? this.#options.budget.view() : null,
    };
  }

  /** Calls `listener` on every change; returns the unsubscribe. A listener that throws is logged, never more. */
  onChange(listener: (event: ChainEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * Asks each usable provider in order until one answers. An availability failure marks that provider down and
   * moves on; any other failure (`bad_request`, `bad_response`, `cancelled`) is thrown as it is.
   *
   * @throws {ProviderError} `unavailable` naming every provider and why none answered
   */
  async chat(request: ChatRequest, options: ChatOptions = {}): Promise<ChatResponse> {
    let reached = this.#refresh();
    const single = this.#members.length === 1;
    const reasons: string[] = [];
    for (const [index, member] of this.#members.entries()) {
      const state = this.#stateOf(member, reached);
      if (state === "over_budget" || (state === "down" && !single)) {
        reasons.push(`${member.name}: ${this.#skipReason(member, reached)}`);
        continue;
      }
      if (options.signal?.aborted) throw new ProviderError("cancelled", "The LLM call was cancelled");
      const behind = this.#members.slice(index + 1).some((next) => this.#stateOf(next, reached) === "up");
      let shown = false;
      const onDelta = options.onDelta;
      try {
        const response = await member.provider.chat(request, {
          ...options,
          ...(onDelta
            ? {
              onDelta: (text: string) => {
                shown = true;
                onDelta(text);
              },
            }
            : {}),
          ...(behind || options.failFast ? { failFast: true } : {}),
        });
        member.breaker.succeed();
        if (member.role === "fallback") {
          this.#options.logger.debug("LLM {name} answered in place of the providers before it", { name: member.name });
        }
        this.#refresh();
        return response;
      } catch (error) {
        if (!isAvailabilityFailure(error) || options.signal?.aborted) throw error;
        member.breaker.fail(error);
        // The user saw the answer begin; one provider answers alone.
        if (shown || single) throw error;
        reasons.push(`${member.name}: ${this.#downReason(member)}`);
        reached = this.#refresh();
      }
    }
    throw new ProviderError("unavailable", noneAnswering(reasons));
  }

  /** Token and request totals over every provider. */
  usage(): UsageTotals {
    const totals = emptyUsageTotals();
    for (const member of this.#members) {
      const usage = member.provider.usage();
      for (const key of Object.keys(totals) as Array<keyof UsageTotals>) totals[key] += usage[key];
    }
    return totals;
  }

  /** Stops the probes and closes every provider (an adapter's VM). Idempotent. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#cancelBudgetWatch?.();
    this.#cancelBudgetWatch = undefined;
    for (const member of this.#members) {
      member.breaker.close();
      member.provider.close?.();
    }
  }

  #downReason(member: Member): string {
    const seconds = Math.round(this.#options.probeIntervalMs / 1000);
    return `${member.breaker.lastError?.message ?? "it failed"} (probing every ${seconds}s)`;
  }

  /** Why `member` is not asked: down, or (the primary) over a cap. */
  #skipReason(member: Member, reached: readonly BudgetReached[]): string {
    return this.#stateOf(member, reached) === "over_budget" ? describeReached(reached[0]!) : this.#downReason(member);
  }

  #stateOf(member: Member, reached: readonly unknown[]): ProviderState {
    if (member.breaker.state === "open") return "down";
    if (member.role === "primary" && reached.length) return "over_budget";
    return "up";
  }

  #breakerChanged(member: Member, change: BreakerChange): void {
    this.#emit(
      change.state === "open"
        ? { type: "provider_down", provider: member.name, error: change.error.message }
        : { type: "provider_up", provider: member.name },
    );
    this.#refresh();
  }

  /**
   * Recomputes every provider's state and the budget, and emits what changed: caps newly reached, then `lost` or
   * `back`. Returns the caps reached now.
   */
  #refresh(): BudgetReached[] {
    const { budget, clock, logger } = this.#options;
    let checked: { reached: BudgetReached[]; fresh: BudgetReached[] } = { reached: [], fresh: [] };
    try {
      if (budget) checked = budget.check();
    } catch (error) {
      // A ledger that cannot be read never stops the household's model: the cap is not applied meanwhile.
      logger.warning("Could not read the LLM budget's spend from usage.db: {error}", { error });
    }
    const { reached, fresh } = checked;
    const now = clock.now();
    for (const member of this.#members) {
      const state = this.#stateOf(member, reached);
      if (state !== member.shown.state) member.shown = { state, since: now };
    }
    const primary = this.#members[0]!;
    for (const cap of fresh) {
      logger.warning("LLM {name} is {why}; it is skipped until the period turns", {
        name: primary.name,
        why: describeReached(cap),
      });
      const { period, spent, limit, currency } = cap;
      this.#emit({ type: "budget_reached", provider: primary.name, period, spent, limit, currency });
    }
    this.#watchBudget(reached.length > 0);
    const first = this.#members.find((member) => member.shown.state === "up");
    if ((first !== undefined) !== this.#available) {
      this.#available = first !== undefined;
      if (first) {
        logger.info("A model answers again: {name}", { name: first.name });
        this.#emit({ type: "back", provider: first.name });
      } else {
        logger.warning("No model is answering");
        this.#emit({ type: "lost" });
      }
    }
    return reached;
  }

  /** While the primary is over a cap, looks every probe interval whether the period turned. */
  #watchBudget(over: boolean): void {
    if (!over || this.#closed) {
      this.#cancelBudgetWatch?.();
      this.#cancelBudgetWatch = undefined;
      return;
    }
    this.#cancelBudgetWatch ??= this.#options.clock.after(this.#options.probeIntervalMs, () => {
      this.#cancelBudgetWatch = undefined;
      try {
        this.#refresh();
      } catch (error) {
        this.#options.logger.error("Checking the LLM budget failed: {error}", { error });
      }
    });
  }

  #emit(event: ChainEvent): void {
    for (const listener of this.#listeners) {
      try {
        listener(event);
      } catch (error) {
        this.#options.logger.error("A listener of the LLM chain failed on {type}: {error}", {
          type: event.type,
          error,
        });
      }
    }
  }
}

function noneAnswering(reasons: readonly string[]): string {
  return `No model is answering: ${reasons.join("; ")}`;
}

/** A provider's probe, or a minimal chat for one without. */
function probeOf(provider: Provider, signal: AbortSignal): Promise<void> {
  if (provider.probe) return provider.probe(signal);
  return provider.chat({ messages: [{ role: "user", content: "ping" }] }, { signal }).then(() => {});
}

/**
 * Why no model can answer now (each provider's state), or undefined when one may.
 *
 * @example
 * ```ts
 * declare const llm: LlmAvailability;
 * whyModelDown(llm); // e.g. "deepseek: connection refused; ollama: over its budget"
 * ```
 */
export function whyModelDown(llm: LlmAvailability): string | undefined {
  if (llm.available()) return undefined;
  return llm.status().providers.map((provider) =>
    `${provider.name}: ${provider.state === "over_budget" ? "over its budget" : provider.last_error ?? "down"}`
  ).join("; ");
}
