/**
 * The speaker (`devices.speaker`, channel `speaker`): replies spoken in the room. A text output (`message`, or a
 * turn's `error`) goes through the injected text-to-speech function; an `audio` output is media homed already holds
 * (a spoken reply, a tool's sound). Either way the WAV is played by the playback program (`aplay` by default, which
 * reads it on standard input) under `devices.speaker.timeout`, so a hung sound card never holds the outbox.
 *
 * It is the default route of the microphone's `mic`. One output at a time: the IO layer's outbox sends them in order,
 * but gives one up after `io.send_timeout` (30 s) and sends the next, while a long reply may still be playing under
 * the speaker's own, longer timeout — so the speaker also waits for the sound before it, and two never overlap.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import type { Clock } from "../../clock.ts";
import type { Device, DeviceContext, DeviceTool } from "../../io/device.ts";
import { Capability, type OutputEvent } from "../../io/event.ts";
import { runCommand } from "../../process/run_command.ts";

/** The `devices.speaker` settings. */
export interface SpeakerSettings {
  /** The playback program and its arguments: it plays a WAV file given on standard input. */
  command: string[];
  /** Longest one playback may take, in milliseconds; the program is killed then. */
  timeoutMs: number;
}

/** Options of {@link SpeakerDevice}. */
export interface SpeakerOptions {
  settings: SpeakerSettings;
  /** Text to speech: the words in, a WAV file out. */
  speak: (text: string) => Promise<Uint8Array>;
  /** Media homed holds, by its id; undefined when it is not held (any more). */
  read: (mediaId: string) => Promise<Uint8Array | undefined>;
  clock: Clock;
  logger: Logger;
}

const SETTING = "devices.speaker.command";
/** What a player prints is only kept for a failure's message; more than this is not a player. */
const MAX_OUTPUT_BYTES = 65_536;

/** The `speaker` device. */
export class SpeakerDevice implements Device {
  readonly name = "speaker";
  readonly type = "speaker";
  readonly description = "The speaker: replies spoken aloud in the room (text through text to speech, or audio)";
  readonly #options: SpeakerOptions;
  #played = 0;
  #failures = 0;
  #lastPlayedAt: number | null = null;
  #lastError: string | null = null;
  /** The playback before the next one (settled, never rejecting). */
  #previous: Promise<void> = Promise.resolve();
  /** Aborted by stop: the sound playing is cut off. */
  #stopping = new AbortController();

  /**
   * @example
   * ```ts
   * import { getLogger } from "@logtape/logtape";
   * import { systemClock } from "../../clock.ts";
   * import { encodeWav } from "../../audio/wav.ts";
   *
   * const speaker = new SpeakerDevice({
   *   settings: { command: ["aplay", "-q"], timeoutMs: 120_000 },
   *   speak: () => Promise.resolve(encodeWav(new Uint8Array(32_000), 16_000)),
   *   read: () => Promise.resolve(undefined),
   *   clock: systemClock,
   *   logger: getLogger(["homed", "speaker"]),
   * });
   * await speaker.send({ target: "speaker", type: "message", payload: { text: "灯已打开" } });
   * ```
   */
  constructor(options: SpeakerOptions) {
    this.#options = options;
  }

  tools(): readonly DeviceTool[] {
    return [];
  }

  start(_context: DeviceContext): Promise<void> {
    if (this.#stopping.signal.aborted) this.#stopping = new AbortController();
    return Promise.resolve();
  }

  /** Cuts off the sound playing (its player is killed) and waits for it to be gone. */
  async stop(): Promise<void> {
    this.#stopping.abort(new Error("The speaker was stopped while playing"));
    await this.#previous;
  }

  outputCapabilities(): number {
    return Capability.Text | Capability.Audio;
  }

  /**
   * Speaks a `message` or `error`, plays an `audio` output's media; resolves once it has been played. Rejects with
   * a `TypeError` for another output type or for media homed does not hold (naming the id), with a `CommandError`
   * when the player is missing, fails or does not finish within `timeoutMs`, and with what `speak` threw.
   */
  send(event: OutputEvent): Promise<void> {
    const sending = this.#previous.then(() => this.#send(event));
    this.#previous = sending.catch(() => {});
    return sending;
  }

  async #send(event: OutputEvent): Promise<void> {
    const signal = this.#stopping.signal;
    try {
      if (signal.aborted) throw signal.reason;
      await this.#play(await this.#sound(event), signal);
      this.#played++;
      this.#lastPlayedAt = this.#options.clock.now();
    } catch (error) {
      this.#failures++;
      this.#lastError = error instanceof Error ? error.message : String(error);
      this.#options.logger.warning("The speaker could not play a {type} output: {error}", {
        type: event.type,
        error: this.#lastError,
      });
      throw error;
    }
  }

  status(): Record<string, unknown> {
    return {
      played: this.#played,
      failures: this.#failures,
      last_played_at: this.#lastPlayedAt === null ? null : new Date(this.#lastPlayedAt).toISOString(),
      last_error: this.#lastError,
    };
  }

  /** The WAV an output sounds as. */
  async #sound(event: OutputEvent): Promise<Uint8Array> {
    switch (event.type) {
      case "message":
      case "error": {
        const text = typeof event.payload.text === "string" ? event.payload.text.trim() : "";
        if (!text) throw new TypeError(`A ${event.type} output to the speaker needs text; this one has none`);
        return await this.#options.speak(text);
      }
      case "audio": {
        const id = event.payload.media;
        if (typeof id !== "string" || !id) {
          throw new TypeError("An audio output to the speaker needs payload.media, the id of media homed holds");
        }
        const bytes = await this.#options.read(id);
        if (!bytes) throw new TypeError(`The media ${JSON.stringify(id)} is not held by homed (any more)`);
        return bytes;
      }
      default:
        throw new TypeError(`The speaker plays text and audio, not ${event.type} output (to ${event.target})`);
    }
  }

  async #play(wav: Uint8Array, signal: AbortSignal): Promise<void> {
    const { settings, clock } = this.#options;
    await runCommand({
      argv: settings.command,
      stdin: wav,
      timeoutMs: settings.timeoutMs,
      maxOutputBytes: MAX_OUTPUT_BYTES,
      clock,
      setting: SETTING,
      signal,
    });
  }
}
