/**
 * How `homed.yaml` names people on each chat — QQ numbers, Telegram ids, WeChat user ids — and `people:`, which names
 * each member of the household once with their addresses on every chat and their trust (issue 40): one person
 * across channels.
 *
 * @module
 */

import { z } from "zod";
import { numeric, text } from "./schema_values.ts";

/** A Telegram user or chat id (digits; a group's negative, `-1001234567890`), or `""` where `empty` says so. */
export function telegramId(empty: boolean) {
  const allowed = `${empty ? "empty, or " : ""}a Telegram id (digits; a group's begins with -)`;
  return numeric(z.number()).transform(String).or(z.string({ error: allowed })).pipe(
    text(allowed, empty ? /^(-?\d{1,20})?$/ : /^-?\d{1,20}$/),
  );
}

/** A WeChat user id as the iLink API names people (`o9cq80…@im.wechat`), or `""` where `empty` says so. */
export function weixinId(empty: boolean) {
  const id = "[^\\s@]{1,128}@im\\.wechat";
  return text(
    `${empty ? "empty, or " : ""}a WeChat user id ending in @im.wechat`,
    new RegExp(empty ? `^(${id})?$` : `^${id}$`),
  );
}

/** A QQ number (user or group), as a string of digits. */
export const qqId = numeric(z.number()).transform(String).or(text("a QQ number (digits)", /^\d{5,12}$/)).pipe(
  text("a QQ number (digits)", /^\d{5,12}$/),
);

/** A person's name, as `daemon.api_tokens` names people. */
export const personName = text("a person's name: 1 to 64 letters, digits, _ . @ -", /^[\p{L}\p{N}_.@-]{1,64}$/u);

/** One member of the household (`people.<name>`): their trust and where they write. */
const person = z.strictObject({
  trust: z.enum(["owner", "household", "guest"], { error: '"owner", "household" or "guest"' }).default("household"),
  qq: qqId.optional(),
  weixin: weixinId(false).optional(),
  telegram: telegramId(false).optional(),
  // Their `daemon.api_tokens` name (the console, the HTTP API, the OpenAI door); default: the person's own name.
  http: personName.optional(),
});

/**
 * A list of people (`- { name: wei, trust: owner, qq: … }`) as the map `people:` is (`wei: { trust: owner, … }`): both
 * are written in the wild. A second entry of one name keeps a key the name rule refuses (`wei#2`), so it is an error
 * naming it rather than a silent overwrite.
 */
function listAsMap(value: unknown): unknown {
  if (!Array.isArray(value)) return value;
  const map: Record<string, unknown> = {};
  value.forEach((entry, index) => {
    const { name, ...rest } = (entry && typeof entry === "object" ? entry : { name: undefined }) as {
      name?: unknown;
    };
    let key = typeof name === "string" ? name : `#${index + 1} (no name)`;
    for (let n = 2; key in map; n++) key = `${name}#${n}`;
    map[key] = entry && typeof entry === "object" ? rest : entry;
  });
  return map;
}

/** `people:`: each member once, by name — a map, or a list of entries with a `name`. */
export const peopleSection = z.preprocess(listAsMap, z.record(personName, person)).default({});
