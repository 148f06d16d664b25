/**
 * The camera's kind (`devices.camera`): a command that writes one picture to its standard output, described by
 * `vision` (`camera_snapshot`).
 *
 * @module
 */

import type { Config } from "../../config/schema.ts";
import type { DeviceKind } from "../kind.ts";
import { checkCommandDevice } from "../program_check.ts";
import { CameraDevice } from "./camera_device.ts";

type CameraSection = NonNullable<Config["devices"]["camera"]>;

/** `devices.camera`. */
export const cameraKind: DeviceKind<CameraSection> = {
  key: "devices.camera",
  example:
    '{ command: ["ffmpeg", "-loglevel", "error", "-f", "v4l2", "-i", "/dev/video0", "-frames:v", "1", "-f", "image2", "-"] }',
  section: (config) => config.devices.camera ?? undefined,
  rights: (camera) => {
    // The /dev nodes its command names, else every video device.
    const named = camera.command.filter((arg) => /^\/dev\/\S+$/.test(arg));
    const nodes = named.length
      ? named.map((node) => ({ node, setting: "devices.camera.command", group: "video" }))
      : [{ node: "char-video4linux", group: "video" }];
    return { run: [camera.command[0]!], nodes };
  },
  doctor: async (camera, config) => [
    await checkCommandDevice({
      name: "camera",
      program: camera.command[0]!,
      server: config.vision,
      setting: "vision",
      why: "camera_snapshot describes its picture: it",
      hint: "install it (ffmpeg: apt install ffmpeg)",
    }),
  ],
  create: (camera, { clock, logger, media }, config) => ({
    devices: [
      new CameraDevice({
        settings: {
          command: camera.command,
          timeoutMs: camera.timeout,
          maxImageBytes: config.media.max_image_bytes,
        },
        look: (image, signal) => media.look(image, signal),
        clock,
        logger: logger("camera"),
      }),
    ],
  }),
};
