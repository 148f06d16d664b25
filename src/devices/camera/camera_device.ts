/**
 * The camera, as one Device (`camera`) whose tool `camera_snapshot` runs the capture command (`ffmpeg` by default)
 * under a deadline, takes the one picture it prints on its standard output, and hands it to the vision model: the
 * description is the tool's result, and the picture is held in the media cache so the butler may send it
 * (`output_send` with `type: image` and the `media` id) to a channel that carries images. The camera is a household
 * matter: guests may not use it. The device has no channel of its own (it carries no output).
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import type { Clock } from "../../clock.ts";
import type { Device, DeviceContext } from "../../io/device.ts";
import type { OutputEvent } from "../../io/event.ts";
import type { Tool } from "../../tools/tool.ts";
import { runCommand } from "../../process/run_command.ts";

/** The `devices.camera` settings the device uses. */
export interface CameraSettings {
  command: readonly string[];
  timeoutMs: number;
  /** Most bytes one picture may have (`media.max_image_bytes`). */
  maxImageBytes: number;
}

/** What the camera's picture came to: the vision model's words, and where the picture is held. */
export interface Seen {
  text: string;
  media?: { id: string; mime: string };
}

/** Options of {@link CameraDevice}. */
export interface CameraDeviceOptions {
  settings: CameraSettings;
  /** Sees a picture: checks it is one, keeps it, describes it (homed's media service); never throws. */
  look(image: Uint8Array, signal?: AbortSignal): Promise<Seen>;
  clock: Clock;
  logger: Logger;
}

/** The `camera` device. */
export class CameraDevice implements Device {
  readonly name = "camera";
  readonly type = "camera";
  readonly description = "A camera: camera_snapshot takes a picture and says what it shows";
  #options: CameraDeviceOptions;
  #counts = { snapshots: 0, failures: 0 };
  #last: { at: string; error: string | null } | undefined;
  #tools: readonly Tool[];

  /**
   * @example
   * ```ts
   * import { getLogger } from "@logtape/logtape";
   * import { systemClock } from "../../clock.ts";
   *
   * const camera = new CameraDevice({
   *   settings: { command: ["ffmpeg", "-f", "v4l2", "-i", "/dev/video0", "-frames:v", "1", "-f", "image2", "-"], timeoutMs: 10_000, maxImageBytes: 10_485_760 },
   *   look: () => Promise.resolve({ text: "the porch, empty" }),
   *   clock: systemClock,
   *   logger: getLogger(["homed", "camera"]),
   * });
   * ```
   */
  constructor(options: CameraDeviceOptions) {
    this.#options = options;
    this.#tools = [{
      name: "camera_snapshot",
      effect: "read",
      description:
        "Take a picture with the household's camera and get a description of what it shows. The result names the picture's media id: output_send with type image and that media sends it to a channel that shows images.",
      parameters: {
        type: "object",
        properties: { camera: { type: "string", enum: ["camera"], description: "The camera (there is one)" } },
        additionalProperties: false,
      },
      allow: "household",
      execute: (_args, context) => this.snapshot(context.signal),
    }];
  }

  tools(): readonly Tool[] {
    return this.#tools;
  }

  start(_context: DeviceContext): Promise<void> {
    return Promise.resolve();
  }

  stop(): Promise<void> {
    return Promise.resolve();
  }

  outputCapabilities(): number {
    return 0;
  }

  send(event: OutputEvent): Promise<void> {
    return Promise.reject(new TypeError(`The camera takes no output (got ${event.type} for ${event.target})`));
  }

  status(): Record<string, unknown> {
    return {
      command: this.#options.settings.command[0] ?? null,
      snapshots: this.#counts.snapshots,
      failures: this.#counts.failures,
      last_snapshot_at: this.#last?.at ?? null,
      last_error: this.#last?.error ?? null,
    };
  }

  /** `camera_snapshot`: the picture described; a failure of the command throws (the tool result says why). */
  async snapshot(signal?: AbortSignal): Promise<string> {
    const { settings, clock } = this.#options;
    const at = new Date(clock.now()).toISOString();
    try {
      const { stdout } = await runCommand({
        argv: settings.command,
        timeoutMs: settings.timeoutMs,
        maxOutputBytes: settings.maxImageBytes,
        clock,
        setting: "devices.camera.command",
        ...(signal ? { signal } : {}),
      });
      if (stdout.length === 0) throw new Error("The camera command printed no picture (devices.camera.command)");
      const seen = await this.#options.look(stdout, signal);
      this.#counts.snapshots++;
      this.#last = { at, error: null };
      return seen.media
        ? `The camera shows: ${seen.text}\n(The picture is held as media ${seen.media.id}.)`
        : `The camera's picture: ${seen.text}`;
    } catch (error) {
      this.#counts.failures++;
      this.#last = { at, error: (error as Error).message };
      this.#options.logger.warning("Camera snapshot failed: {error}", { error: (error as Error).message });
      throw error;
    }
  }
}
