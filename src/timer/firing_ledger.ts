/**
 * Firings the schedule store could not record (issue 38.2): `schedules.fired` beside `schedules.db`, a file of fixed
 * slots made — full size, while the disk has room — when the timer opens. A schedule that fired while `schedules.db`
 * cannot be written (the disk is full) keeps its new state (last run, next run, runs) in one slot, written over in
 * place: overwriting bytes a file already holds needs no new block, so it works on a full disk (tmpfs, ext4). After a
 * restart the timer reads the slots first, so a reminder delivered before the restart is not delivered again; each
 * slot is cleared once `schedules.db` took its firing.
 *
 * A slot is {@link SLOT_BYTES} bytes: one JSON line padded with spaces; a blank or unreadable slot is free. The state is
 * absolute (not "one more run"), so writing a slot's firing to `schedules.db` twice does no harm.
 *
 * @module
 */

/** A firing, or a skipped run, that `schedules.db` has not taken yet: the schedule's state after it. */
export interface UnsavedFiring {
  id: string;
  /** The last firing (epoch ms); null when no firing was recorded (a skipped run only). */
  lastRun: number | null;
  /** The next run (epoch ms); null once a one-shot fired. */
  nextRun: number | null;
  /** How many times it fired in all. */
  runs: number;
}

/** Bytes of one slot (a JSON line padded with spaces, ending in a newline). */
export const SLOT_BYTES = 128;
/** Slots of the file: how many schedules may have unsaved firings at once (8 KiB in all). */
export const SLOTS = 64;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

function blankSlot(): Uint8Array {
  const slot = new Uint8Array(SLOT_BYTES).fill(0x20);
  slot[SLOT_BYTES - 1] = 0x0a;
  return slot;
}

function encodeSlot(entry: UnsavedFiring): Uint8Array | undefined {
  const line = encoder.encode(JSON.stringify(entry));
  if (line.length > SLOT_BYTES - 1) return undefined;
  const slot = blankSlot();
  slot.set(line);
  return slot;
}

function decodeSlot(bytes: Uint8Array): UnsavedFiring | undefined {
  const text = decoder.decode(bytes).trim();
  if (!text) return undefined;
  try {
    const value = JSON.parse(text) as Partial<UnsavedFiring>;
    const time = (x: unknown) => x === null || (typeof x === "number" && Number.isFinite(x));
    if (typeof value.id !== "string" || !time(value.lastRun) || !time(value.nextRun)) return undefined;
    if (typeof value.runs !== "number" || !Number.isInteger(value.runs) || value.runs < 0) return undefined;
    return { id: value.id, lastRun: value.lastRun!, nextRun: value.nextRun!, runs: value.runs };
  } catch {
    return undefined;
  }
}

/**
 * The slots of `schedules.fired`.
 *
 * @example
 * ```ts
 * import { join } from "node:path";
 *
 * const ledger = FiringLedger.open(join(Deno.makeTempDirSync(), "schedules.fired"));
 * ledger.put({ id: "s-1f3a9c2e", lastRun: Date.parse("2026-12-01T12:00:00Z"), nextRun: null, runs: 1 }); // true
 * ledger.entries().length; // 1
 * ledger.remove("s-1f3a9c2e");
 * ledger.close();
 * ```
 */
export class FiringLedger {
  readonly path: string;
  #file: Deno.FsFile | undefined;
  #slots = new Map<string, number>();
  #entries = new Map<string, UnsavedFiring>();
  /** Why the file could not be made or opened, or undefined. */
  readonly unavailable: string | undefined;

  private constructor(path: string, file: Deno.FsFile | undefined, unavailable: string | undefined) {
    this.path = path;
    this.#file = file;
    this.unavailable = unavailable;
  }

