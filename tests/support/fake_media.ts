/**
 * Strict fakes of the three model servers homed's media clients speak to, on loopback: a vision model
 * (OpenAI-compatible chat completions with image parts), a speech-to-text server (`/audio/transcriptions`) and a
 * text-to-speech server (`/audio/speech`).
 *
 * Real HTTP, JSON and multipart. Each test scripts the answers; every request is checked against the wire contract
 * (the route, the model, the key, the shape of the body — down to whether an image part's bytes really are an image of
 * the type it declares, or an audio file's name has an extension a server picks a decoder by). A violation is recorded
 * and answered with HTTP 400, the scripted answer staying queued, and `close()` fails the test if any was recorded or
 * a scripted answer was never asked for — as `FakeLlm` (`fake_llm.ts`) does for the chat API.
 *
 * @module
 */

import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { waitFor } from "./wait.ts";

/** What every request to a fake must satisfy. */
export interface FakeMediaExpect {
  /** The `model` every request must name; any non-empty one when absent. */
  model?: string;
  /**
   * The key the client must send as `Authorization: Bearer <key>`. When absent the client must send no
   * `Authorization` header at all — so a test can show the header goes only with a configured key.
   */
  apiKey?: string;
  /** Path of the API root, `/v1` unless given (`baseUrl` ends with it). */
  pathPrefix?: string;
}

/** Answers every fake knows besides its own reply. */
export type CommonStep =
  /** An error answer: `body` is sent as JSON, or as plain text when a string; an OpenAI error body when absent. */
  | { status: number; body?: unknown; headers?: Record<string, string>; delayMs?: number }
  /** Never answers (until the client gives up or the fake closes): for deadline tests. */
  | { hang: true }
  /** Any answer a test builds itself (a body that is not JSON, an endless stream…). */
  | { raw: () => Response | Promise<Response>; delayMs?: number };

/** The checks' outcome for one request: problems, or what to record. */
type Checked<Recorded> = { problems: string[]; recorded?: Recorded };

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function openAiError(message: string, status: number, headers: Record<string, string> = {}): Response {
  return Response.json({ error: { message, type: "invalid_request_error", code: null } }, { status, headers });
}

/** The scripted route, checks and answers shared by the three fakes; each adds its own body checks and reply. */
abstract class FakeModelServer<Reply extends object, Recorded> {
  /** The requests that passed every check, in order. */
  readonly requests: Recorded[] = [];
  /** What broke the contract, each naming its request (`request #2: model is …`). */
  readonly violations: string[] = [];
  protected readonly expect: FakeMediaExpect;
  #steps: Array<CommonStep | Reply> = [];
  #server: Deno.HttpServer<Deno.NetAddr>;
  #name: string;
  #route: string;
  #count = 0;
  #closed = false;
  #release = () => {};
  #released = new Promise<void>((resolve) => (this.#release = resolve));

