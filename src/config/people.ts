/**
 * `people:` read across the config (issue 40): each member of the household is named once, with their addresses on
 * QQ, WeChat and Telegram and their API token's name, and is one person wherever they write.
 *
 * - {@link peopleProblems}: the rules one key's schema cannot say — one owner at most, every address one person's,
 *   no disagreement with a chat's own `owner`, a named token that exists.
 * - {@link withPeople}: the config each chat reads — a person's address joins that chat's `owner` or `allow_users`
 *   (by their trust), so the chats admit them without the owner listing them twice.
 * - {@link addressBook}: who an input's sender is — the IO layer names a listed sender by their person's name and
 *   trust, so their private conversation, profile, reminders and what they may read follow the person, not the chat.
 *   Senders nobody listed keep their chat's own name and trust.
 *
 * @module
 */

import type { Trust } from "../identity/trust.ts";
import type { Config } from "./schema.ts";

/** The chats a person has an address on. */
export const PERSON_CHATS = ["qq", "weixin", "telegram"] as const;

/** One of {@link PERSON_CHATS}. */
export type PersonChat = typeof PERSON_CHATS[number];

/** A listed person, as an input's sender resolves to them. */
export interface Person {
  name: string;
  trust: Trust;
  /** Their private chat on each chat they have an address on (`qq:private:10001`), in the order of PERSON_CHATS. */
  channels: string[];
}

/** The config key of each chat's section, for messages. */
const SECTION: Record<PersonChat, "onebot" | "weixin" | "telegram"> = {
  qq: "onebot",
  weixin: "weixin",
  telegram: "telegram",
};

/**
 * The person's name on the HTTP API: `http` when set; else their own name when `daemon.api_tokens` has it; else, for
 * the owner, `owner` (the holder of `daemon.api_token`).
 */
function httpName(config: Config, name: string): string | undefined {
  const entry = config.people[name]!;
  if (entry.http !== undefined) return entry.http;
  if (name in config.daemon.api_tokens) return name;
  return entry.trust === "owner" && config.daemon.api_token !== "" ? "owner" : undefined;
}

/**
 * Every rule of `people:` the config breaks, one line each in the `key: got …; allowed: …` form.
 *
 * @example
 * ```ts
 * import { configSchema } from "./schema.ts";
 *
 * const config = configSchema.parse({ people: { wei: { trust: "owner", qq: "10001" }, lin: { qq: "10001" } } });
 * peopleProblems(config); // ['people.lin.qq: got "10001", the address of people.wei too; allowed: …']
 * ```
 */
export function peopleProblems(config: Config): string[] {
  const problems: string[] = [];
  const owners = Object.entries(config.people).filter(([, person]) => person.trust === "owner").map(([name]) => name);
  if (owners.length > 1) {
    problems.push(
      `people: got ${owners.length} owners (${owners.join(", ")}); allowed: at most one person with trust: "owner"`,
    );
  }
  const holder = new Map<string, string>();
  for (const [name, person] of Object.entries(config.people)) {
    for (const chat of [...PERSON_CHATS, "http"] as const) {
      const address = chat === "http" ? person.http : person[chat];
      if (address === undefined) continue;
      const key = `${chat}:${address}`;
      const other = holder.get(key);
      if (other) {
        problems.push(
          `people.${name}.${chat}: got ${JSON.stringify(address)}, the address of people.${other} too; allowed: ` +
            "an address of one person only",
        );
      }
      holder.set(key, name);
    }
    if (person.http !== undefined && person.http !== "owner" && !(person.http in config.daemon.api_tokens)) {
      problems.push(
        `people.${name}.http: got ${JSON.stringify(person.http)}; allowed: a name in daemon.api_tokens ` +
          '(or "owner", the holder of daemon.api_token)',
      );
    }
    if (person.trust === "owner") problems.push(...ownerConflicts(config, name));
  }
  return problems;
}

