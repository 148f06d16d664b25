/**
 * The microphone's kind (`devices.microphone`): a command that streams raw audio, cut into utterances by voice
 * activity and transcribed by `speech.stt`; what it hears is answered on the speaker when there is one.
 *
 * @module
 */

import type { Config } from "../../config/schema.ts";
import type { DeviceKind } from "../kind.ts";
import { checkCommandDevice } from "../program_check.ts";
import { MicrophoneDevice } from "./microphone_device.ts";

type MicrophoneSection = NonNullable<Config["devices"]["microphone"]>;

/** `devices.microphone`. */
export const microphoneKind: DeviceKind<MicrophoneSection> = {
  key: "devices.microphone",
  example:
    '{ command: ["arecord", "-q", "-f", "S16_LE", "-r", "16000", "-c", "1", "-t", "raw"], wake_words: ["管家"] }',
  section: (config) => config.devices.microphone ?? undefined,
  rights: (mic) => ({ run: [mic.command[0]!], nodes: [{ node: "char-alsa", group: "audio" }] }),
  doctor: async (mic, config) => [
    await checkCommandDevice({
      name: "microphone",
      program: mic.command[0]!,
      server: config.speech.stt,
      setting: "speech.stt",
      why: "the microphone's speech is transcribed: it",
      hint: "install it (arecord: apt install alsa-utils)",
    }),
  ],
  // What the microphone hears is answered on the speaker.
  routes: (_mic, config) => config.devices.speaker ? { mic: "speaker" } : {},
  create: (mic, { clock, random, logger, media }) => ({
    devices: [
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
    ],
  }),
};
