/**
 * The daemon's local-devices step: the devices of `devices.*` (serial ports, GPIO lines, microphone, speaker,
 * camera), each made only when configured, with what they need of homed's media service injected (speech-to-text for
 * the microphone, text-to-speech and held media for the speaker, seeing for the camera). A device whose server is not
 * set up is still made — it then says so in its status and log — so `homed doctor` and `/api/status` show it.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import type { Clock } from "../clock.ts";
import type { Config } from "../config/schema.ts";
import type { Device } from "../io/device.ts";
import { CameraDevice, type Seen } from "./camera/camera_device.ts";
import { GpioDevice } from "./gpio/gpio_device.ts";
import { MicrophoneDevice } from "./microphone/microphone_device.ts";
import { SerialDevice } from "./serial/serial_device.ts";
import { SpeakerDevice } from "./speaker/speaker_device.ts";

/** What the local devices need of homed's media (its `MediaService`, injected so devices do not import it). */
export interface LocalMedia {
  /** An utterance (WAV) as text. */
  hear(wav: Uint8Array, signal?: AbortSignal): Promise<string>;
  /** Words as speech (WAV). */
  speak(text: string): Promise<Uint8Array>;
  /** Media homed holds, by id. */
  read(id: string): Promise<Uint8Array | undefined>;
  /** A picture homed took, described. */
  look(image: Uint8Array, signal?: AbortSignal): Promise<Seen>;
}

/** Options of {@link localDevices}. */
export interface LocalDevicesOptions {
  config: Pick<Config, "devices" | "media">;
  media: LocalMedia;
  clock: Clock;
  random: () => number;
  /** Makes each device's logger (`serial`, `gpio`, `mic`, `speaker`, `camera`). */
  logger: (name: string) => Logger;
}

/**
 * The configured local devices (none when `devices` is empty).
 *
 * @example
 * ```ts
 * declare const options: LocalDevicesOptions;
 * const devices = localDevices(options);
 * devices.map((device) => device.name); // e.g. ["serial", "gpio", "mic", "speaker", "camera"]
 * ```
 */
export function localDevices(options: LocalDevicesOptions): Device[] {
  const { config: { devices, media: limits }, media, clock, random, logger } = options;
  const made: Device[] = [];
  const ports = Object.entries(devices.serial);
  if (ports.length) {
    made.push(
      new SerialDevice({
        ports: Object.fromEntries(ports.map(([name, port]) => [name, {
          path: port.path,
          baud: port.baud,
          turns: port.turns,
          trust: port.trust,
          delimiter: port.delimiter,
          maxLineBytes: port.max_line_bytes,
        }])),
        clock,
        random,
        logger: logger("serial"),
      }),
    );
  }
  const lines = Object.entries(devices.gpio);
  if (lines.length) {
    made.push(
      new GpioDevice({
        lines: Object.fromEntries(lines.map(([name, line]) => [name, {
          chip: line.chip,
          line: line.line,
          direction: line.direction,
          edge: line.edge,
          turns: line.turns,
          trust: line.trust,
          debounceMs: line.debounce,
          activeLow: line.active_low,
        }])),
        clock,
        random,
        logger: logger("gpio"),
      }),
    );
  }
  const mic = devices.microphone;
  if (mic) {
    made.push(
      new MicrophoneDevice({
        settings: {
          command: [...mic.command],
          sampleRate: mic.sample_rate,
          trust: mic.trust,
          wakeWords: [...mic.wake_words],
          threshold: mic.threshold,
          minSpeechMs: mic.min_speech,
          endSilenceMs: mic.end_silence,
          maxUtteranceMs: mic.max_utterance,
        },
        hear: (wav, signal) => media.hear(wav, signal),
        clock,
        random,
        logger: logger("mic"),
      }),
    );
  }
  if (devices.speaker) {
    made.push(
      new SpeakerDevice({
        settings: { command: [...devices.speaker.command], timeoutMs: devices.speaker.timeout },
        speak: (text) => media.speak(text),
        read: (id) => media.read(id),
        clock,
        logger: logger("speaker"),
      }),
    );
  }
  if (devices.camera) {
    made.push(
      new CameraDevice({
        settings: {
          command: devices.camera.command,
          timeoutMs: devices.camera.timeout,
          maxImageBytes: limits.max_image_bytes,
        },
        look: (image, signal) => media.look(image, signal),
        clock,
        logger: logger("camera"),
      }),
    );
  }
  return made;
}

/**
 * The routes the local devices bring, under the configured ones (which win): what the microphone hears is answered
 * on the speaker.
 *
 * @example
 * ```ts
 * import type { Config } from "../config/schema.ts";
 *
 * declare const config: Pick<Config, "devices" | "io">;
 * localRoutes(config); // { mic: "speaker", ...config.io.routes } with both configured
 * ```
 */
export function localRoutes(config: Pick<Config, "devices" | "io">): Record<string, string> {
  const { microphone, speaker } = config.devices;
  return { ...(microphone && speaker ? { mic: "speaker" } : {}), ...config.io.routes };
}
