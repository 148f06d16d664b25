/**
 * The serial device (`serial`): every port configured under `devices.serial`, each its own channel
 * `serial:<name>`. What a port sends is cut into lines on its delimiter ({@link LineSplitter}: a line over
 * `max_line_bytes` cut and marked, invalid UTF-8 replaced and counted, empty lines ignored). With `turns: false` (a
 * sensor) a line is a device event (`serial.line`: recorded and shown in the next turn, no LLM call); with
 * `turns: true` (a console) it is a message from `serial:<name>` with the port's trust, and the reply, routed back to
 * the source by default, is written to the same port followed by the delimiter. The tool `serial_write` writes a
 * line now.
 *
 * A port that cannot be opened, or closes (unplugged, the far end of a pty gone), is logged once and opened again
 * with backoff (0.5 s doubling to 30 s, with jitter) until it is back under the same path; meanwhile outputs for it
 * wait in the device's IO queue (at most 100, `devices.serial`) and go once it is open. When the input queue refuses
 * a line (the port's sender already has its most inputs waiting), the port is not read until the line is taken, so
 * lines wait in the tty and its buffers — none is lost, none is held here beyond one read. The transport is
 * {@link openTty} (`stty` and `dd`: see `tty_link.ts` for why), replaceable for tests.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import { type Clock, deadline } from "../../clock.ts";
import type { Trust } from "../../identity/trust.ts";
import { type Device, type DeviceContext, type DeviceTool, type InputDraft, SendInterrupted } from "../../io/device.ts";
import { Capability, type OutputEvent } from "../../io/event.ts";
import { LaneFullError } from "../../io/fair_queue.ts";
import { waitForRoom } from "../../io/lane_room.ts";
import { ShuttingDown } from "../../io/turn_error.ts";
import { Backoff, dial } from "../../service/backoff.ts";
import { LineSplitter, type SplitLine } from "./line_splitter.ts";
import { type OpenPort, openTty, type SerialLink, TTY_SPEEDS } from "./tty_link.ts";

/** One port's settings (`devices.serial.<name>`). */
export interface SerialPortSettings {
  /** The tty, e.g. `/dev/ttyUSB0` or a `/dev/serial/by-id/…` link. */
  path: string;
  baud: number;
  /** true: each line is a message answered on the port; false: a device event. */
  turns: boolean;
  /** The trust of the port's inputs. */
  trust: Trust;
  /** What ends a line (one to eight characters). */
  delimiter: string;
  /** Longest line kept, in bytes; a longer one is cut there and marked. */
  maxLineBytes: number;
}

/** Options of {@link SerialDevice}. */
export interface SerialDeviceOptions {
  /** The configured ports by name (each name is a channel, `serial:<name>`). */
  ports: Record<string, SerialPortSettings>;
  clock: Clock;
  logger: Logger;
  /** Jitter of the reopen backoff (`Math.random` by default). */
  random?: () => number;
  /** How a port is opened ({@link openTty} by default). */
  openPort?: OpenPort;
}

/** A port as `/api/status` shows it. */
export interface SerialPortStatus {
  path: string;
  state: "open" | "closed" | "opening";
  /** When the port last opened (ISO 8601), or null. */
  opened_at: string | null;
  /** When the last line arrived (ISO 8601), or null. */
  last_line_at: string | null;
  /** Lines handed in. */
  lines: number;
  /** Lines cut at `max_line_bytes`. */
  cut_lines: number;
  /** Lines that held invalid UTF-8. */
  invalid_utf8: number;
  /** Bytes dropped after cuts. */
  dropped_bytes: number;
  /** Times the port opened again after closing or failing. */
  reopens: number;
  /** Attempts to open it that failed. */
  failed_opens: number;
  /** Why it last closed or failed to open, or null. */
  last_error: string | null;
  /** While closed: when the next attempt to open it is due (ISO 8601), else null. */
  next_retry_at: string | null;
  /** Lines the input queue refused at first: each waited, with the port unread, until it was taken. */
  queue_waits: number;
}

