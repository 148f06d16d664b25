/**
 * Awaits a promise that must reject with an error of a given class, and returns that error for further assertions.
 *
 * @module
 */

import assert from "node:assert/strict";

/**
 * The error `promise` rejects with; fails the test when it resolves or rejects with something else.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ProviderError } from "../../src/provider/provider_error.ts";
 * import { FakeClock } from "./fake_clock.ts";
 * import { FakeLlm } from "./fake_llm.ts";
 * import { fakeLlmProvider } from "./fake_llm_provider.ts";
 *
 * await using fake = FakeLlm.start();
 * fake.enqueue({ status: 401 });
 * const provider = fakeLlmProvider({ baseUrl: fake.baseUrl, apiKey: "sk-test-0123456789", clock: new FakeClock() });
 *
 * const error = await rejection(
 *   provider.chat({ messages: [{ role: "system", content: "persona" }, { role: "user", content: "hi" }] }),
 *   ProviderError,
 * );
 * assert.equal(error.code, "auth");
 * ```
 */
export async function rejection<T extends Error>(
  promise: Promise<unknown>,
  type: abstract new (...args: never[]) => T,
): Promise<T> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof type, String(error));
    return error;
  }
  assert.fail(`expected a ${type.name}`);
}