  protected constructor(name: string, route: string, expect: FakeMediaExpect) {
    this.#name = name;
    this.#route = route;
    this.expect = expect;
    this.#server = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen: () => {} },
      (request) => this.#handle(request),
    );
  }

  /** `http://127.0.0.1:<port>/v1` (or the given prefix): the value for the client's `base_url`. */
  get baseUrl(): string {
    return `${this.origin}${this.expect.pathPrefix ?? "/v1"}`;
  }

  /** `http://127.0.0.1:<port>`, for requests on other paths. */
  get origin(): string {
    return `http://127.0.0.1:${this.#server.addr.port}`;
  }

  /** `127.0.0.1:<port>`, as the clients' error messages name the server. */
  get host(): string {
    return `127.0.0.1:${this.#server.addr.port}`;
  }

  /** Adds answers to the script, in order. */
  enqueue(...steps: Array<CommonStep | Reply>): void {
    this.#steps.push(...steps);
  }

  /** Answers still unused. */
  get remaining(): number {
    return this.#steps.length;
  }

  /** Resolves once `count` requests were accepted; fails after `limitMs` saying how many were. */
  received(count: number, limitMs = 10_000): Promise<void> {
    return waitFor(
      () => this.requests.length >= count,
      `${count} request(s) to the fake ${this.#name} (got ${this.requests.length})`,
      { limitMs, everyMs: 5 },
    );
  }

  /** Checks one request's body (the route and key are already checked). */
  protected abstract check(request: Request): Promise<Checked<Recorded>>;

  /** The fake's own answer to an accepted request. */
  protected abstract answer(step: Reply, recorded: Recorded): Response;

  async #handle(request: Request): Promise<Response> {
    const number = ++this.#count;
    const url = new URL(request.url);
    const route = `${this.expect.pathPrefix ?? "/v1"}${this.#route}`;
    if (request.method !== "POST" || url.pathname !== route) {
      await request.body?.cancel();
      return this.#refuse(number, [`${request.method} ${url.pathname} is not POST ${route}`]);
    }
    const authorization = request.headers.get("authorization");
    if (this.expect.apiKey !== undefined && authorization !== `Bearer ${this.expect.apiKey}`) {
      await request.body?.cancel();
      this.violations.push(`request #${number}: sent ${authorization === null ? "no key" : "a wrong key"}`);
      return openAiError("Incorrect API key provided", 401);
    }
    const problems: string[] = [];
    if (this.expect.apiKey === undefined && authorization !== null) {
      problems.push("sent an Authorization header though no key is configured");
    }
    let checked: Checked<Recorded>;
    try {
      checked = await this.check(request);
    } catch (error) {
      checked = { problems: [`the request could not be read (${(error as Error).message})`] };
    }
    problems.push(...checked.problems);
    if (this.#steps.length === 0) problems.push("unexpected request: the script is empty");
    if (problems.length || !checked.recorded) return this.#refuse(number, problems);
    this.requests.push(checked.recorded);
    const step = this.#steps.shift()!;
    if ("hang" in step) {
      // Not request.signal: in Deno 2 it also aborts on a successful answer, and warns. close() lets go of it.
      await this.#released;
      return openAiError("the fake was closed while the request hung", 503);
    }
    const delayMs = (step as { delayMs?: number }).delayMs;
    if (delayMs) await this.#delay(delayMs);
    if ("status" in step) {
      const { status, body, headers = {} } = step as Extract<CommonStep, { status: number }>;
      if (typeof body === "string") return new Response(body, { status, headers });
      return Response.json(body ?? { error: { message: `scripted HTTP ${status}`, type: "server_error" } }, {
        status,
        headers,
      });
    }
    if ("raw" in step) return await (step as Extract<CommonStep, { raw: unknown }>).raw();
    return this.answer(step as Reply, checked.recorded);
  }

  #refuse(number: number, problems: string[]): Response {
    this.violations.push(...problems.map((problem) => `request #${number}: ${problem}`));
    return openAiError(`fake ${this.#name}: ${problems.join("; ")}`, 400);
  }

  #delay(ms: number): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    return Promise.race([
      new Promise<void>((resolve) => (timer = setTimeout(resolve, ms))),
      this.#released,
    ]).finally(() => clearTimeout(timer));
  }

  /**
   * Stops the server (a hung request is let go first) and fails when any request broke the contract or scripted
   * answers were never asked for. A second call does nothing.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#release();
    await this.#server.shutdown();
    const problems = [
      ...this.violations,
      ...(this.#steps.length ? [`${this.#steps.length} scripted answer(s) were never asked for`] : []),
    ];
    assert.deepEqual(
      problems,
      [],
      `the fake ${this.#name} saw requests that break the contract:\n${problems.join("\n")}`,
    );
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}

// --- Vision -----------------------------------------------------------------------------------------------------

/** What a {@link FakeVision} checks besides {@link FakeMediaExpect}. */
export interface FakeVisionExpect extends FakeMediaExpect {
  /** The `max_tokens` every request must ask for. */
  maxTokens?: number;
}

/** A scripted description; `null` answers `content: null` (an unusable answer). */
export type VisionReply = { description?: string | null; delayMs?: number };

/** One scripted answer of a {@link FakeVision}. */
export type VisionStep = CommonStep | VisionReply;

/** An image a vision request carried, decoded from its data URL. */
export interface ReceivedImage {
  mime: string;
  bytes: Uint8Array;
}

/** A request a {@link FakeVision} accepted. */
export interface VisionRequest {
  headers: Headers;
  body: Record<string, unknown>;
  /** The text part. */
  instruction: string;
  images: ReceivedImage[];
}

const IMAGE_TYPES: Record<string, { name: string; is: (bytes: Uint8Array) => boolean }> = {
  "image/png": { name: "PNG", is: (b) => startsWith(b, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]) },
  "image/jpeg": { name: "JPEG", is: (b) => startsWith(b, [0xff, 0xd8, 0xff]) },
  "image/gif": { name: "GIF", is: (b) => ascii(b, 0, "GIF87a") || ascii(b, 0, "GIF89a") },
  "image/webp": { name: "WEBP", is: (b) => ascii(b, 0, "RIFF") && ascii(b, 8, "WEBP") },
};

