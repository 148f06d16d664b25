import assert from "node:assert/strict";
import { IntentDataError } from "./intent.ts";
import {
  findRuleCycle,
  parseTemplate,
  requiredChoices,
  requiredTokens,
  resolveTemplate,
  type SlotRef,
  type TemplateNode,
} from "./template.ts";

const AT = { file: "zh.yaml", line: 42 };

function lit(token: string): TemplateNode {
  return { kind: "literal", token };
}

/** Asserts that parsing `source` fails naming the file, the line and `mentions`. */
function assertFails(source: string, mentions: string[]) {
  assert.throws(() => parseTemplate(source, AT), (error: unknown) => {
    assert.ok(error instanceof IntentDataError);
    assert.equal(error.file, "zh.yaml");
    assert.equal(error.line, 42);
    assert.match(error.message, /^zh\.yaml:42: /);
    for (const text of mentions) assert.ok(error.message.includes(text), `${error.message} should mention ${text}`);
    return true;
  });
}

Deno.test("parseTemplate: literal words become tokens; CJK one character each, spaces do not matter", () => {
  assert.deepEqual(parseTemplate("打开 灯", AT), [lit("打"), lit("开"), lit("灯")]);
  assert.deepEqual(parseTemplate("Turn ON", AT), [lit("turn"), lit("on")]);
});

Deno.test("parseTemplate: alternatives, optional parts, slots, list keys and rules", () => {
  assert.deepEqual(parseTemplate("(开|关)[一下]{name}<end>{kelvin_word:kelvin}", AT), [
    { kind: "group", optional: false, options: [[lit("开")], [lit("关")]] },
    { kind: "group", optional: true, options: [[lit("一"), lit("下")]] },
    { kind: "slot", name: "name", key: "name" },
    { kind: "rule", name: "end" },
    { kind: "slot", name: "kelvin_word", key: "kelvin" },
  ]);
});

Deno.test("parseTemplate: nested groups and a top-level | are alternatives", () => {
  assert.deepEqual(parseTemplate("a|b [c (d|e)]", AT), [
    {
      kind: "group",
      optional: false,
      options: [[lit("a")], [lit("b"), {
        kind: "group",
        optional: true,
        options: [[lit("c"), { kind: "group", optional: false, options: [[lit("d")], [lit("e")]] }]],
      }]],
    },
  ]);
});

Deno.test("parseTemplate: a group written against an English word joins it (light[s], turn(ed|ing))", () => {
  assert.deepEqual(parseTemplate("the light[s]", AT), [
    lit("the"),
    { kind: "group", optional: false, options: [[lit("light")], [lit("lights")]] },
  ]);
  assert.deepEqual(parseTemplate("turn(ed|ing) on", AT), [
    { kind: "group", optional: false, options: [[lit("turned")], [lit("turning")]] },
    lit("on"),
  ]);
  assert.deepEqual(parseTemplate("[re]start", AT), [
    { kind: "group", optional: false, options: [[lit("start")], [lit("restart")]] },
  ]);
  // Chinese needs no joining: the characters are tokens anyway.
  assert.deepEqual(parseTemplate("灯[光]", AT), [lit("灯"), { kind: "group", optional: true, options: [[lit("光")]] }]);
});

Deno.test("parseTemplate reports an unclosed bracket with file, line and the bracket", () => {
  assertFails("打开(客厅", ['unclosed "("', "打开(客厅"]);
  assertFails("打开[客厅", ['unclosed "["', "打开[客厅"]);
  assertFails("打开{name", ['unclosed "{"', "打开{name"]);
  assertFails("打开<turn_on", ['unclosed "<"', "打开<turn_on"]);
});

Deno.test("parseTemplate reports a closing bracket with nothing open", () => {
  assertFails("打开)灯", ['unexpected ")"', "打开)灯"]);
  assertFails("灯]", ['unexpected "]"']);
});

Deno.test("parseTemplate reports an empty alternative or template", () => {
  assertFails("(打开||开启)灯", ["empty alternative", "(打开||开启)灯"]);
  assertFails("(打开|)灯", ["empty alternative"]);
  assertFails("灯[]", ["empty alternative"]);
  assertFails("灯[，]", ["empty alternative", "灯[，]"]);
  assertFails("开|", ["empty alternative"]);
  assertFails("  ", ["empty template"]);
});

Deno.test("parseTemplate reports bad slot and rule names", () => {
  assertFails("打开{}", ["bad slot {}"]);
  assertFails("打开{na me}", ["bad slot {na me}"]);
  assertFails("打开{a:b:c}", ["bad slot {a:b:c}"]);
  assertFails("<turn on>", ["bad rule name <turn on>"]);
});

Deno.test("requiredTokens and requiredChoices say what a sentence must hold", () => {
  const nodes = parseTemplate("(set|turn) [the] {name} to {percent} (percent|%)", AT);
  assert.deepEqual([...requiredTokens(nodes)], ["to"]);
  assert.deepEqual(requiredChoices(nodes), [["set", "turn"], ["percent", "%"]]);
  assert.deepEqual([...requiredTokens(parseTemplate("(打开灯|打开空调)", AT))], ["打", "开"]);
  assert.deepEqual(requiredChoices(parseTemplate("[a|b] ({name}|c)", AT)), []);
});

Deno.test("findRuleCycle finds a rule that uses itself, directly or through others", () => {
  const rules = new Map([
    ["a", parseTemplate("x <b>", AT)],
    ["b", parseTemplate("[<c>]", AT)],
    ["c", parseTemplate("(y|<a>)", AT)],
    ["d", parseTemplate("<d>", AT)],
  ]);
  assert.deepEqual(findRuleCycle(rules), ["a", "b", "c", "a"]);
  rules.delete("a");
  assert.deepEqual(findRuleCycle(rules), ["d", "d"]);
  rules.delete("d");
  assert.equal(findRuleCycle(rules), undefined);
});

Deno.test("resolveTemplate expands rules and maps slots; an unknown rule names the known ones", () => {
  const rules = new Map([["on", parseTemplate("(打开|开)", AT)]]);
  const slot = (ref: SlotRef) => ({ kind: "slot" as const, id: ref.name });
  const resolved = resolveTemplate(parseTemplate("<on>{name}", AT), rules, slot, AT);
  assert.deepEqual(resolved, [
    {
      kind: "group",
      optional: false,
      options: [[{ kind: "group", optional: false, options: [[lit("打"), lit("开")], [lit("开")]] }]],
    },
    { kind: "slot", id: "name" },
  ]);
  assert.throws(
    () => resolveTemplate(parseTemplate("<turn_onn>{name}", AT), rules, slot, AT),
    (error: unknown) =>
      error instanceof IntentDataError && error.message === "zh.yaml:42: unknown rule <turn_onn>; known rules: <on>",
  );
});
