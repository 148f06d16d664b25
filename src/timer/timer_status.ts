/**
 * The timer's status, as `/api/status` shows it under `schedules` and `homed doctor` reads it.
 *
 * @module
 */

/** What `/api/status` shows of the timer (`schedules`), and `homed doctor` reads. */
export type TimerStatus = {
  /** Active schedules. */
  active: number;
  /** The soonest run (ISO), or null. */
  next_run: string | null;
  fired: number;
  failed_firings: number;
  /** When the timer last woke (ISO), or null before its first wake-up. */
  last_wake: string | null;
  /** Wake-ups the heartbeat's watchdog found lost (and made). */
  stalls: number;
  /** Firings `schedules.db` has not taken yet (a full or read-only disk). */
  unsaved_firings: number;
};
