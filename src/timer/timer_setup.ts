/**
 * The daemon's timer step: the schedule store opened in the data dir (a damaged one set aside, `fs/set_aside.ts`) and
 * the timer device over it.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import { join } from "node:path";
import type { Clock } from "../clock.ts";
import { DamagedFiles } from "../fs/set_aside.ts";
import type { StoreHealth } from "../fs/store_health.ts";
import { checkedOpen, SQLITE_DAMAGE } from "../sqlite/damage.ts";
import { ScheduleStore } from "./schedule_store.ts";
import { FiringLedger } from "./firing_ledger.ts";
import { TimerDevice } from "./timer.ts";

/** Options of {@link openTimer}. */
export interface TimerSetupOptions {
  /** `daemon.data_dir`: schedules live in `schedules.db` under it. */
  dataDir: string;
  /** `daemon.timezone`. */
  timezone: string;
  clock: Clock;
  /** The `timer` logger. */
  logger: Logger;
  /** Why a channel cannot take a message, or undefined (the IO manager's check, asked when a schedule is made). */
  checkChannel(channel: string): string | undefined;
  /** A person's own private chats (`people:`), theirs to schedule for. */
  personChannels?(name: string): readonly string[];
  /**
   * Where a damaged `schedules.db` is set aside and recorded (the daemon's list, for `/api/status`); the timer then
   * starts with no schedules.
   */
  damaged?: DamagedFiles;
  /** Where a schedule that cannot be stored for the disk is recorded (`/api/status` `storage.degraded`). */
  health?: StoreHealth;
}

/** What {@link openTimer} gives the daemon. */
export interface TimerSetup {
  timer: TimerDevice;
  /** Closes the schedule store, once the timer has stopped (or start-up failed). */
  close(): void;
}

/**
 * Opens the schedule store and makes the timer device.
 *
 * @example
 * ```ts
 * import { systemClock } from "../clock.ts";
 * import { log } from "../log/logging.ts";
 *
 * const { timer, close } = openTimer({
 *   dataDir: "/var/lib/homed",
 *   timezone: "",
 *   clock: systemClock,
 *   logger: log("timer"),
 *   checkChannel: () => undefined,
 * });
 * timer.status(); // { active: 0, … }
 * close();
 * ```
 */
export function openTimer(options: TimerSetupOptions): TimerSetup {
  // A damaged file is set aside (with its -wal and -shm) and the timer starts on a new, empty one: never a crash loop.
  const damaged = options.damaged ?? new DamagedFiles(() => options.clock.now());
  const path = join(options.dataDir, "schedules.db");
  const store = damaged.open(path, checkedOpen(ScheduleStore.open), SQLITE_DAMAGE);
  // Made full size now, while the disk has room: a firing the full disk keeps out of schedules.db is written here.
  const ledger = FiringLedger.open(join(options.dataDir, "schedules.fired"));
  if (ledger.unavailable) {
    options.logger.warning(
      "{problem}; until it can be made, a firing schedules.db cannot take is kept in memory only (a restart fires it again)",
      { problem: ledger.unavailable },
    );
  }
  const timer = new TimerDevice({
    store,
    clock: options.clock,
    timezone: options.timezone,
    checkChannel: options.checkChannel,
    ...(options.personChannels ? { personChannels: options.personChannels } : {}),
    logger: options.logger,
    ...(options.health ? { health: { record: options.health, path } } : {}),
    ledger,
  });
  return {
    timer,
    close: () => {
      ledger.close();
      store.close();
    },
  };
}