  /**
   * Opens `path`, making it full size when it is missing or of another size (its readable slots kept). When that
   * cannot be done (the disk is already full, read-only) the ledger works without a file: {@link put} says false and
   * {@link unavailable} says why — firings are then kept in memory only.
   */
  static open(path: string): FiringLedger {
    const size = SLOT_BYTES * SLOTS;
    let found: UnsavedFiring[] = [];
    try {
      const bytes = Deno.readFileSync(path);
      found = FiringLedger.#parse(bytes);
      if (bytes.length !== size) FiringLedger.#make(path, found);
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) return FiringLedger.#without(path, error);
      try {
        FiringLedger.#make(path, []);
      } catch (error) {
        return FiringLedger.#without(path, error);
      }
    }
    let file: Deno.FsFile;
    try {
      file = Deno.openSync(path, { read: true, write: true });
    } catch (error) {
      return FiringLedger.#without(path, error);
    }
    const ledger = new FiringLedger(path, file, undefined);
    const bytes = Deno.readFileSync(path);
    for (let slot = 0; slot < SLOTS; slot++) {
      const entry = decodeSlot(bytes.subarray(slot * SLOT_BYTES, (slot + 1) * SLOT_BYTES));
      if (entry) ledger.#slots.set(entry.id, slot), ledger.#entries.set(entry.id, entry);
    }
    return ledger;
  }

  static #without(path: string, error: unknown): FiringLedger {
    return new FiringLedger(path, undefined, `${path} cannot be used: ${(error as Error).message}`);
  }

  static #parse(bytes: Uint8Array): UnsavedFiring[] {
    const found: UnsavedFiring[] = [];
    for (let at = 0; at + SLOT_BYTES <= bytes.length; at += SLOT_BYTES) {
      const entry = decodeSlot(bytes.subarray(at, at + SLOT_BYTES));
      if (entry) found.push(entry);
    }
    return found;
  }

  /** Writes the whole file (a temporary one renamed over it): `entries` in the first slots, the rest blank. */
  static #make(path: string, entries: UnsavedFiring[]): void {
    const bytes = new Uint8Array(SLOT_BYTES * SLOTS);
    for (let slot = 0; slot < SLOTS; slot++) {
      bytes.set((entries[slot] && encodeSlot(entries[slot]!)) ?? blankSlot(), slot * SLOT_BYTES);
    }
    const temporary = `${path}.tmp`;
    try {
      const file = Deno.openSync(temporary, { write: true, create: true, truncate: true });
      try {
        for (let done = 0; done < bytes.length;) done += file.writeSync(bytes.subarray(done));
        file.syncSync();
      } finally {
        file.close();
      }
      Deno.renameSync(temporary, path);
    } catch (error) {
      try {
        Deno.removeSync(temporary);
      } catch {
        // Nothing was left.
      }
      throw error;
    }
  }

  /** The firings not yet in `schedules.db`, as the file holds them. */
  entries(): UnsavedFiring[] {
    return [...this.#entries.values()];
  }

  /**
   * Keeps `entry` in its schedule's slot (or a free one), written over in place and synced: true when it is on disk,
   * false when the ledger has no file, no free slot, or the write failed (the firing is then kept in memory only).
   */
  put(entry: UnsavedFiring): boolean {
    const bytes = encodeSlot(entry);
    if (!this.#file || !bytes) return false;
    let slot = this.#slots.get(entry.id);
    if (slot === undefined) {
      const used = new Set(this.#slots.values());
      slot = Array.from({ length: SLOTS }, (_, index) => index).find((index) => !used.has(index));
      if (slot === undefined) return false;
    }
    if (!this.#write(slot, bytes)) return false;
    this.#slots.set(entry.id, slot);
    this.#entries.set(entry.id, entry);
    return true;
  }

  /** Clears `id`'s slot (its firing is in `schedules.db` now). */
  remove(id: string): void {
    const slot = this.#slots.get(id);
    this.#entries.delete(id);
    if (slot === undefined) return;
    if (this.#write(slot, blankSlot())) this.#slots.delete(id);
  }

  #write(slot: number, bytes: Uint8Array): boolean {
    const file = this.#file!;
    try {
      file.seekSync(slot * SLOT_BYTES, Deno.SeekMode.Start);
      for (let done = 0; done < bytes.length;) done += file.writeSync(bytes.subarray(done));
      file.syncDataSync();
      return true;
    } catch {
      return false;
    }
  }

  close(): void {
    this.#file?.close();
    this.#file = undefined;
  }
}
