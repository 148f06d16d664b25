import { getLogger } from "@logtape/logtape";
import type { Clock } from "../../src/clock.ts";
import { OpenAIProvider } from "../../src/provider/openai_provider.ts";

/**
 * The real OpenAI-compatible provider pointed at a {@link FakeLlm} on loopback, deterministic (temperature 0, no
 * retries, fixed jitter) — for tests of code that calls an LLM through the Provider.
 *
 * @example
 * ```ts
 * import { FakeLlm } from "./fake_llm.ts";
 * import { FakeClock } from "./fake_clock.ts";
 *
 * const fake = FakeLlm.start({ apiKey: "sk-test-0123456789" });
 * const provider = fakeLlmProvider({ baseUrl: fake.baseUrl, apiKey: "sk-test-0123456789", clock: new FakeClock() });
 * ```
 */
export function fakeLlmProvider(options: { baseUrl: string; apiKey: string; clock: Clock }): OpenAIProvider {
  return new OpenAIProvider({
    model: "m",
    baseUrl: options.baseUrl,
    apiKey: options.apiKey,
    temperature: 0,
    maxTokens: 500,
    thinking: false,
    timeoutMs: 30_000,
    maxRetries: 0,
    clock: options.clock,
    random: () => 0.5,
    logger: getLogger(["test"]),
    missingKeyHint: "",
  });
}
