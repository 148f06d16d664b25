/**
 * The speaker's kind (`devices.speaker`): a command that plays WAV from its standard input, saying replies aloud
 * through `speech.tts`.
 *
 * @module
 */

import type { Config } from "../../config/schema.ts";
import type { DeviceKind } from "../kind.ts";
import { checkCommandDevice } from "../program_check.ts";
import { SpeakerDevice } from "./speaker_device.ts";

type SpeakerSection = NonNullable<Config["devices"]["speaker"]>;

/** `devices.speaker`. */
export const speakerKind: DeviceKind<SpeakerSection> = {
  key: "devices.speaker",
  example: '{ command: ["aplay", "-q"], timeout: 2m }',
  section: (config) => config.devices.speaker ?? undefined,
  rights: (speaker) => ({ run: [speaker.command[0]!], nodes: [{ node: "char-alsa", group: "audio" }] }),
  doctor: async (speaker, config) => [
    await checkCommandDevice({
      name: "speaker",
      program: speaker.command[0]!,
      server: config.speech.tts,
      setting: "speech.tts",
      why: "the speaker says replies aloud: it",
      hint: "install it (aplay: apt install alsa-utils)",
    }),
  ],
  create: (speaker, { clock, logger, media }) => ({
    devices: [
      new SpeakerDevice({
        settings: { command: [...speaker.command], timeoutMs: speaker.timeout },
        speak: (text) => media.speak(text),
        read: (id) => media.read(id),
        clock,
        logger: logger("speaker"),
      }),
    ],
  }),
};