function startsWith(bytes: Uint8Array, prefix: number[]): boolean {
  return bytes.length >= prefix.length && prefix.every((byte, index) => bytes[index] === byte);
}

function ascii(bytes: Uint8Array, at: number, text: string): boolean {
  return startsWith(bytes.subarray(at), [...text].map((char) => char.charCodeAt(0)));
}

/** Strict base64 (the alphabet, whole quads, padding only at the end): Buffer alone would skip garbage silently. */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Checks one image part's data URL; the decoded image, or the problem. */
function checkImageUrl(url: unknown, label: string): ReceivedImage | string {
  if (typeof url !== "string") return `${label} has no url`;
  const match = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  if (!match) return `${label} is not a data:<mime>;base64, URL (${url.slice(0, 40)})`;
  const mime = match[1]!;
  const type = IMAGE_TYPES[mime];
  if (!type) return `${label} declares ${mime}, not an image type the model reads (${Object.keys(IMAGE_TYPES)})`;
  const data = match[2]!;
  if (data === "" || !BASE64.test(data)) return `${label} is not valid base64`;
  const bytes = new Uint8Array(Buffer.from(data, "base64"));
  if (!type.is(bytes)) return `${label} is declared ${mime} but its bytes are not a ${type.name} image`;
  return { mime, bytes };
}

/** A JSON request body as an object, with what is wrong with how it was sent; no body when it is not one. */
async function jsonBody(request: Request): Promise<{ problems: string[]; body?: Record<string, unknown> }> {
  const problems: string[] = [];
  const type = request.headers.get("content-type") ?? "";
  if (!type.startsWith("application/json")) problems.push(`content-type is ${type || "missing"}, not JSON`);
  let body: unknown;
  try {
    body = await request.json();
  } catch {
    return { problems: [...problems, "the body is not JSON"] };
  }
  if (!isRecord(body)) return { problems: [...problems, "the body is not a JSON object"] };
  return { problems, body };
}

/**
 * A fake OpenAI-compatible vision model: `POST /v1/chat/completions` with exactly one user message of one text part
 * and at least one `image_url` part whose `data:` URL holds a real image of the declared type.
 */
export class FakeVision extends FakeModelServer<VisionReply, VisionRequest> {
  #counter = 0;

  private constructor(expect: FakeVisionExpect) {
    super("vision model", "/chat/completions", expect);
  }

  /**
   * Starts a fake on a free loopback port.
   *
   * @example
   * ```ts
   * await using vision = FakeVision.start({ model: "qwen2.5vl" });
   * vision.enqueue({ description: "A cat on a sofa." });
   * // … a VisionClient with baseUrl: vision.baseUrl describes an image …
   * ```
   */
  static start(expect: FakeVisionExpect = {}): FakeVision {
    return new FakeVision(expect);
  }

  protected async check(request: Request): Promise<Checked<VisionRequest>> {
    const { problems, body } = await jsonBody(request);
    if (!body) return { problems };
    problems.push(...checkModel(body.model, this.expect.model));
    if (body.stream === true) problems.push("stream is true; the fake answers only whole completions");
    const maxTokens = (this.expect as FakeVisionExpect).maxTokens;
    if (maxTokens !== undefined && body.max_tokens !== maxTokens) {
      problems.push(`max_tokens is ${JSON.stringify(body.max_tokens)}, expected ${maxTokens}`);
    }
    const messages = body.messages;
    if (!Array.isArray(messages) || messages.length === 0) return { problems: [...problems, "messages is missing"] };
    const users = messages.filter((message) => isRecord(message) && message.role === "user");
    const others = messages.filter((message) => !isRecord(message) || message.role !== "system").length -
      users.length;
    if (users.length !== 1 || others > 0) {
      problems.push(
        `expected exactly one user message (and no other but system), got ${users.length} user of ${messages.length}`,
      );
    }
    const content = (users[0] as Record<string, unknown> | undefined)?.content;
    if (!Array.isArray(content)) return { problems: [...problems, "the user message's content is not an array"] };
    const texts: string[] = [];
    const images: ReceivedImage[] = [];
    content.forEach((part, index) => {
      const label = `content[${index}]`;
      if (!isRecord(part)) return problems.push(`${label} is not an object`);
      if (part.type === "text") {
        if (typeof part.text !== "string" || part.text.trim() === "") return problems.push(`${label} has no text`);
        return texts.push(part.text);
      }
      if (part.type === "image_url") {
        const imageUrl = isRecord(part.image_url) ? part.image_url : {};
        if (imageUrl.detail !== undefined && !["auto", "low", "high"].includes(String(imageUrl.detail))) {
          problems.push(`${label} has detail ${JSON.stringify(imageUrl.detail)}`);
        }
        const image = checkImageUrl(imageUrl.url, `image ${images.length + 1} (${label})`);
        return typeof image === "string" ? problems.push(image) : images.push(image);
      }
      return problems.push(`${label} has type ${JSON.stringify(part.type)}, not text or image_url`);
    });
    if (texts.length !== 1) problems.push(`expected one text part, got ${texts.length}`);
    if (images.length === 0 && !problems.some((problem) => problem.startsWith("image "))) {
      problems.push("no image_url part");
    }
    return { problems, recorded: { headers: request.headers, body, instruction: texts[0] ?? "", images } };
  }