/** The reopen backoff: the first wait, the longest, and how long a port must stay open for the wait to start over. */
export const SERIAL_BACKOFF = { initialMs: 500, maxMs: 30_000, stableMs: 5_000 } as const;

/** Outputs that may wait for closed ports (`devices.serial`). */
export const SERIAL_HOLD_LIMIT = 100;

/** Longest text `serial_write` takes, in characters. */
export const SERIAL_WRITE_MAX_CHARS = 4_096;

/** Longest `start()` waits for the first attempt to open each port; the attempt goes on after that. */
export const START_WAIT_MS = 3_000;
/** Longest `stop()` waits for a port to close. */
const STOP_MS = 8_000;
/** The input queue being full is logged at most this often per port. */
const QUEUE_FULL_LOG_MS = 60_000;

interface Port {
  readonly name: string;
  readonly settings: SerialPortSettings;
  readonly channel: string;
  readonly splitter: LineSplitter;
  readonly marker: string;
  state: SerialPortStatus["state"];
  link: SerialLink | undefined;
  /** Writes to a port go out one after another. */
  writing: Promise<unknown>;
  everOpened: boolean;
  openedAt: number | null;
  lastLineAt: number | null;
  lines: number;
  reopens: number;
  failedOpens: number;
  lastError: string | null;
  nextRetryAt: number | null;
  /** Lines the input queue refused at first (each waited, unread, until it was taken). */
  queueWaits: number;
  /** When the queue being full was last logged (monotonic ms). */
  queueFullLoggedAt: number | null;
  run: Promise<void> | undefined;
}

/** A write to a port that is not open. */
class PortClosed extends Error {}

const encoder = new TextEncoder();

/** The `serial` device: every `devices.serial` port. */
export class SerialDevice implements Device {
  readonly name = "serial";
  readonly type = "serial";
  readonly description: string;
  readonly hold = { limit: SERIAL_HOLD_LIMIT, setting: "devices.serial" };
  readonly #options: SerialDeviceOptions;
  readonly #ports = new Map<string, Port>();
  readonly #open: OpenPort;
  readonly #random: () => number;
  readonly #tools: readonly DeviceTool[];
  #context: DeviceContext | undefined;
  #abort = new AbortController();
  #running = false;

