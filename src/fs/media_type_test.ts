import assert from "node:assert/strict";
import { extensionFor, sniffMedia } from "./media_type.ts";

/** Bytes from a mix of ASCII text and byte values, as file headers are written down. */
function bytesOf(...parts: Array<string | number[]>): Uint8Array {
  const out: number[] = [];
  for (const part of parts) {
    if (typeof part === "string") { for (const char of part) out.push(char.charCodeAt(0)); }
    else out.push(...part);
  }
  return new Uint8Array(out);
}

const LE_SIZE = [0x24, 0x08, 0x00, 0x00];

const HEADERS: Array<[string, Uint8Array, string, string]> = [
  ["PNG", bytesOf([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d], "IHDR"), "image/png", "image"],
  ["JPEG (JFIF)", bytesOf([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10], "JFIF", [0]), "image/jpeg", "image"],
  ["JPEG (Exif)", bytesOf([0xff, 0xd8, 0xff, 0xe1, 0x00, 0x18], "Exif", [0, 0]), "image/jpeg", "image"],
  ["GIF87a", bytesOf("GIF87a", [1, 0, 1, 0, 0x80, 0, 0]), "image/gif", "image"],
  ["GIF89a", bytesOf("GIF89a", [1, 0, 1, 0, 0x80, 0, 0]), "image/gif", "image"],
  ["WEBP", bytesOf("RIFF", LE_SIZE, "WEBPVP8 "), "image/webp", "image"],
  ["BMP", bytesOf("BM", [0x46, 0, 0, 0, 0, 0, 0, 0, 0x36, 0, 0, 0, 0x28, 0, 0, 0, 1, 0, 0, 0]), "image/bmp", "image"],
  ["HEIC", bytesOf([0, 0, 0, 0x18], "ftypheic", [0, 0, 0, 0], "mif1heic"), "image/heic", "image"],
  ["AVIF", bytesOf([0, 0, 0, 0x1c], "ftypavif", [0, 0, 0, 0], "avifmif1"), "image/avif", "image"],
  ["WAV", bytesOf("RIFF", LE_SIZE, "WAVEfmt ", [0x10, 0, 0, 0, 1, 0, 1, 0]), "audio/wav", "audio"],
  ["MP3 with an ID3 tag", bytesOf("ID3", [0x03, 0x00, 0x00, 0, 0, 0x0f, 0x76]), "audio/mpeg", "audio"],
  ["MP3 frame (MPEG-1 layer III)", bytesOf([0xff, 0xfb, 0x90, 0x64, 0, 0, 0]), "audio/mpeg", "audio"],
  ["MP3 frame (MPEG-2 layer III)", bytesOf([0xff, 0xf3, 0x64, 0xc4]), "audio/mpeg", "audio"],
  ["OGG", bytesOf("OggS", [0x00, 0x02, 0, 0, 0, 0, 0, 0, 0, 0]), "audio/ogg", "audio"],
  ["FLAC", bytesOf("fLaC", [0x00, 0x00, 0x00, 0x22]), "audio/flac", "audio"],
  ["AMR", bytesOf("#!AMR\n", [0x3c]), "audio/amr", "audio"],
  ["AMR-WB", bytesOf("#!AMR-WB\n", [0x04]), "audio/amr-wb", "audio"],
  ["SILK", bytesOf("#!SILK_V3", [0x0c, 0x00]), "audio/silk", "audio"],
  ["SILK as QQ writes it (a leading 0x02)", bytesOf([0x02], "#!SILK_V3", [0x0c, 0x00]), "audio/silk", "audio"],
  ["M4A", bytesOf([0, 0, 0, 0x20], "ftypM4A ", [0, 0, 0, 0], "M4A mp42isom"), "audio/mp4", "audio"],
  ["M4B", bytesOf([0, 0, 0, 0x20], "ftypM4B ", [0, 0, 0, 0], "M4B mp42isom"), "audio/mp4", "audio"],
  ["MP4 (isom)", bytesOf([0, 0, 0, 0x18], "ftypisom", [0, 0, 2, 0], "isomiso2"), "video/mp4", "video"],
  ["MP4 (mp42)", bytesOf([0, 0, 0, 0x18], "ftypmp42", [0, 0, 0, 0], "mp42isom"), "video/mp4", "video"],
  ["MOV", bytesOf([0, 0, 0, 0x14], "ftypqt  ", [0x20, 0x05, 0x03, 0x00], "qt  "), "video/quicktime", "video"],
  ["WEBM", bytesOf([0x1a, 0x45, 0xdf, 0xa3, 0x9f, 0x42, 0x86, 0x81, 0x01]), "video/webm", "video"],
  ["PDF", bytesOf("%PDF-1.7\n%\u00e2\u00e3"), "application/pdf", "file"],
];

