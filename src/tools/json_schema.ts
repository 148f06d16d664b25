/**
 * A JSON Schema validator for tool arguments: the vocabulary tool declarations use (draft 2020-12 / draft-07 core and
 * validation keywords, without references and conditionals), compiled once per tool.
 *
 * Why not a library: homed had `ajv` for this beside `zod` for the config — two validators where one serves, and
 * ≈ 5 MB of resident memory and 30 ms of start-up for a few keywords. A keyword this module does not know is refused
 * when the tool is registered (a schema it cannot check is never half-checked), so a plugin learns at load time that
 * `if`/`then` or `$ref` are unsupported, not from a call that slipped through.
 *
 * @module
 */

/** One violation: where (`room`, `items.2.name`; empty for the whole value), which keyword, and the reason. */
export interface SchemaViolation {
  path: string;
  keyword: string;
  message: string;
}

/** Checks a value; returns every violation found (empty when it conforms). */
export type SchemaCheck = (value: unknown) => SchemaViolation[];

type JsonType = "string" | "number" | "integer" | "boolean" | "object" | "array" | "null";
const TYPES: ReadonlySet<string> = new Set(["string", "number", "integer", "boolean", "object", "array", "null"]);
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

type Rule = (value: unknown, path: string, out: SchemaViolation[]) => void;

function typeOf(value: unknown): JsonType | "undefined" {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value as JsonType;
}

function isType(value: unknown, type: JsonType): boolean {
  const actual = typeOf(value);
  return actual === type || (type === "number" && actual === "integer");
}

function equal(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const keysA = Object.keys(a), keysB = Object.keys(b);
  if (keysA.length !== keysB.length) return false;
  return keysA.every((key) => equal((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]));
}

const join = (path: string, key: string | number) => path === "" ? String(key) : `${path}.${key}`;
const codePoints = (text: string) => [...text].length;

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