  protected answer(step: VisionReply, recorded: VisionRequest): Response {
    return Response.json({
      id: `chatcmpl-fake-${++this.#counter}`,
      object: "chat.completion",
      created: 0,
      model: recorded.body.model,
      choices: [{
        index: 0,
        message: {
          role: "assistant",
          content: step.description === undefined ? "A fake description of the image." : step.description,
        },
        finish_reason: "stop",
      }],
      usage: { prompt_tokens: 100, completion_tokens: 10, total_tokens: 110 },
    });
  }
}

function checkModel(model: unknown, expected: string | undefined): string[] {
  if (typeof model !== "string" || model === "") return [`model is ${JSON.stringify(model)}, not a model name`];
  if (expected !== undefined && model !== expected) return [`model is ${JSON.stringify(model)}, expected ${expected}`];
  return [];
}

// --- Speech to text ---------------------------------------------------------------------------------------------

/** What a {@link FakeStt} checks besides {@link FakeMediaExpect}. */
export interface FakeSttExpect extends FakeMediaExpect {
  /** The `language` every request must send; `null`: it must send none. Anything when absent. */
  language?: string | null;
}

/** A scripted transcript (`""`: no speech heard). */
export type SttReply = { text?: string; delayMs?: number };

/** One scripted answer of a {@link FakeStt}. */
export type SttStep = CommonStep | SttReply;

/** A request a {@link FakeStt} accepted. */
export interface SttRequest {
  headers: Headers;
  /** The `file` part: its bytes, file name and declared type. */
  bytes: Uint8Array;
  filename: string;
  fileType: string;
  model: string;
  language: string | undefined;
  responseFormat: string | undefined;
}

/** The extensions OpenAI's endpoint takes (whisper.cpp and speaches pick the decoder by them too). */
const AUDIO_EXTENSIONS = ["flac", "m4a", "mp3", "mp4", "mpeg", "mpga", "oga", "ogg", "wav", "webm"];

/** Formats whose first bytes are easy to tell: a file named `.wav` must be RIFF/WAVE, and so on. */
const AUDIO_MAGIC: Record<string, (bytes: Uint8Array) => boolean> = {
  wav: (b) => ascii(b, 0, "RIFF") && ascii(b, 8, "WAVE"),
  ogg: (b) => ascii(b, 0, "OggS"),
  oga: (b) => ascii(b, 0, "OggS"),
  flac: (b) => ascii(b, 0, "fLaC"),
};

const STT_FIELDS = new Set([
  "file",
  "model",
  "language",
  "prompt",
  "response_format",
  "temperature",
  "timestamp_granularities[]",
  "stream",
  "chunking_strategy",
  "include[]",
]);

/**
 * A fake speech-to-text server: `POST /v1/audio/transcriptions`, a multipart form with a `file` part (non-empty,
 * named with an audio extension matching its bytes where the format is easy to tell) and `model`.
 */
export class FakeStt extends FakeModelServer<SttReply, SttRequest> {
  private constructor(expect: FakeSttExpect) {
    super("speech-to-text server", "/audio/transcriptions", expect);
  }

  /**
   * Starts a fake on a free loopback port.
   *
   * @example
   * ```ts
   * await using stt = FakeStt.start({ model: "whisper-1", language: "zh" });
   * stt.enqueue({ text: "把灯关了" });
   * // … an SttClient with baseUrl: stt.baseUrl transcribes a voice message …
   * ```
   */
  static start(expect: FakeSttExpect = {}): FakeStt {
    return new FakeStt(expect);
  }

