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
      ],
    },
  );
  assert.deepEqual(readMessage({ text: 42, stream: "yes", display: ["x"], attachments: "no" }), {
    text: "",
    stream: false,
    attachments: [],
  });
});
