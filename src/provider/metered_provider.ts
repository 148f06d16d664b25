/**
 * A provider whose every request is counted in the {@link UsageLedger}: the same answers, one ledger row more.
 *
 * @module
 */

import type { ChatOptions, ChatRequest, ChatResponse, Provider, UsageTotals } from "./provider.ts";
import type { UsageLedger } from "./usage_ledger.ts";

/**
 * Wraps `provider` so each answered or failed request is added to `ledger`, under `name` (the provider's name in the
 * chain; default the ledger's primary). A ledger that cannot write (a full disk) never fails the request:
 * `onLedgerError` hears of it. A probe passes through uncounted.
 *
 * @example
 * ```ts
 * import { systemClock } from "../clock.ts";
 * import type { Provider } from "./provider.ts";
 * import { UsageLedger } from "./usage_ledger.ts";
 *
 * declare const provider: Provider;
 * const ledger = UsageLedger.open({ path: ":memory:", clock: systemClock, timezone: "" });
 * const counted = metered(provider, ledger, (error) => console.error(error), "deepseek-v4-flash@api.deepseek.com");
 * await counted.chat({ messages: [{ role: "user", content: "hi" }] });
 * ```
 */
export function metered(
  provider: Provider & { close?(): void },
  ledger: UsageLedger,
  onLedgerError: (error: unknown) => void,
  name?: string,
): Provider & { close(): void } {
  const note = (write: () => void) => {
    try {
      write();
    } catch (error) {
      onLedgerError(error);
    }
  };
  return {
    get model() {
      return provider.model;
    },
    async chat(request: ChatRequest, options?: ChatOptions): Promise<ChatResponse> {
      let response: ChatResponse;
      try {
        response = await provider.chat(request, options);
      } catch (error) {
        note(() => ledger.recordError(name));
        throw error;
      }
      note(() => ledger.record(response.usage, name));
      return response;
    },
    usage(): UsageTotals {
      return provider.usage();
    },
    ...(provider.probe ? { probe: (signal: AbortSignal) => provider.probe!(signal) } : {}),
    close() {
      provider.close?.();
    },
  };
}