  protected async check(request: Request): Promise<Checked<SttRequest>> {
    const problems: string[] = [];
    const type = request.headers.get("content-type") ?? "";
    if (!type.startsWith("multipart/form-data")) {
      await request.body?.cancel();
      return { problems: [`content-type is ${type || "missing"}, not multipart/form-data`] };
    }
    let form: FormData;
    try {
      form = await request.formData();
    } catch {
      return { problems: ["the body is not a multipart form"] };
    }
    const names = [...form.keys()];
    for (const name of new Set(names)) {
      if (!STT_FIELDS.has(name)) problems.push(`unknown field ${name}`);
      else if (!name.endsWith("[]") && form.getAll(name).length > 1) problems.push(`field ${name} is sent twice`);
    }
    const file = form.get("file");
    let bytes = new Uint8Array(0);
    let filename = "";
    let fileType = "";
    if (file === null) problems.push("the file part is missing");
    else if (typeof file === "string") problems.push("the file part is a plain field, not a file");
    else {
      bytes = new Uint8Array(await file.arrayBuffer());
      filename = file.name;
      fileType = file.type;
      const extension = /\.([A-Za-z0-9]+)$/.exec(filename)?.[1]?.toLowerCase();
      if (bytes.length === 0) problems.push("the file part is empty");
      if (extension === undefined || !AUDIO_EXTENSIONS.includes(extension)) {
        problems.push(`the file name ${JSON.stringify(filename)} has no audio extension (${AUDIO_EXTENSIONS})`);
      } else if (bytes.length && AUDIO_MAGIC[extension] && !AUDIO_MAGIC[extension](bytes)) {
        problems.push(`the file ${JSON.stringify(filename)} is not ${extension} audio`);
      }
    }
    const model = form.get("model");
    problems.push(...checkModel(typeof model === "string" ? model : undefined, this.expect.model));
    const format = form.get("response_format");
    if (format !== null && format !== "json") {
      problems.push(`response_format is ${JSON.stringify(format)}; the fake answers only json`);
    }
    const language = form.get("language");
    if (language !== null && (typeof language !== "string" || !/^[a-z]{2}$/.test(language))) {
      problems.push(`language ${JSON.stringify(language)} is not an ISO-639-1 code`);
    }
    const expected = (this.expect as FakeSttExpect).language;
    if (expected !== undefined && language !== expected) {
      problems.push(`language is ${JSON.stringify(language)}, expected ${JSON.stringify(expected)}`);
    }
    return {
      problems,
      recorded: {
        headers: request.headers,
        bytes,
        filename,
        fileType,
        model: typeof model === "string" ? model : "",
        language: typeof language === "string" ? language : undefined,
        responseFormat: typeof format === "string" ? format : undefined,
      },
    };
  }

  protected answer(step: SttReply): Response {
    return Response.json({ text: step.text ?? "a fake transcript" });
  }
}

// --- Text to speech ---------------------------------------------------------------------------------------------

/** What a {@link FakeTts} checks besides {@link FakeMediaExpect}. */
export interface FakeTtsExpect extends FakeMediaExpect {
  /** The `voice` every request must name; any non-empty one when absent. */
  voice?: string;
}

/** Scripted audio: {@link sineWav} as `audio/wav` unless given. */
export type TtsReply = { audio?: Uint8Array; contentType?: string; delayMs?: number };

/** One scripted answer of a {@link FakeTts}. */
export type TtsStep = CommonStep | TtsReply;

/** A request a {@link FakeTts} accepted. */
export interface TtsRequest {
  headers: Headers;
  body: Record<string, unknown>;
  model: string;
  input: string;
  voice: string;
  responseFormat: string;
}

const TTS_FIELDS = new Set(["model", "input", "voice", "response_format", "speed", "instructions", "stream_format"]);
const TTS_FORMATS = ["mp3", "opus", "aac", "flac", "wav", "pcm"];

/**
 * A fake text-to-speech server: `POST /v1/audio/speech` with JSON `{model, input, voice, response_format: "wav"}`
 * (the fake speaks only WAV), answered with a real WAV.
 */
export class FakeTts extends FakeModelServer<TtsReply, TtsRequest> {
  private constructor(expect: FakeTtsExpect) {
    super("text-to-speech server", "/audio/speech", expect);
  }

  /**
   * Starts a fake on a free loopback port.
   *
   * @example
   * ```ts
   * await using tts = FakeTts.start({ model: "kokoro", voice: "af_heart" });
   * tts.enqueue({});
   * // … a TtsClient with baseUrl: tts.baseUrl speaks a sentence …
   * ```
   */
  static start(expect: FakeTtsExpect = {}): FakeTts {
    return new FakeTts(expect);
  }

