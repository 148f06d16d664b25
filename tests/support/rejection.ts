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
 * const error = await rejection(provider.chat(request), ProviderError);
 * assert.equal(error.code, "timeout");
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
