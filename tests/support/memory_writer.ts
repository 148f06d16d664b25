/**
 * A child process for the memory crash test: observes the utterances of {@link memoryWriterText} from a given index
 * on, printing `ack <index>` once each `observe` returned, and runs the memory jobs (distilling with the rule fallback,
 * facts and cursor in one transaction) every 25 utterances — until it is killed.
 *
 * Usage: deno run --allow-read=DIR --allow-write=DIR tests/support/memory_writer.ts DIR START
 */

import { getLogger } from "@logtape/logtape";
import { systemClock } from "../../src/clock.ts";
import { openMemory } from "../../src/memory/memory.ts";

/** Utterance `n`: every third one states where a thing is (a fact the rule fallback finds). */
export function memoryWriterText(n: number): string {
  return n % 3 === 0 ? `thing${n} is in room${n % 5}` : `small talk ${n}: the weather is mild`;
}

if (import.meta.main) {
  const [dir, start] = [Deno.args[0]!, Number(Deno.args[1])];
  const memory = await openMemory({ dir, clock: systemClock, logger: getLogger(["writer"]), batchSize: 10 });
  const out = (line: string) => Deno.stdout.writeSync(new TextEncoder().encode(`${line}\n`));
  for (let n = start;; n++) {
    await memory.observe({
      eventId: `e${n}`,
      time: n,
      role: "user",
      source: "http",
      sender: "owner",
      text: memoryWriterText(n),
    });
    out(`ack ${n}`);
    if (n % 25 === 24) await memory.runJobs();
  }
}
