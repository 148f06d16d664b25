/**
 * What a file is, told from its first bytes. Images and voice notes arrive from the chats and the HTTP API with names
 * and declared types that anyone can set; homed decides what to do with a file (look at it, transcribe it, keep it as a
 * plain file) from its magic bytes alone, so a "photo.png" that is really a script stays an opaque file.
 *
 * @module
 */

/** The broad kind of a file: what homed can do with it. */
export type MediaKind = "image" | "audio" | "video" | "file";

/** What {@link sniffMedia} found: a MIME type and its kind. */
export interface SniffedMedia {
  /** The MIME type, without parameters (`image/png`, `audio/silk`, `application/octet-stream`…). */
  mime: string;
  /** What the file is for homed. */
  kind: MediaKind;
}

const OCTET_STREAM: SniffedMedia = { mime: "application/octet-stream", kind: "file" };

/** Whether `bytes` holds the ASCII text `text` at `offset` (false when too short). */
function hasAscii(bytes: Uint8Array, offset: number, text: string): boolean {
  if (bytes.length < offset + text.length) return false;
  for (let i = 0; i < text.length; i++) {
    if (bytes[offset + i] !== text.charCodeAt(i)) return false;
  }
  return true;
}

/** Whether `bytes` starts with exactly these byte values. */
function hasBytes(bytes: Uint8Array, offset: number, values: readonly number[]): boolean {
  if (bytes.length < offset + values.length) return false;
  return values.every((value, i) => bytes[offset + i] === value);
}

/** A little-endian 32-bit unsigned integer at `offset` (the caller checked the length). */
function uint32le(bytes: Uint8Array, offset: number): number {
  return ((bytes[offset] ?? 0) | ((bytes[offset + 1] ?? 0) << 8) | ((bytes[offset + 2] ?? 0) << 16)) +
    (bytes[offset + 3] ?? 0) * 0x1000000;
}

/** The sizes of the BMP info headers in use (core, V1–V5 and the OS/2 variants). */
const BMP_INFO_SIZES = new Set([12, 16, 40, 52, 56, 64, 108, 124]);

/**
 * "BM" alone is two letters any text may start with, so a BMP also needs a known info-header size where the
 * format puts it.
 */
function isBmp(bytes: Uint8Array): boolean {
  return hasAscii(bytes, 0, "BM") && bytes.length >= 18 && BMP_INFO_SIZES.has(uint32le(bytes, 14));
}

/**
 * An MPEG audio frame header: 11 sync bits, then a version that is not the reserved one, a layer that is not 0
 * (layer 0 with the sync is AAC's ADTS, not MP3), and a bit rate and sample rate that are not the invalid values.
 */
function isMpegFrame(bytes: Uint8Array): boolean {
  const [b0, b1, b2] = bytes;
  if (b0 !== 0xff || b1 === undefined || b2 === undefined || (b1 & 0xe0) !== 0xe0) return false;
  const version = (b1 >> 3) & 0b11;
  const layer = (b1 >> 1) & 0b11;
  const bitrate = b2 >> 4;
  const sampleRate = (b2 >> 2) & 0b11;
  return version !== 0b01 && layer !== 0 && bitrate !== 0b1111 && sampleRate !== 0b11;
}

/** The ISO base media file (`ftyp` box) brands that mean audio only. */
const AUDIO_BRANDS = new Set(["M4A ", "M4B ", "M4P "]);
/** Brands of still images in the same container (HEIF, AVIF), so a phone's photo is not taken for a video. */
const HEIC_BRANDS = new Set(["heic", "heix", "heim", "heis", "mif1", "msf1"]);
const AVIF_BRANDS = new Set(["avif", "avis"]);

/** The type of an ISO base media file from its major brand. */
function sniffIsoMedia(bytes: Uint8Array): SniffedMedia | undefined {
  if (!hasAscii(bytes, 4, "ftyp") || bytes.length < 12) return undefined;
  const brand = String.fromCharCode(...bytes.subarray(8, 12));
  if (AUDIO_BRANDS.has(brand)) return { mime: "audio/mp4", kind: "audio" };
  if (AVIF_BRANDS.has(brand)) return { mime: "image/avif", kind: "image" };
  if (HEIC_BRANDS.has(brand)) return { mime: "image/heic", kind: "image" };
  if (brand === "qt  ") return { mime: "video/quicktime", kind: "video" };
  return { mime: "video/mp4", kind: "video" };
}

