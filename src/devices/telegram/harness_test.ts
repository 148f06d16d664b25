/**
 * The Telegram device's tests' harness (no tests of its own): a device pointed at a {@link FakeTelegram}, a context
 * that records what it hands in, the real IO outbox in front of it, and a logger that keeps every line.
 *
 * @module
 */

import { type Clock, systemClock } from "../../clock.ts";
import type { DeviceContext, InputDraft } from "../../io/device.ts";
import type { InputEvent, OutputEvent } from "../../io/event.ts";
import { Outbox } from "../../io/outbox.ts";
import type { FakeTelegram } from "../../../tests/support/fake_telegram.ts";
import { recordingLogger } from "../../../tests/support/recording_logger.ts";
import { TelegramDevice, type TelegramDeviceOptions, type TelegramSettings } from "./telegram_device.ts";

export const OWNER = { id: 42, first_name: "Ann", username: "ann_at_home" };
export const MEMBER = { id: 43, first_name: "Bo" };
export const STRANGER = { id: 44, first_name: "Eve" };
export const HOME = { id: -100777, type: "supergroup" as const, title: "Home" };
export const private_ = (user: { id: number }) => ({ id: user.id, type: "private" as const });

/** A device under test and what it did. */
export interface Harness {
  device: TelegramDevice;
  inputs: InputEvent[];
  lines: string[];
  outbox: Outbox;
  dataDir: string;
  readyAgain: number;
  /** Queues an output as the IO layer does (waits while canSend says no). */
  push(event: OutputEvent): Promise<void>;
  /** Stops the device, then removes the data dir unless `keep`. */
  close(keep?: boolean): Promise<void>;
}

/** Makes and starts a device against `fake`. */
export async function harness(
  fake: FakeTelegram,
  options: {
    settings?: Partial<TelegramSettings>;
    media?: TelegramDeviceOptions["media"];
    dataDir?: string;
    backoff?: TelegramDeviceOptions["backoff"];
    unauthorizedWaitMs?: number;
    /** The device's clock (default the system's): a fake one makes its deadlines wait for the test. */
    clock?: Clock;
  } = {},
): Promise<Harness> {
  const clock = options.clock ?? systemClock;
  const dataDir = options.dataDir ?? await Deno.makeTempDir({ prefix: "homed-telegram-" });
  const lines: string[] = [];
  const inputs: InputEvent[] = [];
  const device = new TelegramDevice({
    settings: {
      token: fake.token,
      apiUrl: fake.apiUrl,
      owner: String(OWNER.id),
      allowUsers: [String(MEMBER.id)],
      allowGroups: [String(HOME.id)],
      splitAt: 4096,
      minSendIntervalMs: 0,
      pollTimeoutMs: 1_000,
      queueLimit: 10,
      dataDir,
      ...options.settings,
    },
    clock,
    random: () => 0.5,
    logger: recordingLogger(lines),
    ...(options.media ? { media: options.media } : {}),
    ...(options.backoff ? { backoff: options.backoff } : {}),
    ...(options.unauthorizedWaitMs ? { unauthorizedWaitMs: options.unauthorizedWaitMs } : {}),
  });
  const outbox = new Outbox(device, clock, 30_000);
  let n = 0;
  const made: Harness = {
    device,
    inputs,
    lines,
    outbox,
    dataDir,
    readyAgain: 0,
    push: (event) => outbox.push(event),
    async close(keep = false) {
      await device.stop();
      if (!keep) await Deno.remove(dataDir, { recursive: true });
    },
  };
  const context: DeviceContext = {
    emit: (draft: InputDraft) => {
      const event = { ...draft, id: `in-${++n}`, time: Date.now() } as InputEvent;
      inputs.push(event);
      return event;
    },
    readyAgain: () => {
      made.readyAgain++;
      outbox.wake();
    },
    waiting: () => outbox.pending,
    clock,
    log: recordingLogger(lines),
  };
  await device.start(context);
  return made;
}

/** Resolves once `count` inputs were handed in; fails after `limitMs` naming how many were. */
export async function inputsAt(h: Harness, count: number, limitMs = 5_000): Promise<InputEvent[]> {
  const started = performance.now();
  while (h.inputs.length < count) {
    if (performance.now() - started > limitMs) throw new Error(`waited for ${count} inputs, got ${h.inputs.length}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return h.inputs;
}

/** Waits until `done()` or fails after `limitMs` naming `what`. */
export async function until(done: () => boolean, what: string, limitMs = 5_000): Promise<void> {
  const started = performance.now();
  while (!done()) {
    if (performance.now() - started > limitMs) throw new Error(`gave up waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** A tiny JPEG-looking file (the fake reads the magic, not the picture). */
export const JPEG = Uint8Array.of(0xff, 0xd8, 0xff, 0xe0, 0, 16, 74, 70, 73, 70, 0, 1, 1, 2, 3, 4);