Deno.test("sniff: a real minimal header of each type gives its MIME type and kind", () => {
  for (const [name, bytes, mime, kind] of HEADERS) {
    assert.deepEqual(sniffMedia(bytes), { mime, kind }, name);
  }
});

Deno.test("sniff: text, a RIFF of another form, AAC's ADTS sync and a bare 'BM' are octet-stream files", () => {
  const octet = { mime: "application/octet-stream", kind: "file" };
  assert.deepEqual(sniffMedia(new TextEncoder().encode("Hello, this is a plain text file.\n")), octet);
  assert.deepEqual(sniffMedia(new TextEncoder().encode("<svg xmlns='http://www.w3.org/2000/svg'/>")), octet);
  assert.deepEqual(sniffMedia(bytesOf("RIFF", LE_SIZE, "AVI LIST")), octet, "an AVI is no WAV or WEBP");
  assert.deepEqual(sniffMedia(bytesOf([0xff, 0xf1, 0x50, 0x80, 0x02, 0x1f, 0xfc])), octet, "ADTS has layer 0");
  assert.deepEqual(sniffMedia(bytesOf([0xff, 0xfb, 0xf0, 0x64])), octet, "bit rate index 15 is invalid");
  assert.deepEqual(sniffMedia(bytesOf("BMW is a car maker, not a bitmap")), octet);
  assert.deepEqual(sniffMedia(bytesOf([0x03], "#!SILK_V3")), octet, "only a 0x02 may lead a SILK header");
});

Deno.test("sniff: truncated inputs (0-3 bytes) and every prefix of the headers never throw", () => {
  const octet = { mime: "application/octet-stream", kind: "file" };
  assert.deepEqual(sniffMedia(new Uint8Array()), octet);
  assert.deepEqual(sniffMedia(new Uint8Array([0x89])), octet);
  assert.deepEqual(sniffMedia(new Uint8Array([0xff, 0xd8])), octet);
  assert.deepEqual(sniffMedia(new Uint8Array([0xff, 0xfb])), octet, "a frame sync needs its third byte");
  assert.deepEqual(sniffMedia(bytesOf("RIF")), octet);
  assert.deepEqual(sniffMedia(bytesOf("ID3")), { mime: "audio/mpeg", kind: "audio" }, "three bytes are a whole tag");
  for (const [name, bytes] of HEADERS) {
    for (let length = 0; length <= bytes.length; length++) {
      const { mime, kind } = sniffMedia(bytes.subarray(0, length));
      assert.equal(typeof mime, "string", `${name} cut at ${length}`);
      assert.ok(["image", "audio", "video", "file"].includes(kind), `${name} cut at ${length}`);
    }
  }
});

Deno.test("extension for a MIME type: known types, aliases, parameters and case; anything else is bin", () => {
  assert.deepEqual(
    ["image/png", "image/jpeg", "audio/wav", "audio/mpeg", "audio/ogg", "audio/silk", "audio/amr", "audio/mp4"].map(
      extensionFor,
    ),
    ["png", "jpg", "wav", "mp3", "ogg", "silk", "amr", "m4a"],
  );
  assert.deepEqual(
    ["video/mp4", "video/quicktime", "video/webm", "application/pdf", "application/octet-stream"].map(extensionFor),
    ["mp4", "mov", "webm", "pdf", "bin"],
  );
  assert.equal(extensionFor("Image/JPEG; charset=binary"), "jpg");
  assert.equal(extensionFor("audio/x-wav"), "wav");
  assert.equal(extensionFor(""), "bin");
  for (const [name, bytes] of HEADERS) {
    assert.notEqual(extensionFor(sniffMedia(bytes).mime), "bin", `every sniffed type has an extension: ${name}`);
  }
});
