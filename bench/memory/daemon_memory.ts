/**
 * Memory as the daemon wires it, for the replay benchmarks: `MemoryService` with a context window of 30 entries /
 * 48k tokens whose evictions become layer-2 documents, and its memory job run every 30 minutes of simulated time.
 *
 * @module
 */

import { getLogger } from "@logtape/logtape";
import { join } from "node:path";
import { ContextWindow } from "../../src/context/context_window.ts";
import { MemoryService } from "../../src/memory/memory_service.ts";
import type { FakeClock } from "../../tests/support/fake_clock.ts";

/** `memory.distill_interval`'s default. */
export const JOB_EVERY_MS = 30 * 60_000;

/** What {@link daemonMemory} gives a replay. */
export interface DaemonMemory {
  memory: MemoryService;
  context: ContextWindow;
  /** Moves the clock to `time` (never back), running the memory job first when its interval has passed. */
  at(time: number): Promise<void>;
  /** One more interval, then the job: what was said last is distilled too. */
  finish(): Promise<void>;
  /**
   * One utterance at `time` as the daemon takes it from a group chat `source`: the clock moved there (the job first
   * when due), a user entry of the context window, then the after-turn journal (no reply).
   */
  say(turn: { id: string; speaker: string; text: string; time: number }, source: string): Promise<void>;
}

/**
 * Opens memory in `dir/memory` on `clock`.
 *
 * @example
 * ```ts
 * import { FakeClock } from "../../tests/support/fake_clock.ts";
 *
 * const clock = new FakeClock();
 * const { memory, at, finish } = await daemonMemory("/tmp/replay", clock);
 * await at(clock.now() + 60_000);
 * await finish();
 * await memory.stop();
 * ```
 */
export async function daemonMemory(dir: string, clock: FakeClock): Promise<DaemonMemory> {
  const memory = new MemoryService({
    dir: join(dir, "memory"),
    clock,
    logger: getLogger(["bench", "memory"]),
    jobEveryMs: JOB_EVERY_MS,
  });
  await memory.start();
  const context = new ContextWindow({
    maxEntries: 30,
    maxTokens: 48_000,
    entries: memory.restored,
    onEvict: (entries) => memory.archive(entries),
  });
  memory.keep(context);
  const [job] = memory.jobs();
  const signal = new AbortController().signal;
  let lastJob = clock.now();
  const at = async (time: number) => {
    clock.advance(Math.max(0, time - clock.now()));
    if (clock.now() - lastJob >= JOB_EVERY_MS) {
      await job!.run(signal);
      lastJob = clock.now();
    }
  };
  return {
    memory,
    context,
    at,
    async finish() {
      clock.advance(JOB_EVERY_MS);
      await job!.run(signal);
    },
    async say(turn, source) {
      await at(turn.time);
      const origin = { eventId: turn.id, time: clock.now(), source, sender: turn.speaker };
      context.appendTurn([{
        role: "user",
        content: `[via ${source}, from ${turn.speaker}, trust household] ${turn.text}`,
      }], origin);
      await memory.afterTurn({ ...origin, trust: "household", text: turn.text, reply: "" });
    },
  };
}