/**
 * The type of a file from its magic bytes alone (never its name or declared type). Unknown or truncated content
 * is `application/octet-stream` of kind `file`; nothing here throws.
 *
 * @example
 * ```ts
 * sniffMedia(new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])); // { mime: "image/png", kind: "image" }
 * sniffMedia(new TextEncoder().encode("#!SILK_V3…")); // { mime: "audio/silk", kind: "audio" }
 * sniffMedia(new TextEncoder().encode("hello")); // { mime: "application/octet-stream", kind: "file" }
 * ```
 */
export function sniffMedia(bytes: Uint8Array): SniffedMedia {
  if (hasBytes(bytes, 0, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return { mime: "image/png", kind: "image" };
  if (hasBytes(bytes, 0, [0xff, 0xd8, 0xff])) return { mime: "image/jpeg", kind: "image" };
  if (hasAscii(bytes, 0, "GIF87a") || hasAscii(bytes, 0, "GIF89a")) return { mime: "image/gif", kind: "image" };
  if (hasAscii(bytes, 0, "RIFF")) {
    if (hasAscii(bytes, 8, "WEBP")) return { mime: "image/webp", kind: "image" };
    if (hasAscii(bytes, 8, "WAVE")) return { mime: "audio/wav", kind: "audio" };
    return OCTET_STREAM;
  }
  if (isBmp(bytes)) return { mime: "image/bmp", kind: "image" };
  // QQ writes its voice notes with one 0x02 byte before the SILK header.
  if (hasAscii(bytes, 0, "#!SILK_V3") || (bytes[0] === 0x02 && hasAscii(bytes, 1, "#!SILK_V3"))) {
    return { mime: "audio/silk", kind: "audio" };
  }
  if (hasAscii(bytes, 0, "#!AMR-WB\n")) return { mime: "audio/amr-wb", kind: "audio" };
  if (hasAscii(bytes, 0, "#!AMR")) return { mime: "audio/amr", kind: "audio" };
  if (hasAscii(bytes, 0, "ID3") || isMpegFrame(bytes)) return { mime: "audio/mpeg", kind: "audio" };
  if (hasAscii(bytes, 0, "OggS")) return { mime: "audio/ogg", kind: "audio" };
  if (hasAscii(bytes, 0, "fLaC")) return { mime: "audio/flac", kind: "audio" };
  if (hasBytes(bytes, 0, [0x1a, 0x45, 0xdf, 0xa3])) return { mime: "video/webm", kind: "video" };
  if (hasAscii(bytes, 0, "%PDF-")) return { mime: "application/pdf", kind: "file" };
  return sniffIsoMedia(bytes) ?? OCTET_STREAM;
}

/** File name extensions of the MIME types homed meets, aliases included. */
const EXTENSIONS: ReadonlyMap<string, string> = new Map([
  ["image/png", "png"],
  ["image/jpeg", "jpg"],
  ["image/jpg", "jpg"],
  ["image/gif", "gif"],
  ["image/webp", "webp"],
  ["image/bmp", "bmp"],
  ["image/heic", "heic"],
  ["image/avif", "avif"],
  ["audio/wav", "wav"],
  ["audio/wave", "wav"],
  ["audio/x-wav", "wav"],
  ["audio/mpeg", "mp3"],
  ["audio/mp3", "mp3"],
  ["audio/ogg", "ogg"],
  ["audio/flac", "flac"],
  ["audio/amr", "amr"],
  ["audio/amr-wb", "awb"],
  ["audio/silk", "silk"],
  ["audio/mp4", "m4a"],
  ["audio/x-m4a", "m4a"],
  ["video/mp4", "mp4"],
  ["video/quicktime", "mov"],
  ["video/webm", "webm"],
  ["application/pdf", "pdf"],
]);

/**
 * The file name extension (without the dot) for a MIME type; parameters and case are ignored, and an unknown type
 * is `bin`.
 *
 * @example
 * ```ts
 * extensionFor("image/jpeg"); // "jpg"
 * extensionFor("audio/silk"); // "silk"
 * extensionFor("Audio/MPEG; charset=binary"); // "mp3"
 * extensionFor("application/x-shockwave-flash"); // "bin"
 * ```
 */
export function extensionFor(mime: string): string {
  const bare = (mime.split(";")[0] ?? "").trim().toLowerCase();
  return EXTENSIONS.get(bare) ?? "bin";
}
