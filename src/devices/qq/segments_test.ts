import assert from "node:assert/strict";
import { escapeText, escapeValue, normalizeMessage, parseCq, readSegments, toCq } from "./segments.ts";

Deno.test("the spec's example: string and array forms are the same message", () => {
  const cq = "&#91;第一部分&#93;[CQ:image,file=123.jpg]图片之后的部分，表情：[CQ:face,id=123]";
  const array = [
    { type: "text", data: { text: "[第一部分]" } },
    { type: "image", data: { file: "123.jpg" } },
    { type: "text", data: { text: "图片之后的部分，表情：" } },
    { type: "face", data: { id: "123" } },
  ];
  assert.deepEqual(parseCq(cq), array);
  assert.deepEqual(normalizeMessage(array), array);
  assert.equal(toCq(array), cq);
});

Deno.test("escaping round-trips &, [, ], and , and = in values; & is escaped first", () => {
  const text = "a & b [c] d,e=f &#91;";
  assert.equal(escapeText(text), "a &amp; b &#91;c&#93; d,e=f &amp;#91;");
  assert.deepEqual(parseCq(escapeText(text)), [{ type: "text", data: { text } }]);
  const share = "[CQ:share,title=震惊&#44;小伙睡觉前居然...,url=http://baidu.com/?a=1&amp;b=2]";
  assert.deepEqual(parseCq(share), [{
    type: "share",
    data: { title: "震惊,小伙睡觉前居然...", url: "http://baidu.com/?a=1&b=2" },
  }]);
  assert.equal(toCq(parseCq(share)), share);
  assert.equal(escapeValue("a,b=c"), "a&#44;b=c");
  assert.deepEqual(parseCq("[CQ:x,k=a=b]"), [{ type: "x", data: { k: "a=b" } }], "a value may contain =");
});

Deno.test("a user who writes a CQ code in text gets text, not a code", () => {
  const written = "[CQ:at,qq=all] everyone!";
  // Sent as an array, the text stays literal; as a string it is escaped.
  assert.equal(toCq([{ type: "text", data: { text: written } }]), "&#91;CQ:at,qq=all&#93; everyone!");
  assert.deepEqual(parseCq(toCq([{ type: "text", data: { text: written } }])), [{
    type: "text",
    data: { text: written },
  }]);
});

Deno.test("reading a message: text, mentions, reply, attachments", () => {
  const read = readSegments(
    [
      { type: "reply", data: { id: "-12345" } },
      { type: "at", data: { qq: "10001000" } },
      { type: "text", data: { text: " 看看这张图 " } },
      { type: "image", data: { file: "abc.jpg", url: "https://example.invalid/abc.jpg" } },
      { type: "at", data: { qq: "42", name: "妈妈" } },
      { type: "record", data: { file: "v.amr", file_size: "2048" } },
      { type: "file", data: { file: "/root/.config/QQ/a.pdf", name: "bill.pdf" } },
      { type: "image", data: {} },
    ],
    "10001000",
  );
  assert.deepEqual(read, {
    text: "看看这张图 [image]@妈妈[audio][file][image]",
    mentions: ["10001000", "42"],
    replyTo: "-12345",
    attachments: [
      { kind: "image", url: "https://example.invalid/abc.jpg", file: "abc.jpg" },
      { kind: "audio", file: "v.amr", size: 2048 },
      { kind: "file", file: "/root/.config/QQ/a.pdf", name: "bill.pdf" },
    ],
  });
});

Deno.test("malformed message values are refused, numbers in data become strings", () => {
  assert.equal(normalizeMessage(42), undefined);
  assert.equal(normalizeMessage([{ data: {} }]), undefined);
  assert.deepEqual(normalizeMessage({ type: "face", data: { id: 123 } }), [{ type: "face", data: { id: "123" } }]);
});