  protected async check(request: Request): Promise<Checked<TtsRequest>> {
    const { problems, body } = await jsonBody(request);
    if (!body) return { problems };
    for (const name of Object.keys(body)) if (!TTS_FIELDS.has(name)) problems.push(`unknown field ${name}`);
    problems.push(...checkModel(body.model, this.expect.model));
    const { input, voice, speed } = body;
    const format = body.response_format;
    if (typeof input !== "string" || input.trim() === "") problems.push("input is missing or empty");
    else if (input.length > 4096) problems.push(`input is ${input.length} characters, more than 4096`);
    if (typeof voice !== "string" || voice === "") problems.push(`voice is ${JSON.stringify(voice)}, not a voice`);
    const expectedVoice = (this.expect as FakeTtsExpect).voice;
    if (expectedVoice !== undefined && voice !== expectedVoice) {
      problems.push(`voice is ${JSON.stringify(voice)}, expected ${expectedVoice}`);
    }
    if (format === undefined) problems.push("response_format is missing (the server would send mp3)");
    else if (!TTS_FORMATS.includes(String(format))) {
      problems.push(`response_format ${JSON.stringify(format)} is unknown`);
    } else if (format !== "wav") problems.push(`response_format is ${format}; the fake speaks only wav`);
    if (speed !== undefined && (typeof speed !== "number" || speed < 0.25 || speed > 4)) {
      problems.push(`speed ${JSON.stringify(speed)} is not within 0.25 to 4`);
    }
    return {
      problems,
      recorded: {
        headers: request.headers,
        body,
        model: String(body.model),
        input: String(input),
        voice: String(voice),
        responseFormat: String(format),
      },
    };
  }

  protected answer(step: TtsReply): Response {
    return new Response(step.audio ? new Uint8Array(step.audio) : sineWav(), {
      headers: { "content-type": step.contentType ?? "audio/wav" },
    });
  }
}

// --- Samples ----------------------------------------------------------------------------------------------------

/**
 * A real WAV: a sine tone as 16-bit mono PCM.
 *
 * @example
 * ```ts
 * const wav = sineWav({ ms: 100 }); // 44-byte header + 1600 samples at 16 kHz
 * wav.length; // 3244
 * ```
 */
export function sineWav(options: { ms?: number; hz?: number; sampleRate?: number } = {}): Uint8Array<ArrayBuffer> {
  const { ms = 250, hz = 440, sampleRate = 16_000 } = options;
  const samples = Math.round((sampleRate * ms) / 1000);
  const bytes = new Uint8Array(44 + samples * 2);
  const view = new DataView(bytes.buffer);
  const text = (at: number, value: string) =>
    [...value].forEach((char, i) => view.setUint8(at + i, char.charCodeAt(0)));
  text(0, "RIFF");
  view.setUint32(4, 36 + samples * 2, true);
  text(8, "WAVE");
  text(12, "fmt ");
  view.setUint32(16, 16, true); // fmt chunk size
  view.setUint16(20, 1, true); // PCM
  view.setUint16(22, 1, true); // mono
  view.setUint32(24, sampleRate, true);
  view.setUint32(28, sampleRate * 2, true); // bytes per second
  view.setUint16(32, 2, true); // bytes per frame
  view.setUint16(34, 16, true); // bits per sample
  text(36, "data");
  view.setUint32(40, samples * 2, true);
  for (let i = 0; i < samples; i++) {
    view.setInt16(44 + i * 2, Math.round(Math.sin((2 * Math.PI * hz * i) / sampleRate) * 0.3 * 32767), true);
  }
  return bytes;
}

/** A valid 1×1 PNG. */
const PNG_1X1 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

/**
 * A real 1×1 PNG, followed by `trailing` random bytes (after `IEND`, which decoders ignore) for a large image.
 *
 * @example
 * ```ts
 * const photo = samplePng(3 * 1024 * 1024); // a 3 MiB "photo"
 * ```
 */
export function samplePng(trailing = 0): Uint8Array<ArrayBuffer> {
  const png = new Uint8Array(Buffer.from(PNG_1X1, "base64"));
  const bytes = new Uint8Array(png.length + trailing);
  bytes.set(png);
  for (let at = png.length; at < bytes.length; at += 65_536) {
    crypto.getRandomValues(bytes.subarray(at, Math.min(bytes.length, at + 65_536)));
  }
  return bytes;
}
