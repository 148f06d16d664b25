/**
 * The daemon's media step: the media cache in `data_dir/media`, the vision, speech-to-text and text-to-speech
 * clients of the `vision` and `speech` sections (each only when configured), and the `media` service over them.
 *
 * @module
 */

import type { StoreHealth } from "../fs/store_health.ts";
import { join } from "node:path";
import type { Logger } from "@logtape/logtape";
import type { Clock } from "../clock.ts";
import type { Config } from "../config/schema.ts";
import { connectHost } from "../config/listen_addr.ts";
import type { InputRef } from "../io/event.ts";
import type { MessageAttachment } from "../io/message_payload.ts";
import type { ServiceHost } from "../service/service_host.ts";
import { resolveWithDns } from "./address_policy.ts";
import { MediaCache } from "./media_cache.ts";
import { MediaService } from "./media_service.ts";
import { SttClient } from "./stt_client.ts";
import { TtsClient } from "./tts_client.ts";
import { VisionClient } from "./vision_client.ts";

/** Options of {@link startMedia}. */
export interface MediaSetupOptions {
  config: Pick<Config, "vision" | "speech" | "media" | "llm"> & { daemon: Pick<Config["daemon"], "listen_addr"> };
  dataDir: string;
  clock: Clock;
  services: ServiceHost;
  /** The `media` logger. */
  logger: Logger;
  /** Asks an input's channel where an attachment without a URL is (the IO manager's `locate`). */
  locate?: (input: InputRef, attachment: MessageAttachment) => Promise<string | Uint8Array | undefined>;
  /** Injected for tests. */
  fetch?: typeof fetch;
  /** Where a write that fails for the disk is recorded (`/api/status` `storage.degraded`). */
  health?: StoreHealth;
}

/**
 * Opens the cache and starts the `media` service.
 *
 * @example
 * ```ts
 * declare const options: MediaSetupOptions;
 * const media = await startMedia(options);
 * media.status(); // { vision: { configured: false, … }, … }
 * ```
 */
export async function startMedia(options: MediaSetupOptions): Promise<MediaService> {
  const { config, clock } = options;
  const { vision, speech, media, llm } = config;
  const cache = await MediaCache.open({
    dir: join(options.dataDir, "media"),
    maxBytes: media.cache_bytes,
    clock,
    health: options.health,
  });
  // Only the chat-completions provider sends image parts; a Lua adapter gets the description instead.
  const direct = vision?.direct === true && llm.provider === "openai";
  if (vision?.direct && !direct) {
    options.logger.warning("vision.direct needs llm.provider: openai; images are described by the vision model");
  }
  const listen = config.daemon.listen_addr;
  const service = new MediaService({
    settings: {
      maxImageBytes: media.max_image_bytes,
      maxAudioBytes: media.max_audio_bytes,
      guestMaxBytes: media.guest_max_bytes,
      fetchTimeoutMs: media.fetch_timeout,
      direct,
      replyWithVoice: speech.reply_with_voice,
    },
    cache,
    clock,
    logger: options.logger,
    policy: {
      allowHosts: media.allow_hosts,
      ownListen: { host: connectHost(listen), port: listen.port },
      resolve: resolveWithDns,
    },
    ...(vision
      ? {
        vision: new VisionClient({
          baseUrl: vision.base_url,
          model: vision.model,
          apiKey: vision.api_key,
          timeoutMs: vision.timeout,
          maxTokens: vision.max_tokens,
          clock,
        }),
      }
      : {}),
    ...(speech.stt
      ? {
        stt: new SttClient({
          baseUrl: speech.stt.base_url,
          model: speech.stt.model,
          apiKey: speech.stt.api_key,
          language: speech.stt.language,
          timeoutMs: speech.stt.timeout,
          clock,
        }),
      }
      : {}),
    ...(speech.tts
      ? {
        tts: new TtsClient({
          baseUrl: speech.tts.base_url,
          model: speech.tts.model,
          voice: speech.tts.voice,
          apiKey: speech.tts.api_key,
          timeoutMs: speech.tts.timeout,
          maxReplyBytes: media.max_audio_bytes,
          clock,
        }),
      }
      : {}),
    ...(options.locate ? { locate: options.locate } : {}),
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  await options.services.start(service);
  return service;
}