/** The owner person's addresses against each chat's own `owner`: the same person, or one left empty. */
function ownerConflicts(config: Config, name: string): string[] {
  const person = config.people[name]!;
  const problems: string[] = [];
  for (const chat of PERSON_CHATS) {
    const address = person[chat];
    const section = config[SECTION[chat]];
    const owner = section?.owner ?? "";
    if (address !== undefined && owner !== "" && owner !== address) {
      problems.push(
        `${SECTION[chat]}.owner: got ${JSON.stringify(owner)}; allowed: empty or ${JSON.stringify(address)}, the ` +
          `owner's ${chat} address in people.${name}.${chat}`,
      );
    }
  }
  return problems;
}

/**
 * `config` with each listed person's address in their chat's allow lists: the owner's as the chat's `owner`, the
 * others' in `allow_users` (guests are not admitted to a private chat by being listed). Sections that are off stay off.
 *
 * @example
 * ```ts
 * import { configSchema } from "./schema.ts";
 *
 * const config = configSchema.parse({ people: { wei: { trust: "owner", qq: "10001" }, lin: { qq: "10002" } } });
 * withPeople(config).onebot.owner; // "10001"
 * withPeople(config).onebot.allow_users; // ["10002"]
 * ```
 */
export function withPeople(config: Config): Config {
  if (Object.keys(config.people).length === 0) return config;
  const admitted = (chat: PersonChat, trust: Trust) =>
    Object.values(config.people).flatMap((person) =>
      person.trust === trust && person[chat] !== undefined ? [person[chat]!] : []
    );
  const merge = <Section extends { owner: string; allow_users: readonly string[] }>(
    section: Section,
    chat: PersonChat,
  ): Section => ({
    ...section,
    owner: section.owner || (admitted(chat, "owner")[0] ?? ""),
    allow_users: [...new Set([...section.allow_users, ...admitted(chat, "household")])],
  });
  return {
    ...config,
    onebot: merge(config.onebot, "qq"),
    weixin: config.weixin && merge(config.weixin, "weixin"),
    telegram: config.telegram && merge(config.telegram, "telegram"),
  };
}

/** Who a sender is: by chat and address, and by API token name. */
export interface AddressBook {
  /** The person writing as `sender` on the channel `source` (`qq:private:10001`, `http`), or undefined. */
  personOf(source: string, sender: string): Person | undefined;
  /** A person by name, or undefined. */
  named(name: string): Person | undefined;
  /** The person whose private chat `channel` is (`telegram:private:777`), or undefined. */
  personAt(channel: string): Person | undefined;
}

/** Channels whose sender is an API token's name. */
const TOKEN_CHANNELS = new Set(["http", "openai", "mcp"]);

/**
 * The address book of `people:`.
 *
 * @example
 * ```ts
 * import { configSchema } from "./schema.ts";
 *
 * const config = configSchema.parse({ people: { wei: { trust: "owner", qq: "10001", telegram: "777" } } });
 * addressBook(config).personOf("telegram:private:777", "777");
 * // { name: "wei", trust: "owner", channels: ["qq:private:10001", "telegram:private:777"] }
 * ```
 */
export function addressBook(config: Config): AddressBook {
  const byAddress = new Map<string, Person>();
  const byName = new Map<string, Person>();
  for (const [name, entry] of Object.entries(config.people)) {
    const person: Person = {
      name,
      trust: entry.trust,
      channels: PERSON_CHATS.flatMap((chat) => entry[chat] === undefined ? [] : [`${chat}:private:${entry[chat]}`]),
    };
    byName.set(name, person);
    for (const chat of PERSON_CHATS) {
      if (entry[chat] !== undefined) byAddress.set(`${chat}:${entry[chat]}`, person);
    }
    const http = httpName(config, name);
    if (http !== undefined) byAddress.set(`token:${http}`, person);
  }
  return {
    personOf(source, sender) {
      if (byAddress.size === 0) return undefined;
      const chat = source.split(":", 1)[0]!;
      return byAddress.get(TOKEN_CHANNELS.has(chat) ? `token:${sender}` : `${chat}:${sender}`);
    },
    named: (name) => byName.get(name),
    personAt: (channel) => [...byName.values()].find((person) => person.channels.includes(channel)),
  };
}
