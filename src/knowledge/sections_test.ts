import assert from "node:assert/strict";
import { parseSections } from "./sections.ts";

Deno.test("sections split at headings, intro text under the topic name, code fences respected", () => {
  const sections = parseSections(
    "Intro line\n\n# Cooking\n\n## Rice\n1 cup rice\n```sh\n# not a heading\n```\n## 番茄炒蛋 ##\n先炒蛋\n\n###   \n",
    "cooking",
  );
  assert.deepEqual(sections.map((s) => [s.index, s.heading]), [[0, "cooking"], [1, "Cooking"], [2, "Rice"], [
    3,
    "番茄炒蛋",
  ]]);
  assert.match(sections[2]!.text, /# not a heading/);
  assert.equal(sections[3]!.text, "## 番茄炒蛋 ##\n先炒蛋\n\n###");
  assert.deepEqual(parseSections("", "t"), []);
  assert.deepEqual(parseSections("\r\nplain text\r\n", "t").map((s) => s.text), ["plain text"]);
});
