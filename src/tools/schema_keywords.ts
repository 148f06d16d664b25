/**
 * The validator's keyword families, each compiled from one schema object into a rule (or none, when the schema uses
 * none of its keywords): the value's type, `enum` and `const`; strings; numbers; arrays; objects; and the combinators
 * (`anyOf`, `oneOf`, `allOf`, `not`). A malformed keyword throws a `TypeError` naming it and where it is; a
 * sub-schema is compiled through the `compile` the caller passes, so the families need not know the entry point.
 *
 * @module
 */

import type { Rule, SchemaNode, SchemaViolation } from "./schema_rule.ts";
import { childPath, codePoints, equal, isType, type JsonType, typeOf, TYPES } from "./schema_values.ts";

/** Compiles a sub-schema found at `at`. */
export type CompileSchema = (schema: unknown, at: string) => Rule;

/**
 * The rules of `type`, `enum` and `const`, in that order.
 *
 * @example
 * ```ts
 * import { SchemaNode } from "./schema_rule.ts";
 *
 * valueRules(new SchemaNode({ type: "string", enum: ["a", "b"] }, "#")).length; // 2
 * ```
 */
export function valueRules(node: SchemaNode): Rule[] {
  const { s } = node;
  const rules: Rule[] = [];
  if (s.type !== undefined) {
    const types = Array.isArray(s.type) ? s.type : [s.type];
    if (!types.length || !types.every((type) => typeof type === "string" && TYPES.has(type))) {
      throw node.bad("type", `one of ${[...TYPES].join(", ")} (or a list of them)`);
    }
    const wanted = types as JsonType[];
    rules.push((value, path, out) => {
      if (!wanted.some((type) => isType(value, type))) {
        out.push({ path, keyword: "type", message: `must be ${wanted.join(",")}` });
      }
    });
  }
  if (s.enum !== undefined) {
    if (!Array.isArray(s.enum) || !s.enum.length) throw node.bad("enum", "a non-empty list");
    const allowed = s.enum as unknown[];
    const shown = allowed.map((item) => JSON.stringify(item)).join(", ");
    rules.push((value, path, out) => {
      if (!allowed.some((item) => equal(item, value))) {
        out.push({ path, keyword: "enum", message: `must be one of ${shown}` });
      }
    });
  }
  if ("const" in s) {
    const constant = s.const;
    rules.push((value, path, out) => {
      if (!equal(constant, value)) out.push({ path, keyword: "const", message: `must be ${JSON.stringify(constant)}` });
    });
  }
  return rules;
}

/**
 * The rule of `minLength`, `maxLength` and `pattern` (checked on strings only).
 *
 * @example
 * ```ts
 * import { SchemaNode, type SchemaViolation } from "./schema_rule.ts";
 *
 * const rule = stringRule(new SchemaNode({ maxLength: 2 }, "#"))!;
 * const out: SchemaViolation[] = [];
 * rule("abc", "", out); // out: [{ path: "", keyword: "maxLength", … }]
 * ```
 */
export function stringRule(node: SchemaNode): Rule | undefined {
  const { s, at } = node;
  const minLength = node.count("minLength"), maxLength = node.count("maxLength");
  let pattern: RegExp | undefined;
  if (s.pattern !== undefined) {
    if (typeof s.pattern !== "string") throw node.bad("pattern", "a regular expression");
    try {
      pattern = new RegExp(s.pattern, "u");
    } catch (error) {
      throw new TypeError(`${at}/pattern ${JSON.stringify(s.pattern)} is not a valid regular expression: ${error}`);
    }
  }
  if (minLength === undefined && maxLength === undefined && !pattern) return undefined;
  return (value, path, out) => {
    if (typeof value !== "string") return;
    const length = codePoints(value);
    if (minLength !== undefined && length < minLength) {
      out.push({ path, keyword: "minLength", message: `must NOT have fewer than ${minLength} characters` });
    }
    if (maxLength !== undefined && length > maxLength) {
      out.push({ path, keyword: "maxLength", message: `must NOT have more than ${maxLength} characters` });
    }
    if (pattern && !pattern.test(value)) {
      out.push({ path, keyword: "pattern", message: `must match pattern "${pattern.source}"` });
    }
  };
}

