import assert from "node:assert/strict";
import { LineSplitter, type SplitLine } from "./line_splitter.ts";

const bytes = (text: string) => new TextEncoder().encode(text);
const texts = (lines: SplitLine[]) => lines.map((line) => line.text);

Deno.test("lines split across reads are joined; CRLF, empty and blank lines are handled", () => {
  const splitter = new LineSplitter({ delimiter: "\n", maxLineBytes: 64 });
  assert.deepEqual(texts(splitter.push(bytes("temp=21"))), []);
  assert.deepEqual(texts(splitter.push(bytes(".5\r\nhum=40\n\n   \n\r\nlast"))), ["temp=21.5", "hum=40"]);
  assert.deepEqual(texts(splitter.push(bytes("\n"))), ["last"]);
});

Deno.test("a multi-byte delimiter split across two reads still ends the line", () => {
  const splitter = new LineSplitter({ delimiter: "<>", maxLineBytes: 64 });
  assert.deepEqual(texts(splitter.push(bytes("a<"))), []);
  assert.deepEqual(texts(splitter.push(bytes(">b<<>c<"))), ["a", "b<"]);
  assert.deepEqual(texts(splitter.push(bytes(">"))), ["c"]);
});

Deno.test("a line over the limit is cut at a character boundary and the rest up to the delimiter is dropped", () => {
  const splitter = new LineSplitter({ delimiter: "\n", maxLineBytes: 5 });
  // "abcd" then 中 (3 bytes) straddles the 5-byte limit: the cut keeps "abcd", never half a character.
  const lines = splitter.push(bytes("abcd中efgh\nok\n"));
  assert.deepEqual(lines, [
    { text: "abcd", cut: true, invalid: false },
    { text: "ok", cut: false, invalid: false },
  ]);
  assert.deepEqual(splitter.counts, { cut: 1, invalid: 0, dropped: 7 });
});

Deno.test("a cut line comes out as soon as the limit passes, before any delimiter", () => {
  const splitter = new LineSplitter({ delimiter: "\n", maxLineBytes: 4_096 });
  const megabyte = new Uint8Array(1_048_576).fill(0x78);
  const lines = splitter.push(megabyte);
  assert.equal(lines.length, 1);
  assert.equal(lines[0]!.text, "x".repeat(4_096));
  assert.equal(lines[0]!.cut, true);
  assert.deepEqual(texts(splitter.push(megabyte)), []);
  assert.deepEqual(texts(splitter.push(bytes("tail\nnext\n"))), ["next"]);
  assert.equal(splitter.counts.dropped, 2 * 1_048_576 - 4_096 + 4);
});

Deno.test("invalid UTF-8 is replaced with U+FFFD and counted once per line", () => {
  const splitter = new LineSplitter({ delimiter: "\n", maxLineBytes: 64 });
  const lines = splitter.push(new Uint8Array([0x6f, 0x6b, 0xff, 0xfe, 0x0a, 0xc3, 0xa9, 0x0a]));
  assert.deepEqual(lines, [
    { text: "ok\uFFFD\uFFFD", cut: false, invalid: true },
    { text: "é", cut: false, invalid: false },
  ]);
  assert.equal(splitter.counts.invalid, 1);
});

Deno.test("reset forgets a partial line", () => {
  const splitter = new LineSplitter({ delimiter: ";", maxLineBytes: 64 });
  splitter.push(bytes("half a li"));
  splitter.reset();
  assert.deepEqual(texts(splitter.push(bytes("whole;"))), ["whole"]);
});

Deno.test("a bad delimiter or limit is refused naming the value", () => {
  assert.throws(() => new LineSplitter({ delimiter: "", maxLineBytes: 10 }), /delimiter is empty/);
  assert.throws(() => new LineSplitter({ delimiter: "\n", maxLineBytes: 0 }), /got 0/);
});

/** What the splitter must give for `input` (which ends with the delimiter), computed the slow, obvious way. */
function reference(input: Uint8Array, delimiter: string, max: number): SplitLine[] {
  const latin = Array.from(input, (byte) => String.fromCharCode(byte)).join("");
  const delimiterLatin = Array.from(bytes(delimiter), (byte) => String.fromCharCode(byte)).join("");
  const segments = latin.split(delimiterLatin).slice(0, -1);
  const out: SplitLine[] = [];
  for (const segment of segments) {
    let raw = Uint8Array.from(segment, (char) => char.charCodeAt(0));
    const cut = raw.length > max;
    if (cut) {
      let end = max;
      let back = end;
      while (back > 0 && end - back < 3 && (raw[back]! & 0xc0) === 0x80) back--;
      if (back < end && raw[back]! >= 0xc0) end = back;
      raw = raw.subarray(0, end);
    } else if (delimiter === "\n" && raw.at(-1) === 0x0d) raw = raw.subarray(0, -1);
    let text: string;
    let invalid = false;
    try {
      text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(raw);
    } catch {
      invalid = true;
      text = new TextDecoder("utf-8", { ignoreBOM: true }).decode(raw);
    }
    if (text.trim() !== "") out.push({ text, cut, invalid });
  }
  return out;
}

Deno.test("random input in random reads splits exactly as a whole-input reference does", () => {
  let seed = 12345;
  const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648;
  const pieces = ["x", "y", " ", "\r", "中", "é", "\xff", "a", "b", "<", ">", ";", "\n"];
  for (const delimiter of ["\n", ";", "ab", "aab", "<>", ";;"]) {
    for (let round = 0; round < 200; round++) {
      const max = 1 + Math.floor(random() * 12);
      const parts: number[] = [];
      const length = Math.floor(random() * 200);
      for (let i = 0; i < length; i++) {
        const piece = pieces[Math.floor(random() * pieces.length)]!;
        if (piece === "\xff") parts.push(0xff);
        else parts.push(...bytes(piece));
      }
      parts.push(...bytes(delimiter));
      const input = Uint8Array.from(parts);
      const splitter = new LineSplitter({ delimiter, maxLineBytes: max });
      const got: SplitLine[] = [];
      for (let at = 0; at < input.length;) {
        const size = 1 + Math.floor(random() * 9);
        got.push(...splitter.push(input.subarray(at, at + size)));
        at += size;
      }
      assert.deepEqual(got, reference(input, delimiter, max), `delimiter ${JSON.stringify(delimiter)}, max ${max}`);
    }
  }
});
