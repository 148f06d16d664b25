/**
 * The Markdown → Telegram HTML conversion, checked by the fake Bot API's own HTML parser (TDLib's rules, strict
 * escapes): what the user sees, and that no text whatever — random markup soup included — fails to parse or shows
 * more characters than it had.
 */

import assert from "node:assert/strict";
import { parseFormatted } from "../../../tests/support/fake_telegram_format.ts";
import { splitText } from "../../chat_policy/split_text.ts";
import { confirmationIn, textPieces } from "./outgoing.ts";
import { escapeHtml, toTelegramHtml, visibleText } from "./telegram_html.ts";

const seen = (markdown: string) => parseFormatted(toTelegramHtml(markdown), "HTML");

Deno.test("light Markdown becomes Telegram's tags; snake_case, lone markers and other links stay text", () => {
  const cases: Array<[string, string, string[]]> = [
    ["**bold** and *it* and _it_", "bold and it and it", ["bold", "italic", "italic"]],
    ["run `rm -rf <dir>` now", "run rm -rf <dir> now", ["code"]],
    ["see [the docs](https://example.com/a_b?x=1&y=2)", "see the docs", ["text_link"]],
    ["```ts\nconst a = 1 < 2;\n```", "const a = 1 < 2;", ["pre"]],
    ["my_var_name and 2 * 3 * 4", "my_var_name and 2 * 3 * 4", []],
    ["**not closed", "**not closed", []],
    ["[x](ftp://host/file)", "[x](ftp://host/file)", []],
    ["~~gone~~", "gone", ["strikethrough"]],
  ];
  for (const [markdown, text, types] of cases) {
    const parsed = seen(markdown);
    assert.equal(parsed.text, text, markdown);
    assert.deepEqual(parsed.entities.map((entity) => entity.type), types, markdown);
  }
  assert.equal(escapeHtml('<a href="x">&', true), "&lt;a href=&quot;x&quot;&gt;&amp;");
  assert.equal(visibleText(toTelegramHtml("**a** &amp; <b>")), "a &amp; <b>");
});

Deno.test("no text fails to parse or grows: 3,000 random strings of markup characters", () => {
  const alphabet = [
    "*",
    "**",
    "_",
    "`",
    "```",
    "[",
    "]",
    "(",
    ")",
    "https://a.b/c",
    "<",
    ">",
    "&",
    '"',
    "\n",
    " ",
    "a",
    "字",
    "😀",
    "~~",
    "&amp;",
    "\\",
  ];
  let seed = 7;
  const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
  for (let n = 0; n < 3_000; n++) {
    const markdown = Array.from(
      { length: 1 + Math.floor(random() * 30) },
      () => alphabet[Math.floor(random() * alphabet.length)],
    ).join("");
    if (markdown.trim() === "") continue;
    let parsed;
    try {
      parsed = seen(markdown);
    } catch (error) {
      assert.fail(`${JSON.stringify(markdown)} → ${JSON.stringify(toTelegramHtml(markdown))}: ${error}`);
    }
    assert.ok([...parsed.text].length <= [...markdown].length, JSON.stringify(markdown));
  }
});

Deno.test("split first, then format: each piece of a long marked-up text parses and stays within the limit", () => {
  const markdown = Array.from({ length: 400 }, (_, i) => `**item ${i}** costs 1 < 2 & _maybe_ \`x\``).join("\n");
  for (const piece of splitText(markdown, 4096)) {
    const parsed = seen(piece);
    assert.ok([...parsed.text].length <= 4096);
  }
});

Deno.test("the confirmation command is found, and only its piece carries the buttons", () => {
  assert.equal(confirmationIn("Reply yes (or /confirm 0a1b2c)"), "0a1b2c");
  assert.equal(confirmationIn("no command here: /confirm xyz"), undefined);
  const pieces = textPieces(`${"a".repeat(150)}\n\nDo it? /confirm beef`, 150, "7");
  assert.deepEqual(pieces.map((piece) => [piece.replyTo ?? null, piece.confirm ?? null]), [["7", null], [
    null,
    "beef",
  ]]);
});
