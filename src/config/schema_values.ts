/**
 * The value schemas `homed.yaml`'s keys are built of — numbers written as strings, durations, sizes, texts with what
 * they allow, secrets, URLs — each failing with the words a config error shows after "allowed:".
 *
 * @module
 */

import { z } from "zod";
import { BYTE_SIZE_FORMS, parseByteSize } from "./byte_size.ts";
import { DURATION_FORMS, parseDuration } from "./duration.ts";

/** Accepts numbers written as strings, which is what `${VAR:-4096}` expands to. */
export function numeric(schema: z.ZodNumber) {
  return z.preprocess(
    (value) => typeof value === "string" && /^-?\d+(\.\d+)?$/.test(value.trim()) ? Number(value) : value,
    schema,
  );
}

/** A number from `min` to `max` (a whole one when `integer`). */
export function number(min: number, max: number, integer: boolean) {
  const allowed = `${integer ? "a whole number" : "a number"} from ${min} to ${max}`;
  let schema = z.number({ error: allowed }).min(min, { error: allowed }).max(max, { error: allowed });
  if (integer) schema = schema.int({ error: allowed });
  return numeric(schema);
}

/** `true` or `false`, also as the texts an environment variable expands to. */
export function boolean() {
  const allowed = "true or false";
  return z.preprocess(
    (value) => value === "true" ? true : value === "false" ? false : value,
    z.boolean({ error: allowed }),
  );
}

/** A duration such as "30s", in milliseconds, from `minMs` to `maxMs` (`range` says it in words). */
export function duration(minMs: number, maxMs: number, range: string) {
  const allowed = `${DURATION_FORMS}, from ${range}`;
  return z.string({ error: allowed }).transform((text, ctx) => {
    const ms = parseDuration(text);
    if (ms === undefined || ms < minMs || ms > maxMs) {
      ctx.addIssue({ code: "custom", message: allowed, input: text });
      return z.NEVER;
    }
    return ms;
  });
}

/** A size such as "500MB" (see `byte_size.ts`), in bytes; `0` (also unquoted) is 0. */
export function byteSize(zero: string) {
  const allowed = `${BYTE_SIZE_FORMS}, or 0 (${zero})`;
  return z.preprocess(
    (value) => typeof value === "number" ? String(value) : value,
    z.string({ error: allowed }).transform((text, ctx) => {
      const bytes = parseByteSize(text);
      if (bytes === undefined) {
        ctx.addIssue({ code: "custom", message: allowed, input: text });
        return z.NEVER;
      }
      return bytes;
    }),
  );
}

/** A text, matching `pattern` when given; `allowed` says what is allowed. */
export function text(allowed: string, pattern?: RegExp) {
  const schema = z.string({ error: allowed });
  return pattern ? schema.regex(pattern, { error: allowed }) : schema;
}

/** A non-empty file system path. */
export const path = () => text("a non-empty file system path").min(1, { error: "a non-empty file system path" });

/** A secret: empty means "not set", and a set one must not be guessable. */
export function secret(minLength: number) {
  const allowed = `empty (not set) or a string of at least ${minLength} characters`;
  return z.string({ error: allowed }).refine((value) => value === "" || value.length >= minLength, {
    error: allowed,
  });
}

/** An http:// or https:// URL without credentials. */
export const baseUrl = z.string({ error: "an http:// or https:// URL" }).refine((value) => {
  try {
    const url = new URL(value);
    return (url.protocol === "http:" || url.protocol === "https:") && url.username === "";
  } catch {
    return false;
  }
}, { error: "an http:// or https:// URL without credentials" });
