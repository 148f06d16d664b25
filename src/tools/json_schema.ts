/**
 * A JSON Schema validator for tool arguments: the vocabulary tool declarations use (draft 2020-12 / draft-07 core and
 * validation keywords, without references and conditionals), compiled once per tool.
 *
 * Why not a library: homed had `ajv` for this beside `zod` for the config — two validators where one serves, and
 * ≈ 5 MB of resident memory and 30 ms of start-up for a few keywords. A keyword this module does not know is refused
 * when the tool is registered (a schema it cannot check is never half-checked), so a plugin learns at load time that
 * `if`/`then` or `$ref` are unsupported, not from a call that slipped through.
 *
 * The keyword families are compiled in `schema_keywords.ts`, on the value helpers of `schema_values.ts`.
 *
 * @module
 */

import { arrayRule, combinatorRules, numberRule, objectRule, stringRule, valueRules } from "./schema_keywords.ts";
import { type Rule, SchemaNode, type SchemaViolation } from "./schema_rule.ts";

export type { SchemaViolation } from "./schema_rule.ts";

/** Checks a value; returns every violation found (empty when it conforms). */
export type SchemaCheck = (value: unknown) => SchemaViolation[];

/** Keywords that only describe; accepted and not checked. */
const ANNOTATIONS: ReadonlySet<string> = new Set([
  "$schema",
  "$id",
  "$comment",
  "title",
  "description",
  "default",
  "examples",
  "deprecated",
  "readOnly",
  "writeOnly",
  "format",
]);

/**
 * Every keyword the validator takes — those it checks and those it accepts as annotations — so a schema from elsewhere
 * (an MCP server's) can be loosened to what it can enforce.
 *
 * @example
 * ```ts
 * knownSchemaKeyword("pattern"); // true
 * knownSchemaKeyword("$ref"); // false
 * ```
 */
export function knownSchemaKeyword(keyword: string): boolean {
  return KEYWORDS.has(keyword) || ANNOTATIONS.has(keyword);
}

/**
 * Compiles a schema; throws a `TypeError` naming the keyword and where it is when the schema is malformed or uses a
 * keyword this validator does not check.
 *
 * @example
 * ```ts
 * const check = compileSchema({ type: "object", properties: { room: { type: "string" } }, required: ["room"] });
 * check({}); // [{ path: "", keyword: "required", message: 'missing required field "room"' }]
 * ```
 */
export function compileSchema(schema: unknown, at = "#"): SchemaCheck {
  const rule = compile(schema, at);
  return (value) => {
    const out: SchemaViolation[] = [];
    rule(value, "", out);
    return out;
  };
}

/** Compiles one schema (a boolean or an object) found at `at`, its sub-schemas with it. */
function compile(schema: unknown, at: string): Rule {
  if (schema === true) return () => {};
  if (schema === false) return (_value, path, out) => out.push({ path, keyword: "false", message: "is not allowed" });
  if (schema === null || typeof schema !== "object" || Array.isArray(schema)) {
    throw new TypeError(`${at} must be a schema (an object or a boolean), got ${JSON.stringify(schema)}`);
  }
  const s = schema as Record<string, unknown>;
  for (const keyword of Object.keys(s)) {
    if (!KEYWORDS.has(keyword) && !ANNOTATIONS.has(keyword)) {
      throw new TypeError(`${at}: the keyword "${keyword}" is not supported (supported: ${[...KEYWORDS].join(", ")})`);
    }
  }
  const node = new SchemaNode(s, at);
  // In this order: the violations come out in it, and a malformed schema is refused at its first bad keyword in it.
  const rules: Rule[] = [...valueRules(node)];
  for (const rule of [stringRule(node), numberRule(node), arrayRule(node, compile), objectRule(node, compile)]) {
    if (rule) rules.push(rule);
  }
  rules.push(...combinatorRules(node, compile));
  return (value, path, out) => {
    for (const rule of rules) rule(value, path, out);
  };
}

/** Keywords the validator checks. */
const KEYWORDS: ReadonlySet<string> = new Set([
  "type",
  "enum",
  "const",
  "minLength",
  "maxLength",
  "pattern",
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "multipleOf",
  "items",
  "minItems",
  "maxItems",
  "uniqueItems",
  "properties",
  "required",
  "additionalProperties",
  "minProperties",
  "maxProperties",
  "anyOf",
  "oneOf",
  "allOf",
  "not",
]);