  /**
   * @example
   * ```ts
   * import { getLogger } from "@logtape/logtape";
   * import { systemClock } from "../../clock.ts";
   *
   * const serial = new SerialDevice({
   *   ports: {
   *     sensor: {
   *       path: "/dev/ttyUSB0",
   *       baud: 115_200,
   *       turns: false,
   *       trust: "household",
   *       delimiter: "\n",
   *       maxLineBytes: 4_096,
   *     },
   *   },
   *   clock: systemClock,
   *   logger: getLogger(["homed", "serial"]),
   * });
   * serial.tools().map((tool) => tool.name); // ["serial_write"]
   * ```
   */
  constructor(options: SerialDeviceOptions) {
    this.#options = options;
    this.#open = options.openPort ?? openTty;
    this.#random = options.random ?? Math.random;
    for (const [name, settings] of Object.entries(options.ports)) {
      if (!TTY_SPEEDS.includes(settings.baud)) {
        throw new TypeError(
          `devices.serial.${name}.baud: ${settings.baud} is not a speed a tty can be set to; use one of ` +
            TTY_SPEEDS.join(", "),
        );
      }
      this.#ports.set(name, {
        name,
        settings,
        channel: `serial:${name}`,
        splitter: new LineSplitter({ delimiter: settings.delimiter, maxLineBytes: settings.maxLineBytes }),
        marker: ` […cut: line over devices.serial.${name}.max_line_bytes]`,
        state: "closed",
        link: undefined,
        writing: Promise.resolve(),
        everOpened: false,
        openedAt: null,
        lastLineAt: null,
        lines: 0,
        reopens: 0,
        failedOpens: 0,
        lastError: null,
        nextRetryAt: null,
        queueWaits: 0,
        queueFullLoggedAt: null,
        run: undefined,
      });
    }
    const listed = [...this.#ports.values()].map((port) =>
      `${port.channel} (${port.settings.path}, ${port.settings.turns ? "a console: lines are messages" : "events"})`
    );
    this.description = `Serial ports: ${listed.join("; ") || "none configured"}`;
    this.#tools = this.#ports.size === 0 ? [] : [this.#writeTool()];
  }

  tools(): readonly DeviceTool[] {
    return this.#tools;
  }

  /** Opens every port; resolves once each has been tried once (a port that is not there is retried meanwhile). */
  async start(context: DeviceContext): Promise<void> {
    // Started already: the ports' loops run (a second start would open each port twice).
    if (this.#running) return;
    this.#running = true;
    this.#context = context;
    this.#abort = new AbortController();
    const signal = this.#abort.signal;
    const started: Promise<void>[] = [];
    // A port whose opening hangs (a driver that does not answer) must not hold up homed's start.
    for (const port of this.#ports.values()) {
      const dialling = dial({
        clock: this.#options.clock,
        waitMs: START_WAIT_MS,
        loop: (tried) => this.#run(port, tried, signal),
        onError: (error) => {
          this.#options.logger.error("Serial port {name} stopped working: {error}", { name: port.name, error });
        },
      });
      port.run = dialling.run;
      started.push(dialling.started);
    }
    await Promise.all(started);
  }

  /** Closes every port; never waits longer than a few seconds. */
  async stop(): Promise<void> {
    this.#running = false;
    this.#abort.abort(new Error("The serial device stopped"));
    const runs: Promise<void>[] = [];
    for (const port of this.#ports.values()) {
      void port.link?.close();
      if (port.run) runs.push(port.run);
    }
    const limit = deadline(this.#options.clock, STOP_MS);
    try {
      if ((await limit.race(Promise.allSettled(runs))).late) {
        this.#options.logger.warning("Serial ports did not close within {seconds} s", { seconds: STOP_MS / 1_000 });
      }
    } finally {
      limit.cancel();
      this.#context = undefined;
    }
  }

  outputCapabilities(): number {
    return Capability.Text;
  }

  /** Whether the port `event` is for is open; outputs for a closed one wait in the IO queue until it opens again. */
  canSend(event: OutputEvent): boolean {
    const port = this.#portOf(event.target);
    // An unknown port is refused by send(), at once, rather than held for ever.
    return port === undefined || port.state === "open";
  }

  /** Writes a message (or a turn's error) to its port, followed by the port's delimiter. */
  async send(event: OutputEvent): Promise<void> {
    const port = this.#portOf(event.target);
    if (!port) throw new TypeError(this.#unknownPort(event.target));
    if (event.type !== "message" && event.type !== "error") {
      throw new TypeError(`${port.channel} takes text (message or error outputs), not ${event.type}`);
    }
    const text = typeof event.payload.text === "string" ? event.payload.text : "";
    try {
      await this.#write(port, text);
    } catch (error) {
      // Back to the head of the queue: it goes again once the port is open.
      if (error instanceof PortClosed) throw new SendInterrupted(error.message);
      throw error;
    }
  }

  /** Every port's state and counters, by name. */
  status(): Record<string, unknown> {
    const iso = (time: number | null) => (time === null ? null : new Date(time).toISOString());
    const ports: Record<string, SerialPortStatus> = {};
    for (const port of this.#ports.values()) {
      ports[port.name] = {
        path: port.settings.path,
        state: port.state,
        opened_at: iso(port.openedAt),
        last_line_at: iso(port.lastLineAt),
        lines: port.lines,
        cut_lines: port.splitter.counts.cut,
        invalid_utf8: port.splitter.counts.invalid,
        dropped_bytes: port.splitter.counts.dropped,
        reopens: port.reopens,
        failed_opens: port.failedOpens,
        last_error: port.lastError,
        next_retry_at: iso(port.nextRetryAt),
        queue_waits: port.queueWaits,
      };
    }
    return { ports, queued_outputs: this.#context?.waiting() ?? 0 };
  }

  #writeTool(): DeviceTool {
    const names = [...this.#ports.keys()];
    const ports = [...this.#ports.values()].map((port) => `${port.name} (${port.settings.path})`).join(", ");
    return {
      name: "serial_write",
      effect: "act",
      allow: "household",
      description: `Write one line of text to a serial port now (a microcontroller, a console); the port's line ` +
        `delimiter is added. Ports: ${ports}. Fails when the port is closed (unplugged).`,
      parameters: {
        type: "object",
        properties: {
          device: { type: "string", enum: names, description: "The port's name" },
          text: { type: "string", maxLength: SERIAL_WRITE_MAX_CHARS, description: "What to write" },
        },
        required: ["device", "text"],
        additionalProperties: false,
      },
      timeoutMs: 10_000,
      execute: async (args) => {
        const name = String(args.device);
        const port = this.#ports.get(name);
        if (!port) throw new Error(this.#unknownPort(`serial:${name}`));
        const text = String(args.text);
        if (text.length > SERIAL_WRITE_MAX_CHARS) {
          throw new Error(`text: at most ${SERIAL_WRITE_MAX_CHARS} characters, got ${text.length}`);
        }
        const bytes = await this.#write(port, text);
        return `Wrote ${bytes} bytes to ${port.channel} (${port.settings.path})`;
      },
    };
  }

  /** Writes `text` and the delimiter after the writes before it; rejects with {@link PortClosed} when not open. */
  async #write(port: Port, text: string): Promise<number> {
    const link = port.link;
    if (!link || port.state !== "open") throw new PortClosed(this.#closedMessage(port));
    const bytes = encoder.encode(text + port.settings.delimiter);
    const mine = port.writing.then(() => link.write(bytes));
    port.writing = mine.catch(() => {});
    try {
      await mine;
    } catch (error) {
      // Closed at once, not when the reader notices: the IO queue must see it closed before it tries again.
      if (port.link === link) this.#markClosed(port, (error as Error).message);
      throw new PortClosed(`${(error as Error).message}; it will be opened again`);
    }
    return bytes.length;
  }

  #markClosed(port: Port, why: string): void {
    port.link = undefined;
    port.state = "closed";
    port.lastError = why;
  }

  /** Opens the port, reads it until it closes, and opens it again with backoff — until the device stops. */
  async #run(port: Port, tried: () => void, signal: AbortSignal): Promise<void> {
    const { clock, logger } = this.#options;
    const { path } = port.settings;
    const backoff = new Backoff(
      { minMs: SERIAL_BACKOFF.initialMs, maxMs: SERIAL_BACKOFF.maxMs, jitter: 0.25, capAfterJitter: true },
      this.#random,
    );
    let outage = false;
    while (!signal.aborted) {
      port.state = "opening";
      port.nextRetryAt = null;
      let link: SerialLink;
      try {
        link = await this.#open({ name: port.name, path, baud: port.settings.baud, clock, signal });
      } catch (error) {
        if (signal.aborted) break;
        port.state = "closed";
        port.failedOpens++;
        port.lastError = (error as Error).message;
        if (!outage) {
          outage = true;
          logger.warning("Serial port {name} ({path}) is not open: {error}; trying again with backoff", {
            name: port.name,
            path,
            error: port.lastError,
          });
        }
        tried();
        if (!(await this.#backoff(port, backoff.next(), signal))) break;
        continue;
      }
      if (signal.aborted) {
        await link.close();
        break;
      }
      if (port.everOpened) port.reopens++;
      logger.info(
        port.everOpened ? "Serial port {name} ({path}) is open again" : "Serial port {name} ({path}) is open",
        {
          name: port.name,
          path,
        },
      );
      port.everOpened = true;
      outage = false;
      port.link = link;
      port.writing = Promise.resolve();
      port.state = "open";
      port.openedAt = clock.now();
      const since = clock.monotonic();
      tried();
      // Outputs that waited for the port go now.
      this.#context?.readyAgain();
      const why = await this.#pump(port, link, signal);
      if (port.link === link) this.#markClosed(port, why);
      else port.state = "closed";
      port.splitter.reset();
      if (signal.aborted) break;
      port.lastError = why;
      outage = true;
      logger.warning("Serial port {name} ({path}) closed: {error}; opening it again with backoff", {
        name: port.name,
        path,
        error: why,
      });
      if (clock.monotonic() - since >= SERIAL_BACKOFF.stableMs) backoff.reset();
      if (!(await this.#backoff(port, backoff.next(), signal))) break;
    }
    port.state = "closed";
    port.nextRetryAt = null;
  }

  /** Reads `link` until it closes (or the device stops); returns why it closed. */
  async #pump(port: Port, link: SerialLink, signal: AbortSignal): Promise<string> {
    try {
      for (let bytes = await link.read(); bytes; bytes = await link.read()) {
        const lines = port.splitter.push(bytes);
        if (lines.length > 0 && !(await this.#deliver(port, lines, signal))) break;
      }
    } catch (error) {
      await link.close();
      return (error as Error).message;
    }
    await link.close();
    const limit = deadline(this.#options.clock, 2_000);
    try {
      const raced = await limit.race(link.closed());
      return raced.late ? "the port closed" : raced.value;
    } finally {
      limit.cancel();
    }
  }

  /** Hands `lines` in, oldest first; false when inputs are no longer taken (homed stops). */
  async #deliver(
    port: Port,
    lines: readonly SplitLine[],
    signal: AbortSignal,
  ): Promise<boolean> {
    const { clock, logger } = this.#options;
    lines: for (const line of lines) {
      const draft: InputDraft = {
        source: port.channel,
        sender: port.name,
        trust: port.settings.trust,
        type: port.settings.turns ? "message" : "serial.line",
        payload: { text: line.cut ? line.text + port.marker : line.text },
      };
      let refused = 0;
      for (;;) {
        const context = this.#context;
        if (!context || signal.aborted) return false;
        try {
          context.emit(draft);
          break;
        } catch (error) {
          if (error instanceof ShuttingDown) return false;
          if (!(error instanceof LaneFullError)) {
            logger.warning("Serial port {name} dropped a line the input queue refused: {error}", {
              name: port.name,
              error,
            });
            continue lines;
          }
          if (refused++ === 0) this.#noteQueueFull(port);
          // Not read meanwhile: the lines wait in the tty, and the far end is slowed down by its buffers. A reader
          // that takes inputs as they come frees the lane within a few microtasks; a slower one is polled by timer.
          try {
            await waitForRoom(refused, (ms) => clock.sleep(ms, signal));
          } catch {
            return false;
          }
        }
      }
      port.lines++;
      port.lastLineAt = clock.now();
    }
    return true;
  }

  #noteQueueFull(port: Port): void {
    port.queueWaits++;
    const now = this.#options.clock.monotonic();
    if (port.queueFullLoggedAt !== null && now - port.queueFullLoggedAt < QUEUE_FULL_LOG_MS) return;
    port.queueFullLoggedAt = now;
    this.#options.logger.info(
      "Serial port {name}: the input queue is full; the port is read again as lines are taken ({waits} waits so far)",
      { name: port.name, waits: port.queueWaits },
    );
  }

  /** Waits `wait` ms before the next attempt; false when the device stopped. */
  async #backoff(port: Port, wait: number, signal: AbortSignal): Promise<boolean> {
    const { clock } = this.#options;
    port.nextRetryAt = clock.now() + wait;
    try {
      await clock.sleep(wait, signal);
      return true;
    } catch {
      return false;
    } finally {
      port.nextRetryAt = null;
    }
  }

  #portOf(target: string): Port | undefined {
    return target.startsWith("serial:") ? this.#ports.get(target.slice("serial:".length)) : undefined;
  }

  #unknownPort(target: string): string {
    const names = [...this.#ports.keys()].map((name) => `serial:${name}`).join(", ") || "none";
    return `Serial channel ${
      JSON.stringify(target)
    } is not a port configured under devices.serial; configured: ${names}`;
  }

  #closedMessage(port: Port): string {
    const why = port.lastError ? ` (${port.lastError})` : "";
    return `Serial port ${port.name} (${port.settings.path}) is ${port.state}${why}; homed opens it again when it is back`;
  }
}
