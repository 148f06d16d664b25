import assert from "node:assert/strict";
import { BASE64_MAX_BYTES, payloadText } from "./payload_text.ts";

const utf8 = (text: string) => new TextEncoder().encode(text);

Deno.test("UTF-8 within the limit is the text as sent, empty included", () => {
  assert.deepEqual(payloadText(utf8('{"state":"ON","温度":21.5}'), 4_096), {
    text: '{"state":"ON","温度":21.5}',
    encoding: "utf-8",
    bytes: 28,
    cut: false,
  });
  assert.deepEqual(payloadText(new Uint8Array(), 4_096), { text: "", encoding: "utf-8", bytes: 0, cut: false });
});

Deno.test("text over the limit is cut on a character boundary and marked with its length in all", () => {
  // "灯" is three bytes: a limit of 4 falls inside the second one, which must not be split.
  const cut = payloadText(utf8("灯灯灯"), 4);
  assert.deepEqual(cut, { text: "灯 […cut: 9 bytes in all]", encoding: "utf-8", bytes: 9, cut: true });
  const long = payloadText(utf8("x".repeat(10_000)), 4_096);
  assert.equal(long.text, `${"x".repeat(4_096)} […cut: 10000 bytes in all]`);
});

Deno.test("short binary becomes base64; long binary only a note, so a JPEG costs no memory in an event", () => {
  assert.deepEqual(payloadText(new Uint8Array([0xff, 0x00, 0xfe]), 4_096), {
    text: "/wD+",
    encoding: "base64",
    bytes: 3,
    cut: false,
  });
  const jpeg = new Uint8Array(48_213).fill(0xff);
  assert.deepEqual(payloadText(jpeg, 4_096), {
    text: "(binary, 48213 bytes)",
    encoding: "binary",
    bytes: 48_213,
    cut: false,
  });
  assert.equal(payloadText(new Uint8Array(BASE64_MAX_BYTES).fill(0xff), 4_096).encoding, "base64");
  assert.equal(payloadText(new Uint8Array(BASE64_MAX_BYTES + 1).fill(0xff), 4_096).encoding, "binary");
});