/**
 * The rule of `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum` and `multipleOf` (checked on numbers only).
 *
 * @example
 * ```ts
 * import { SchemaNode } from "./schema_rule.ts";
 *
 * numberRule(new SchemaNode({ minimum: 0 }, "#")) !== undefined; // true
 * ```
 */
export function numberRule(node: SchemaNode): Rule | undefined {
  const bounds: Array<[string, number | undefined, (value: number, bound: number) => boolean, string]> = [
    ["minimum", node.number("minimum"), (v, b) => v >= b, ">="],
    ["maximum", node.number("maximum"), (v, b) => v <= b, "<="],
    ["exclusiveMinimum", node.number("exclusiveMinimum"), (v, b) => v > b, ">"],
    ["exclusiveMaximum", node.number("exclusiveMaximum"), (v, b) => v < b, "<"],
  ];
  const multipleOf = node.number("multipleOf");
  if (multipleOf !== undefined && multipleOf <= 0) throw node.bad("multipleOf", "a positive number");
  if (!bounds.some(([, bound]) => bound !== undefined) && multipleOf === undefined) return undefined;
  return (value, path, out) => {
    if (typeof value !== "number") return;
    for (const [keyword, bound, holds, sign] of bounds) {
      if (bound !== undefined && !holds(value, bound)) {
        out.push({ path, keyword, message: `must be ${sign} ${bound}` });
      }
    }
    if (multipleOf !== undefined && !Number.isInteger(Number((value / multipleOf).toPrecision(12)))) {
      out.push({ path, keyword: "multipleOf", message: `must be a multiple of ${multipleOf}` });
    }
  };
}

/**
 * The rule of `minItems`, `maxItems`, `uniqueItems` and `items` (checked on arrays only).
 *
 * @example
 * ```ts
 * import { SchemaNode } from "./schema_rule.ts";
 *
 * const compile: CompileSchema = () => () => {};
 * arrayRule(new SchemaNode({ items: { type: "string" } }, "#"), compile) !== undefined; // true
 * ```
 */
export function arrayRule(node: SchemaNode, compile: CompileSchema): Rule | undefined {
  const { s, at } = node;
  const minItems = node.count("minItems"), maxItems = node.count("maxItems");
  const items = s.items === undefined ? undefined : compile(s.items, `${at}/items`);
  if (s.uniqueItems !== undefined && typeof s.uniqueItems !== "boolean") throw node.bad("uniqueItems", "true or false");
  const unique = s.uniqueItems === true;
  if (minItems === undefined && maxItems === undefined && !items && !unique) return undefined;
  return (value, path, out) => {
    if (!Array.isArray(value)) return;
    if (minItems !== undefined && value.length < minItems) {
      out.push({ path, keyword: "minItems", message: `must NOT have fewer than ${minItems} items` });
    }
    if (maxItems !== undefined && value.length > maxItems) {
      out.push({ path, keyword: "maxItems", message: `must NOT have more than ${maxItems} items` });
    }
    if (unique && value.some((item, i) => value.findIndex((other) => equal(other, item)) !== i)) {
      out.push({ path, keyword: "uniqueItems", message: "must NOT have duplicate items" });
    }
    if (items) value.forEach((item, i) => items(item, childPath(path, i), out));
  };
}

/**
 * The rule of `properties`, `required`, `additionalProperties`, `minProperties` and `maxProperties` (checked on
 * objects only).
 *
 * @example
 * ```ts
 * import { SchemaNode } from "./schema_rule.ts";
 *
 * const compile: CompileSchema = () => () => {};
 * objectRule(new SchemaNode({ required: ["room"] }, "#"), compile) !== undefined; // true
 * ```
 */