function compile(schema: unknown, at: string): Rule {
  if (schema === true) return () => {};
  if (schema === false) return (_value, path, out) => out.push({ path, keyword: "false", message: "is not allowed" });
  if (schema === null || typeof schema !== "object" || Array.isArray(schema)) {
    throw new TypeError(`${at} must be a schema (an object or a boolean), got ${JSON.stringify(schema)}`);
  }
  const s = schema as Record<string, unknown>;
  const rules: Rule[] = [];
  const bad = (keyword: string, wanted: string) =>
    new TypeError(`${at}/${keyword} must be ${wanted}, got ${JSON.stringify(s[keyword])}`);
  const count = (keyword: string): number | undefined => {
    const value = s[keyword];
    if (value === undefined) return undefined;
    if (!Number.isInteger(value) || (value as number) < 0) throw bad(keyword, "a whole number ≥ 0");
    return value as number;
  };
  const number = (keyword: string): number | undefined => {
    const value = s[keyword];
    if (value === undefined) return undefined;
    if (typeof value !== "number" || !Number.isFinite(value)) throw bad(keyword, "a number");
    return value;
  };

  for (const keyword of Object.keys(s)) {
    if (!KEYWORDS.has(keyword) && !ANNOTATIONS.has(keyword)) {
      throw new TypeError(`${at}: the keyword "${keyword}" is not supported (supported: ${[...KEYWORDS].join(", ")})`);
    }
  }

  if (s.type !== undefined) {
    const types = Array.isArray(s.type) ? s.type : [s.type];
    if (!types.length || !types.every((type) => typeof type === "string" && TYPES.has(type))) {
      throw bad("type", `one of ${[...TYPES].join(", ")} (or a list of them)`);
    }
    const wanted = types as JsonType[];
    rules.push((value, path, out) => {
      if (!wanted.some((type) => isType(value, type))) {
        out.push({ path, keyword: "type", message: `must be ${wanted.join(",")}` });
      }
    });
  }
  if (s.enum !== undefined) {
    if (!Array.isArray(s.enum) || !s.enum.length) throw bad("enum", "a non-empty list");
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

  // Strings.
  const minLength = count("minLength"), maxLength = count("maxLength");
  let pattern: RegExp | undefined;
  if (s.pattern !== undefined) {
    if (typeof s.pattern !== "string") throw bad("pattern", "a regular expression");
    try {
      pattern = new RegExp(s.pattern, "u");
    } catch (error) {
      throw new TypeError(`${at}/pattern ${JSON.stringify(s.pattern)} is not a valid regular expression: ${error}`);
    }
  }
  if (minLength !== undefined || maxLength !== undefined || pattern) {
    rules.push((value, path, out) => {
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
    });
  }

  // Numbers.
  const bounds: Array<[string, number | undefined, (value: number, bound: number) => boolean, string]> = [
    ["minimum", number("minimum"), (v, b) => v >= b, ">="],
    ["maximum", number("maximum"), (v, b) => v <= b, "<="],
    ["exclusiveMinimum", number("exclusiveMinimum"), (v, b) => v > b, ">"],
    ["exclusiveMaximum", number("exclusiveMaximum"), (v, b) => v < b, "<"],
  ];
  const multipleOf = number("multipleOf");
  if (multipleOf !== undefined && multipleOf <= 0) throw bad("multipleOf", "a positive number");
  if (bounds.some(([, bound]) => bound !== undefined) || multipleOf !== undefined) {
    rules.push((value, path, out) => {
      if (typeof value !== "number") return;
      for (const [keyword, bound, holds, sign] of bounds) {
        if (bound !== undefined && !holds(value, bound)) {
          out.push({ path, keyword, message: `must be ${sign} ${bound}` });
        }
      }
      if (multipleOf !== undefined && !Number.isInteger(Number((value / multipleOf).toPrecision(12)))) {
        out.push({ path, keyword: "multipleOf", message: `must be a multiple of ${multipleOf}` });
      }
    });
  }

  // Arrays.
  const minItems = count("minItems"), maxItems = count("maxItems");
  const items = s.items === undefined ? undefined : compile(s.items, `${at}/items`);
  if (s.uniqueItems !== undefined && typeof s.uniqueItems !== "boolean") throw bad("uniqueItems", "true or false");
  const unique = s.uniqueItems === true;
  if (minItems !== undefined || maxItems !== undefined || items || unique) {
    rules.push((value, path, out) => {
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
      if (items) value.forEach((item, i) => items(item, join(path, i), out));
    });
  }

  // Objects.
  let properties: Array<[string, Rule]> = [];
  if (s.properties !== undefined) {
    if (s.properties === null || typeof s.properties !== "object" || Array.isArray(s.properties)) {
      throw bad("properties", "an object of schemas");
    }
    properties = Object.entries(s.properties).map(([name, sub]) => [name, compile(sub, `${at}/properties/${name}`)]);
  }
  if (s.required !== undefined && !(Array.isArray(s.required) && s.required.every((n) => typeof n === "string"))) {
    throw bad("required", "a list of property names");
  }
  const required = (s.required ?? []) as string[];
  const additional = s.additionalProperties;
  const extra = additional === undefined || additional === true || additional === false
    ? undefined
    : compile(additional, `${at}/additionalProperties`);
  const minProperties = count("minProperties"), maxProperties = count("maxProperties");
  if (
    properties.length || required.length || additional !== undefined || minProperties !== undefined ||
    maxProperties !== undefined
  ) {
    const known = new Set(properties.map(([name]) => name));
    rules.push((value, path, out) => {
      if (typeOf(value) !== "object") return;
      const record = value as Record<string, unknown>;
      for (const name of required) {
        if (!Object.hasOwn(record, name)) {
          out.push({ path, keyword: "required", message: `missing required field "${name}"` });
        }
      }
      for (const [name, check] of properties) {
        if (Object.hasOwn(record, name)) check(record[name], join(path, name), out);
      }
      const keys = Object.keys(record);
      for (const name of keys) {
        if (known.has(name)) continue;
        if (additional === false) {
          out.push({ path, keyword: "additionalProperties", message: `unknown field "${name}"` });
        } else if (extra) extra(record[name], join(path, name), out);
      }
      if (minProperties !== undefined && keys.length < minProperties) {
        out.push({ path, keyword: "minProperties", message: `must NOT have fewer than ${minProperties} fields` });
      }
      if (maxProperties !== undefined && keys.length > maxProperties) {
        out.push({ path, keyword: "maxProperties", message: `must NOT have more than ${maxProperties} fields` });
      }
    });
  }

  // Combinators.
  for (const keyword of ["anyOf", "oneOf", "allOf"] as const) {
    const list = s[keyword];
    if (list === undefined) continue;
    if (!Array.isArray(list) || !list.length) throw bad(keyword, "a non-empty list of schemas");
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

  return (value, path, out) => {
    for (const rule of rules) rule(value, path, out);
  };
}

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
