import assert from "node:assert/strict";
import { EMBEDDED_INTENT_FILES } from "./embedded_intents.ts";
import { IntentDataError } from "./intent.ts";
import { readIntentFile } from "./intent_data.ts";

/** Asserts that reading `text` as "my.yaml" fails at `line`, mentioning each of `mentions`. */
function assertFails(text: string, line: number, mentions: string[]) {
  assert.throws(() => readIntentFile("my.yaml", text), (error: unknown) => {
    assert.ok(error instanceof IntentDataError, String(error));
    assert.equal(error.file, "my.yaml");
    assert.equal(error.line, line, error.message);
    assert.ok(error.message.startsWith(`my.yaml:${line}: `), error.message);
    for (const text of mentions) assert.ok(error.message.includes(text), `${error.message} should mention ${text}`);
    return true;
  });
}

Deno.test("readIntentFile reads rules, lists and sentences with their lines", () => {
  const text = [
    "# my additions", // 1
    "language: zh", // 2
    "rules:", // 3
    '  wake: "(叫醒|唤醒)"', // 4
    "lists:", // 5
    "  kelvin_word:", // 6
    "    烛光: 1900", // 7
    "    月光: moon", // 8
    "intents:", // 9
    "  HassTurnOn:", // 10
    '    - "<wake>{name}"', // 11
    "    - sentences:", // 12
    '        - "全屋<wake>"', // 13
    "      slots: { all: true, domain: light }", // 14
    "    - sentence: 开{name}", // 15
  ].join("\n");
  const data = readIntentFile("my.yaml", text);
  assert.equal(data.language, "zh");
  assert.deepEqual(data.rules, [{ name: "wake", text: "(叫醒|唤醒)", line: 4 }]);
  assert.deepEqual(data.lists, [{
    name: "kelvin_word",
    line: 6,
    entries: [{ text: "烛光", value: 1900, line: 7 }, { text: "月光", value: "moon", line: 8 }],
  }]);
  assert.deepEqual(data.sentences, [
    { intent: "HassTurnOn", text: "<wake>{name}", line: 11, slots: {} },
    { intent: "HassTurnOn", text: "全屋<wake>", line: 13, slots: { all: true, domain: "light" } },
    { intent: "HassTurnOn", text: "开{name}", line: 15, slots: {} },
  ]);
});

Deno.test("readIntentFile: the shipped files are valid", () => {
  for (const file of EMBEDDED_INTENT_FILES) {
    const data = readIntentFile(file.name, file.text);
    assert.equal(data.language, file.name.slice(0, 2));
    assert.ok(data.sentences.length > 100, `${file.name}: ${data.sentences.length} sentences`);
  }
});

Deno.test("readIntentFile reports a YAML syntax error at its line", () => {
  assertFails("language: en\nintents:\n  HassTurnOn:\n    - 'it's'\n", 4, ["YAML syntax", "Unexpected scalar"]);
  assertFails("language: en\nrules:\n  a: b: c\n", 3, ["YAML syntax", "Nested mappings"]);
  assertFails("language: en\nlists:\n  domain: { a: 1, a: 2 }\n", 3, ["YAML syntax", "unique"]);
});

Deno.test("readIntentFile reports an unknown intent and lists the known ones", () => {
  assertFails('language: en\nintents:\n  HassTurnOnn:\n    - "turn on {name}"\n', 3, [
    '"HassTurnOnn"',
    "known intents: HassTurnOn, HassTurnOff",
    "HomedWhatCanYouDo",
  ]);
});

Deno.test("readIntentFile reports a list value that is not a string or a number", () => {
  assertFails("language: en\nlists:\n  domain:\n    lamp: light\n    light: [a, b]\n", 5, [
    "list domain",
    '"light"',
    "a list",
    "string or a number",
  ]);
  assertFails("language: en\nlists:\n  state:\n    yes: true\n", 4, ['"yes"', "true", "string or a number"]);
  assertFails("language: en\nlists:\n  state:\n    gone:\n", 4, ['"gone"', "null"]);
});

Deno.test("readIntentFile reports a wrong or missing language and unknown top-level keys", () => {
  assertFails("language: fr\nintents: {}\n", 1, ['"fr"', "allowed: zh, en"]);
  assertFails("intents: {}\n", 1, ['"language:" is missing']);
  assertFails("language: en\nintent:\n  HassTurnOn: []\n", 2, ['"intent"', "allowed: language, rules, lists, intents"]);
  assertFails("- a\n- b\n", 1, ["a map"]);
});

Deno.test("readIntentFile reports bad sentences and fixed slots", () => {
  assertFails("language: en\nintents:\n  HassTurnOn: turn on {name}\n", 3, ["HassTurnOn", "list of sentences"]);
  assertFails("language: en\nintents:\n  HassTurnOn:\n    - 42\n", 4, ["42", "not a sentence"]);
  assertFails('language: en\nintents:\n  HassTurnOn:\n    - sentence: "x"\n      slot: { all: true }\n', 5, [
    '"slot"',
    "allowed: sentence, sentences, slots",
  ]);
  assertFails(
    'language: en\nintents:\n  HassTurnOn:\n    - sentence: "x"\n      slots:\n        everything: true\n',
    6,
    [
      '"everything"',
      "domain, quantity, state",
    ],
  );
  assertFails('language: en\nintents:\n  HassTurnOn:\n    - sentence: "x"\n      slots: { all: "yes" }\n', 5, [
    'all is "yes"',
    "boolean",
  ]);
  assertFails("language: en\nintents:\n  HassTurnOn:\n    - slots: { all: true }\n", 4, ['without "sentence"']);
  assertFails('language: en\nrules:\n  turn on: "(turn|switch) on"\n', 3, ['"turn on"', "letters, digits"]);
  assertFails("language: en\nrules:\n  on: [turn, switch]\n", 3, ["<on>", "a list", "as a string"]);
});