export function objectRule(node: SchemaNode, compile: CompileSchema): Rule | undefined {
  const { s, at } = node;
  let properties: Array<[string, Rule]> = [];
  if (s.properties !== undefined) {
    if (s.properties === null || typeof s.properties !== "object" || Array.isArray(s.properties)) {
      throw node.bad("properties", "an object of schemas");
    }
    properties = Object.entries(s.properties).map(([name, sub]) => [name, compile(sub, `${at}/properties/${name}`)]);
  }
  if (s.required !== undefined && !(Array.isArray(s.required) && s.required.every((n) => typeof n === "string"))) {
    throw node.bad("required", "a list of property names");
  }
  const required = (s.required ?? []) as string[];
  const additional = s.additionalProperties;
  const extra = additional === undefined || additional === true || additional === false
    ? undefined
    : compile(additional, `${at}/additionalProperties`);
  const minProperties = node.count("minProperties"), maxProperties = node.count("maxProperties");
  if (
    !properties.length && !required.length && additional === undefined && minProperties === undefined &&
    maxProperties === undefined
  ) {
    return undefined;
  }
  const known = new Set(properties.map(([name]) => name));
  return (value, path, out) => {
    if (typeOf(value) !== "object") return;
    const record = value as Record<string, unknown>;
    for (const name of required) {
      if (!Object.hasOwn(record, name)) {
        out.push({ path, keyword: "required", message: `missing required field "${name}"` });
      }
    }
    for (const [name, check] of properties) {
      if (Object.hasOwn(record, name)) check(record[name], childPath(path, name), out);
    }
    const keys = Object.keys(record);
    for (const name of keys) {
      if (known.has(name)) continue;
      if (additional === false) {
        out.push({ path, keyword: "additionalProperties", message: `unknown field "${name}"` });
      } else if (extra) extra(record[name], childPath(path, name), out);
    }
    if (minProperties !== undefined && keys.length < minProperties) {
      out.push({ path, keyword: "minProperties", message: `must NOT have fewer than ${minProperties} fields` });
    }
    if (maxProperties !== undefined && keys.length > maxProperties) {
      out.push({ path, keyword: "maxProperties", message: `must NOT have more than ${maxProperties} fields` });
    }
  };
}

/**
 * The rules of `anyOf`, `oneOf`, `allOf` and `not`, in that order.
 *
 * @example
 * ```ts
 * import { SchemaNode } from "./schema_rule.ts";
 *
 * const compile: CompileSchema = () => () => {};
 * combinatorRules(new SchemaNode({ anyOf: [{}, {}] }, "#"), compile).length; // 1
 * ```
 */
export function combinatorRules(node: SchemaNode, compile: CompileSchema): Rule[] {
  const { s, at } = node;
  const rules: Rule[] = [];
  for (const keyword of ["anyOf", "oneOf", "allOf"] as const) {
    const list = s[keyword];
    if (list === undefined) continue;
    if (!Array.isArray(list) || !list.length) throw node.bad(keyword, "a non-empty list of schemas");
    const subs = list.map((sub, i) => compile(sub, `${at}/${keyword}/${i}`));
    rules.push((value, path, out) => {
      const results = subs.map((sub) => {
        const found: SchemaViolation[] = [];
        sub(value, path, found);
        return found;
      });
      const passing = results.filter((found) => !found.length).length;
      if (keyword === "allOf") { for (const found of results) out.push(...found); }
      else if (keyword === "anyOf" && passing === 0) {
        out.push({ path, keyword, message: "must match at least one of the allowed forms (anyOf)" });
      } else if (keyword === "oneOf" && passing !== 1) {
        out.push({ path, keyword, message: `must match exactly one of the allowed forms (oneOf; matched ${passing})` });
      }
    });
  }
  if (s.not !== undefined) {
    const not = compile(s.not, `${at}/not`);
    rules.push((value, path, out) => {
      const found: SchemaViolation[] = [];
      not(value, path, found);
      if (!found.length) out.push({ path, keyword: "not", message: "must NOT match the excluded form (not)" });
    });
  }
  return rules;
}
