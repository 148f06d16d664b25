/**
 * Teardown that runs every step even when an earlier one throws, then fails with all that went wrong — so a failed
 * exit-code assertion never hides the fake LLM's contract violations.
 *
 * @module
 */

/**
 * Runs each step in order; throws the only error, or an `AggregateError` listing them all.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { FakeLlm } from "./fake_llm.ts";
 * import { startHomed, workspace } from "./homed_process.ts";
 *
 * const fake = FakeLlm.start();
 * const homed = await startHomed(await workspace({ llm: { base_url: fake.baseUrl, api_key: "sk-test-0123456789" } }));
 * await teardown(async () => assert.equal(await homed.stop(), 0, homed.stderr()), () => fake.close());
 * ```
 */
export async function teardown(...steps: Array<() => unknown>): Promise<void> {
  const errors: unknown[] = [];
  for (const step of steps) {
    try {
      await step();
    } catch (error) {
      errors.push(error);
    }
  }
  if (errors.length === 1) throw errors[0];
  if (errors.length > 1) throw new AggregateError(errors, `${errors.length} teardown steps failed`);
}
