/**
 * A 5-field cron line checked where the config is read (`backup.schedule`), without loading the cron library: the
 * config sits below every part that runs one, and a bad line should stop start-up naming the field, not fail at 3 am.
 * What it accepts is what croner's 5-part mode reads: numbers, `*`, ranges, steps, lists, month and weekday names.
 *
 * @module
 */

/** The five fields: name, lowest, highest, and the names allowed in place of numbers (index = value). */
const FIELDS: readonly { name: string; min: number; max: number; names?: readonly string[] }[] = [
  { name: "minute", min: 0, max: 59 },
  { name: "hour", min: 0, max: 23 },
  { name: "day of month", min: 1, max: 31 },
  {
    name: "month",
    min: 1,
    max: 12,
    names: ["", "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"],
  },
  // 7 is Sunday too, as in most crons.
  { name: "day of week", min: 0, max: 7, names: ["sun", "mon", "tue", "wed", "thu", "fri", "sat"] },
];

/** What a cron line may look like, for error messages. */
export const CRON_FORMS = 'a 5-field cron line "minute hour day-of-month month day-of-week" such as "30 3 * * *"';

/**
 * Why `line` is not a 5-field cron line, or `undefined` when it is one.
 *
 * @example
 * ```ts
 * cronProblem("30 3 * * *"); // undefined
 * cronProblem("30 25 * * *"); // "the hour is 25; allowed: 0 to 23"
 * cronProblem("daily"); // "it has 1 field; a cron line has 5"
 * ```
 */
export function cronProblem(line: string): string | undefined {
  const fields = line.trim().split(/\s+/).filter(Boolean);
  if (fields.length !== 5) return `it has ${fields.length} field${fields.length === 1 ? "" : "s"}; a cron line has 5`;
  for (const [index, field] of fields.entries()) {
    const spec = FIELDS[index]!;
    for (const item of field.split(",")) {
      const problem = itemProblem(item.toLowerCase(), spec);
      if (problem) return problem;
    }
  }
  return undefined;
}

/** One item of a field's list: `*`, `*∕n`, `a`, `a-b`, `a-b∕n` or `a∕n`. */
function itemProblem(item: string, spec: typeof FIELDS[number]): string | undefined {
  const match = /^(\*|[a-z0-9]+(?:-[a-z0-9]+)?)(?:\/(\d+))?$/.exec(item);
  if (!match) return `the ${spec.name} field holds ${JSON.stringify(item)}; allowed: *, a number, a-b, a list, /step`;
  const [, range, step] = match as unknown as [string, string, string | undefined];
  if (step !== undefined && (Number(step) < 1 || Number(step) > spec.max)) {
    return `the ${spec.name} step is ${step}; allowed: 1 to ${spec.max}`;
  }
  if (range === "*") return undefined;
  const values: number[] = [];
  for (const part of range.split("-")) {
    const named = spec.names?.indexOf(part) ?? -1;
    const value = /^\d+$/.test(part) ? Number(part) : named > 0 || (named === 0 && spec.min === 0) ? named : NaN;
    if (Number.isNaN(value)) return `the ${spec.name} is ${JSON.stringify(part)}; allowed: ${spec.min} to ${spec.max}`;
    if (value < spec.min || value > spec.max) {
      return `the ${spec.name} is ${value}; allowed: ${spec.min} to ${spec.max}`;
    }
    values.push(value);
  }
  if (values.length === 2 && values[0]! > values[1]!) {
    return `the ${spec.name} range ${range} runs backwards`;
  }
  return undefined;
}
