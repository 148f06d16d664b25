import assert from "node:assert/strict";
import { readMessage } from "./message_payload.ts";

Deno.test("readMessage types a message payload; fields of the wrong type count as absent", () => {
  assert.deepEqual(
    readMessage({
      text: "看这个",
      stream: true,
      display: "Mia",
      attachments: [
        { kind: "image", url: "https://multimedia.nt.qq.com.cn/1.png" },
        { kind: "file", url: "file:///tmp/a.pdf", name: "a.pdf" },
        { kind: "audio", media: "ab.wav", mime: "audio/wav", size: 44, via: 7 },
        { kind: "video" },
        { kind: "sticker", url: "https://x/s.gif" },
        { kind: "image", file: "abc.image", size: -1 },
        { kind: 7, url: "x" },
        "not an attachment",
        null,
      ],
    }),
    {
      text: "看这个",
      stream: true,
      display: "Mia",
      attachments: [
        { kind: "image", url: "https://multimedia.nt.qq.com.cn/1.png" },
        { kind: "file", url: "file:///tmp/a.pdf", name: "a.pdf" },
        { kind: "audio", media: "ab.wav", mime: "audio/wav", size: 44 },
        { kind: "image", file: "abc.image" },
      ],
    },
  );
  assert.deepEqual(readMessage({ text: 42, stream: "yes", display: ["x"], attachments: "no" }), {
    text: "",
    stream: false,
    attachments: [],
  });
});
