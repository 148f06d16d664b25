import assert from "node:assert/strict";
import { compileSchema } from "./json_schema.ts";

const lamp = compileSchema({
  type: "object",
  properties: {
    room: { type: "string", minLength: 1, maxLength: 4, pattern: "^[a-z]+$" },
    level: { type: "integer", minimum: 0, maximum: 100 },
    ratio: { type: "number", exclusiveMinimum: 0, exclusiveMaximum: 1, multipleOf: 0.1 },
    mode: { enum: ["warm", "cold"] },
    tags: { type: "array", items: { type: "string" }, minItems: 1, maxItems: 2, uniqueItems: true },
    at: { type: ["string", "null"] },
    fixed: { const: { a: [1, 2] } },
    extra: { type: "object", additionalProperties: { type: "boolean" } },
  },
  required: ["room"],
  additionalProperties: false,
});

Deno.test("conforming values pass; each violation names the field and the rule", () => {
  assert.deepEqual(
    lamp({ room: "hall", level: 5, ratio: 0.3, mode: "warm", tags: ["a"], at: null, fixed: { a: [1, 2] } }),
    [],
  );
  const cases: Array<[unknown, string[]]> = [
    [[1], [": must be object"]],
    [{}, [': missing required field "room"']],
    [{ room: "hall", x: 1 }, [': unknown field "x"']],
    [{ room: 5 }, ["room: must be string"]],
    [{ room: "" }, ["room: must NOT have fewer than 1 characters", 'room: must match pattern "^[a-z]+$"']],
    [{ room: "厨房厨房厨" }, ["room: must NOT have more than 4 characters", 'room: must match pattern "^[a-z]+$"']],
    [{ room: "hall", level: 2.5 }, ["level: must be integer"]],
    [{ room: "hall", level: 101 }, ["level: must be <= 100"]],
    [{ room: "hall", ratio: 1 }, ["ratio: must be < 1"]],
    [{ room: "hall", ratio: 0.25 }, ["ratio: must be a multiple of 0.1"]],
    [{ room: "hall", mode: "hot" }, ['mode: must be one of "warm", "cold"']],
    [{ room: "hall", tags: [] }, ["tags: must NOT have fewer than 1 items"]],
    [{ room: "hall", tags: ["a", "a", "b"] }, [
      "tags: must NOT have more than 2 items",
      "tags: must NOT have duplicate items",
    ]],
    [{ room: "hall", tags: ["a", 3] }, ["tags.1: must be string"]],
    [{ room: "hall", at: 3 }, ["at: must be string,null"]],
    [{ room: "hall", fixed: { a: [2, 1] } }, ['fixed: must be {"a":[1,2]}']],
    [{ room: "hall", extra: { ok: true, bad: "yes" } }, ["extra.bad: must be boolean"]],
  ];
  for (const [value, expected] of cases) {
    assert.deepEqual(lamp(value).map((v) => `${v.path}: ${v.message}`), expected, JSON.stringify(value));
  }
});

Deno.test("anyOf, oneOf, allOf and not", () => {
  const check = compileSchema({
    anyOf: [{ type: "string" }, { type: "integer" }],
    not: { const: "forbidden" },
    allOf: [{ not: { const: 13 } }],
  });
  assert.deepEqual(check("ok"), []);
  assert.deepEqual(check(7), []);
  assert.deepEqual(check(true).map((v) => v.keyword), ["anyOf"]);
  assert.deepEqual(check("forbidden").map((v) => v.message), ["must NOT match the excluded form (not)"]);
  assert.deepEqual(check(13).map((v) => v.keyword), ["not"]);
  const one = compileSchema({ oneOf: [{ type: "number" }, { type: "integer" }] });
  assert.deepEqual(one(1.5), []);
  assert.deepEqual(one(2).map((v) => v.message), ["must match exactly one of the allowed forms (oneOf; matched 2)"]);
});

Deno.test("a malformed schema or an unsupported keyword is refused at compile time, naming where", () => {
  const cases: Array<[unknown, RegExp]> = [
    [{ type: "nonsense" }, /^#\/type must be one of string, number/],
    [
      { properties: { a: { type: "string", if: { const: "x" } } } },
      /^#\/properties\/a: the keyword "if" is not supported/,
    ],
    [{ $ref: "#/$defs/x" }, /the keyword "\$ref" is not supported/],
    [{ required: "room" }, /^#\/required must be a list of property names, got "room"$/],
    [{ minLength: -1 }, /^#\/minLength must be a whole number ≥ 0, got -1$/],
    [{ pattern: "(" }, /^#\/pattern "\(" is not a valid regular expression/],
    [{ items: 5 }, /^#\/items must be a schema \(an object or a boolean\), got 5$/],
    [{ enum: [] }, /^#\/enum must be a non-empty list, got \[\]$/],
    [{ multipleOf: 0 }, /^#\/multipleOf must be a positive number, got 0$/],
  ];
  for (const [schema, pattern] of cases) {
    assert.throws(() => compileSchema(schema), (error: unknown) => {
      assert.ok(error instanceof TypeError, String(error));
      assert.match(error.message, pattern);
      return true;
    });
  }
  // Annotations are accepted and not checked.
  assert.deepEqual(compileSchema({ type: "string", description: "d", format: "date-time", default: "x" })("any"), []);
});
