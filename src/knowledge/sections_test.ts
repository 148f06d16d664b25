import assert from "node:assert/strict";
import { isLearnedMarker, learnedMarker, markLearned, parseSections } from "./sections.ts";

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

Deno.test("a learned marker marks the section under the heading after it, or the one it stands in; never in code", () => {
  const sections = parseSections(
    [
      "# Cooking",
      "",
      "<!-- learned by homed 2026-12-01 -->",
      "",
      "## Rice",
      "1 cup rice",
      "## Tea",
      "<!--  Learned by homed 2026-12-02  -->",
      "80 °C",
      "## Mine",
      "```",
      "<!-- learned by homed 2026-12-03 -->",
      "```",
      "## Notes",
      "<!-- a note of my own -->",
    ].join("\n"),
    "cooking",
  );
  assert.deepEqual(sections.map((s) => [s.heading, s.learned]), [
    ["Cooking", false],
    ["Rice", true],
    ["Tea", true],
    ["Mine", false],
    ["Notes", false],
  ]);
  assert.equal(sections[0]!.text, "# Cooking", "the marker is not part of the text");
  assert.equal(sections[2]!.text, "## Tea\n80 °C");
  assert.match(sections[3]!.text, /<!-- learned by homed 2026-12-03 -->/, "inside a fence it is only text");
  assert.deepEqual(parseSections("<!-- learned by homed 2026-12-01 -->\nplain text", "t").map((s) => s.learned), [
    true,
  ]);
});

Deno.test("markLearned marks every heading outside code once; the marker line cannot be broken out of", () => {
  const marker = learnedMarker("2026-12-01");
  assert.equal(marker, "<!-- learned by homed 2026-12-01 -->");
  assert.equal(learnedMarker("x-->\n<script>"), "<!-- learned by homed x<script> -->");
  assert.ok(isLearnedMarker(marker));
  assert.ok(!isLearnedMarker("<!-- learned by someone -->"));
  const marked = markLearned("## Soup\n\nBoil.\n\n### Stock\n\n```\n# not a heading\n```\n", "2026-12-01");
  assert.equal(marked, `${marker}\n## Soup\n\nBoil.\n\n${marker}\n### Stock\n\n\`\`\`\n# not a heading\n\`\`\`\n`);
  assert.equal(markLearned(marked, "2026-12-02"), marked, "already marked headings get no second marker");
  assert.deepEqual(parseSections(marked, "soup").map((s) => [s.heading, s.learned]), [["Soup", true], ["Stock", true]]);
});
