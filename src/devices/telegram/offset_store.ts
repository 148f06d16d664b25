/**
 * The next `getUpdates` offset, kept on disk (`<data_dir>/telegram/offset.json`) so a restart neither repeats nor
 * loses a message: Telegram forgets an update once asked with a higher offset, so the offset is written — atomically
 * and durably, a power cut cannot undo it — after the updates of an answer were handed in and before that offset is
 * sent. A damaged file is reported, never fatal: polling then starts from Telegram's own unconfirmed queue (it keeps
 * unconfirmed updates 24 hours), which at worst repeats what the in-memory de-duplication cannot catch.
 *
 * @module
 */

import { dirname } from "node:path";
import { atomicWriteText } from "../../fs/atomic_write.ts";

/** What reading the file found. */
export type StoredOffset =
  | { offset: number }
  | { offset: undefined; problem?: string };

/** The offset file of one bot. */
export class OffsetStore {
  readonly path: string;
  #last: number | undefined;

  /**
   * @example
   * ```ts
   * const store = new OffsetStore("/var/lib/homed/telegram/offset.json");
   * ```
   */
  constructor(path: string) {
    this.path = path;
  }

  /**
   * The stored offset; `problem` says why there is none when the file is there but unusable (not JSON, not an
   * offset, unreadable). A missing file is no problem: the first start.
   *
   * @example
   * ```ts
   * const stored = await new OffsetStore("/tmp/homed-offset-example.json").read();
   * if (stored.offset === undefined && stored.problem) console.log(stored.problem);
   * ```
   */
  async read(): Promise<StoredOffset> {
    let text: string;
    try {
      text = await Deno.readTextFile(this.path);
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) return { offset: undefined };
      return { offset: undefined, problem: `cannot read ${this.path}: ${(error as Error).message}` };
    }
    try {
      const offset = (JSON.parse(text) as { offset?: unknown })?.offset;
      if (typeof offset === "number" && Number.isSafeInteger(offset) && offset > 0) {
        this.#last = offset;
        return { offset };
      }
    } catch {
      // Reported below with what was found.
    }
    return { offset: undefined, problem: `${this.path} holds no offset: ${JSON.stringify(text.slice(0, 80))}` };
  }

  /**
   * Keeps `offset` (atomic, fsync'd with its folder); a write of the offset already kept costs nothing.
   *
   * @example
   * ```ts
   * await new OffsetStore("/tmp/homed-offset-example.json").write(1001);
   * ```
   */
  async write(offset: number): Promise<void> {
    if (offset === this.#last) return;
    await Deno.mkdir(dirname(this.path), { recursive: true });
    await atomicWriteText(this.path, `${JSON.stringify({ offset })}\n`, { durable: true });
    this.#last = offset;
  }
}
