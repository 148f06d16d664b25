/**
 * What a schema compiles into: a {@link Rule} per keyword family, each adding the {@link SchemaViolation}s it finds,
 * and the schema object a rule is compiled from ({@link SchemaNode}), which names where it is in every error about a
 * malformed keyword. Shared by the validator's entry point (`json_schema.ts`) and its keyword families
 * (`schema_keywords.ts`).
 *
 * @module
 */

/** One violation: where (`room`, `items.2.name`; empty for the whole value), which keyword, and the reason. */
export interface SchemaViolation {
  path: string;
  keyword: string;
  message: string;
}

/** A compiled check: adds what `value` (at `path`) violates to `out`. */
export type Rule = (value: unknown, path: string, out: SchemaViolation[]) => void;

/**
 * One schema object being compiled: its keywords and where it is (`#/properties/room`).
 *
 * @example
 * ```ts
 * const node = new SchemaNode({ minLength: -1 }, "#");
 * node.count("minLength"); // throws: #/minLength must be a whole number ≥ 0, got -1
 * ```
 */
export class SchemaNode {
  /** The keywords. */
  readonly s: Record<string, unknown>;
  /** Where the schema is, for errors. */
  readonly at: string;

  constructor(s: Record<string, unknown>, at: string) {
    this.s = s;
    this.at = at;
  }

  /** The error for a keyword whose value is not `wanted`. */
  bad(keyword: string, wanted: string): TypeError {
    return new TypeError(`${this.at}/${keyword} must be ${wanted}, got ${JSON.stringify(this.s[keyword])}`);
  }

  /** A keyword that must be a whole number ≥ 0, when present. */
  count(keyword: string): number | undefined {
    const value = this.s[keyword];
    if (value === undefined) return undefined;
    if (!Number.isInteger(value) || (value as number) < 0) throw this.bad(keyword, "a whole number ≥ 0");
    return value as number;
  }

  /** A keyword that must be a finite number, when present. */
  number(keyword: string): number | undefined {
    const value = this.s[keyword];
    if (value === undefined) return undefined;
    if (typeof value !== "number" || !Number.isFinite(value)) throw this.bad(keyword, "a number");
    return value;
  }
}
