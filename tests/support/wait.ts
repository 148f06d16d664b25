/**
 * Polling with a deadline, for tests: every wait says what it waited for when it gives up.
 *
 * @module
 */

/**
 * Resolves once `condition()` is true (checked every `everyMs`); rejects after `limitMs` naming `what`.
 *
 * @example
 * ```ts
 * import { FakeLlm } from "./fake_llm.ts";
 *
 * await using fake = FakeLlm.start();
 * fake.enqueue({ reply: "Hello" });
 * // … the code under test calls fake.baseUrl …
 * await waitFor(() => fake.requests.length > 0, "the first LLM request", { limitMs: 5_000 });
 * ```
 */
export async function waitFor(
  condition: () => boolean | Promise<boolean>,
  what: string,
  options: { limitMs?: number; everyMs?: number } = {},
): Promise<void> {
  const limitMs = options.limitMs ?? 10_000;
  const started = performance.now();
  while (!(await condition())) {
    if (performance.now() - started > limitMs) throw new Error(`Gave up after ${limitMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, options.everyMs ?? 10));
  }
}

/**
 * `work`'s value, or a rejection naming `what` when it takes longer than `limitMs` (a hang becomes a clear failure).
 *
 * @example
 * ```ts
 * declare const closed: Promise<CloseEvent>;
 * const event = await within(closed, 5_000, "homed to close the socket");
 * ```
 */
export async function within<T>(work: Promise<T>, limitMs: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`Gave up after ${limitMs} ms waiting for ${what}`)), limitMs);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}
