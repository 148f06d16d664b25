import assert from "node:assert/strict";
import { topicProblem } from "./topic_name.ts";

Deno.test("ordinary topic names pass, in any script", () => {
  for (const name of ["cooking", "smart_home", "菜谱", "wifi-6", "a", "x".repeat(64), "Ünïcode"]) {
    assert.equal(topicProblem(name), undefined, name);
  }
});

Deno.test("every rejected topic name is named in the message, with the reason", () => {
  const cases: Array<[unknown, string]> = [
    ["", 'Topic name "" is not allowed: it is empty'],
    ["x".repeat(65), `Topic name "${"x".repeat(65)}" is not allowed: it is longer than 64 characters`],
    ["/etc/passwd", 'Topic name "/etc/passwd" is not allowed: it is an absolute path'],
    ["C:evil", 'Topic name "C:evil" is not allowed: it is an absolute path'],
    ["../secrets", 'Topic name "../secrets" is not allowed: it contains ".."'],
    ["a..b", 'Topic name "a..b" is not allowed: it contains ".."'],
    ["cooking/../../x", 'Topic name "cooking/../../x" is not allowed: it contains ".."'],
    ["cooking/rice", 'Topic name "cooking/rice" is not allowed: it contains a path separator'],
    ["cooking\\rice", 'Topic name "cooking\\\\rice" is not allowed: it contains a path separator'],
    [".hidden", 'Topic name ".hidden" is not allowed: it is a hidden name (starts with a dot)'],
    ["bad\u0000name", 'Topic name "bad\\u0000name" is not allowed: it contains a control character'],
    ["two words", 'Topic name "two words" is not allowed: it contains white space'],
    [
      "-flag",
      'Topic name "-flag" is not allowed: allowed are letters, digits, _ and -, starting with a letter or digit',
    ],
    [
      "star*",
      'Topic name "star*" is not allowed: allowed are letters, digits, _ and -, starting with a letter or digit',
    ],
    [5, "Topic name must be a string, got 5"],
  ];
  for (const [name, message] of cases) assert.equal(topicProblem(name), message);
});
