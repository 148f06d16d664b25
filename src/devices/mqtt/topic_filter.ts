/**
 * MQTT 3.1.1 topic names and topic filters (OASIS MQTT 3.1.1 §4.7): checking them, and matching a name against a
 * filter as a broker does. `+` matches exactly one level (an empty one too), `#` matches any number of levels — none
 * included, so `home/#` matches `home` — and may only be the last level; a filter beginning with a wildcard does not
 * match a name beginning with `$` (`$SYS/…`), which only a filter spelling the `$` level out matches.
 *
 * homed matches its own `smart_home.mqtt.publish` patterns here before it publishes; the `subscribe` patterns are
 * matched by the broker, and only checked here, so a typo is named when the config loads rather than refused by the
 * broker later.
 *
 * @module
 */

/** Longest topic name or filter, in bytes of UTF-8 (the length field of MQTT strings is 16 bits). */
export const MAX_TOPIC_BYTES = 65_535;

const encoder = new TextEncoder();

/** Why `text` is not a usable MQTT string (empty, NUL, too long), or `undefined`; shared by names and filters. */
function stringProblem(text: string, what: string): string | undefined {
  if (text === "") return `${what} is empty; MQTT needs at least one character`;
  if (text.includes("\u0000")) return `${what} contains the NUL character (U+0000), which MQTT forbids`;
  // Lone surrogates cannot be encoded as UTF-8: the broker would see U+FFFD instead of what was written.
  if (!text.isWellFormed()) return `${what} contains a lone UTF-16 surrogate, which is not valid UTF-8`;
  // A cheap bound first: a string of n UTF-16 code units is at most 3n bytes of UTF-8.
  if (text.length * 3 > MAX_TOPIC_BYTES) {
    const bytes = encoder.encode(text).length;
    if (bytes > MAX_TOPIC_BYTES) return `${what} is ${bytes} bytes of UTF-8; MQTT allows at most ${MAX_TOPIC_BYTES}`;
  }
  return undefined;
}

/**
 * Why `filter` is not a valid MQTT 3.1.1 topic filter, or `undefined` when it is.
 *
 * @example
 * ```ts
 * filterProblem("home/+/motion"); // undefined
 * filterProblem("home/#/motion"); // "… '#' must be the last level …"
 * ```
 */
export function filterProblem(filter: string): string | undefined {
  const shown = JSON.stringify(filter.length > 200 ? `${filter.slice(0, 200)}…` : filter);
  const basic = stringProblem(filter, `the topic filter ${shown}`);
  if (basic) return basic;
  const levels = filter.split("/");
  for (const [index, level] of levels.entries()) {
    if (level.includes("#") && (level !== "#" || index !== levels.length - 1)) {
      return `the topic filter ${shown} is invalid: '#' must be the last level, alone (as in "home/#")`;
    }
    if (level.includes("+") && level !== "+") {
      return `the topic filter ${shown} is invalid: '+' must be a whole level (as in "home/+/motion")`;
    }
  }
  return undefined;
}

/**
 * Why `topic` is not a topic name a client may publish to, or `undefined` when it is: no wildcards, no NUL, at most
 * {@link MAX_TOPIC_BYTES} bytes.
 *
 * @example
 * ```ts
 * topicProblem("home/kitchen/set"); // undefined
 * topicProblem("home/+/set"); // "… has a wildcard …"
 * ```
 */
export function topicProblem(topic: string): string | undefined {
  const shown = JSON.stringify(topic.length > 200 ? `${topic.slice(0, 200)}…` : topic);
  const basic = stringProblem(topic, `the topic ${shown}`);
  if (basic) return basic;
  if (topic.includes("+") || topic.includes("#")) {
    return `the topic ${shown} has a wildcard ('+' or '#'); a message is published to one exact topic`;
  }
  return undefined;
}

/**
 * Throws a TypeError naming `setting` unless `filter` is a valid topic filter.
 *
 * @example
 * ```ts
 * validateTopicFilter("home/+/motion", "smart_home.mqtt.subscribe[0]"); // passes
 * try {
 *   validateTopicFilter("home/motion#", "smart_home.mqtt.subscribe[1]");
 * } catch (error) {
 *   (error as TypeError).message; // 'smart_home.mqtt.subscribe[1]: the topic filter "home/motion#" is invalid: …'
 * }
 * ```
 */
export function validateTopicFilter(filter: string, setting: string): void {
  const problem = filterProblem(filter);
  if (problem) throw new TypeError(`${setting}: ${problem}`);
}

/**
 * Throws a TypeError naming `setting` unless `topic` is a topic name one may publish to.
 *
 * @example
 * ```ts
 * validateTopicName("home/kitchen/set", "topic"); // passes
 * try {
 *   validateTopicName("home/#", "topic");
 * } catch (error) {
 *   (error as TypeError).message; // 'topic: the topic "home/#" has a wildcard …'
 * }
 * ```
 */
export function validateTopicName(topic: string, setting: string): void {
  const problem = topicProblem(topic);
  if (problem) throw new TypeError(`${setting}: ${problem}`);
}

/**
 * Whether the topic name `topic` matches the topic filter `filter`, as a broker decides which subscribers get a
 * message. Both are taken as valid (see {@link validateTopicFilter}); an invalid filter matches nothing.
 *
 * @example
 * ```ts
 * topicMatches("sport/tennis/player1/#", "sport/tennis/player1"); // true
 * topicMatches("sport/+", "sport"); // false
 * topicMatches("+/monitor/Clients", "$SYS/monitor/Clients"); // false
 * ```
 */
export function topicMatches(filter: string, topic: string): boolean {
  // §4.7.2: names starting with '$' are the server's; a leading wildcard must not reach into them.
  if (topic.startsWith("$") && (filter.startsWith("+") || filter.startsWith("#"))) return false;
  const wanted = filter.split("/");
  const levels = topic.split("/");
  for (const [index, level] of wanted.entries()) {
    if (level === "#") return index === wanted.length - 1;
    if (index >= levels.length) return false;
    if (level !== "+" && level !== levels[index]) return false;
  }
  return wanted.length === levels.length;
}

/**
 * A fixed list of filters, checked once, that says whether a topic matches any of them — `smart_home.mqtt.publish`.
 *
 * @example
 * ```ts
 * const allowed = new TopicFilters(["home/+/set", "lights/#"], "smart_home.mqtt.publish");
 * allowed.matches("home/kitchen/set"); // true
 * allowed.matches("home/kitchen/state"); // false
 * allowed.describe(); // '"home/+/set", "lights/#"'
 * ```
 */
export class TopicFilters {
  readonly filters: readonly string[];

  /** Throws a TypeError naming `setting[index]` for the first invalid filter. */
  constructor(filters: readonly string[], setting: string) {
    for (const [index, filter] of filters.entries()) validateTopicFilter(filter, `${setting}[${index}]`);
    this.filters = Object.freeze([...filters]);
  }

  /** Whether `topic` matches one of the filters. */
  matches(topic: string): boolean {
    return this.filters.some((filter) => topicMatches(filter, topic));
  }

  /** The filters quoted and joined, for messages; `none` when there are none. */
  describe(): string {
    return this.filters.map((filter) => JSON.stringify(filter)).join(", ") || "none";
  }

  /** How many filters there are. */
  get size(): number {
    return this.filters.length;
  }
}
