/**
 * `smart_home.home_assistant` as the device applies it. The settings are checked once, when the device is made (a
 * domain or pattern HA could never match is a `TypeError` naming the setting, so a typo fails at start rather than
 * silently allowing or watching nothing), and read from then on as {@link HaRules}: which domains may be called,
 * which calls wait for the owner's yes, and which entities' changes are recorded or start a turn.
 *
 * @module
 */

/** `smart_home.home_assistant`, as the device takes it. */
export interface HomeAssistantSettings {
  /** HA's base URL, e.g. `http://homeassistant.local:8123`. */
  url: string;
  /** A long-lived access token (never logged). */
  token: string;
  /** Domains whose services the butler may call (`light`, `switch`…). */
  domains: string[];
  /** Domains (`lock`) or entity ids and globs (`cover.garage`) whose services run only on the owner's yes. */
  confirm: string[];
  /** Entity ids or globs (`binary_sensor.*door*`) whose state changes become device events. */
  subscribe: string[];
  /**
   * Entity ids or globs whose state changes are *messages* to the butler (a turn starts, answered where
   * `io.routes` sends `ha:<entity>` — the owner's QQ, say): the rules a household wants acted on ("the front door
   * opened"). Empty by default: changes are only recorded.
   */
  turns?: string[];
}

const DOMAIN = /^[a-z0-9_]+$/;
const ENTITY_PATTERN = /^[a-z0-9_*?]+\.[a-z0-9_*?]+$/;

/**
 * A matcher for entity ids and globs (`*` any run of characters, `?` one).
 *
 * @example
 * ```ts
 * const door = entityMatcher(["binary_sensor.*door*", "lock.front"]);
 * door("binary_sensor.back_door_contact"); // true
 * door("binary_sensor.motion"); // false
 * ```
 */
export function entityMatcher(patterns: readonly string[]): (entityId: string) => boolean {
  const exact = new Set(patterns.filter((pattern) => !/[*?]/.test(pattern)));
  const globs = patterns.filter((pattern) => /[*?]/.test(pattern)).map((pattern) =>
    new RegExp(`^${pattern.replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*").replace(/\?/g, ".")}$`)
  );
  return (entityId) => exact.has(entityId) || globs.some((glob) => glob.test(entityId));
}

/** The settings, checked, as the rules the device and its tools go by. */
export class HaRules {
  /** Domains whose services may be called: `domains` and the `confirm` domains. */
  readonly allowedDomains: ReadonlySet<string>;
  /** Whether an entity's state changes become `ha.state` events (`subscribe`). */
  readonly subscribed: (entityId: string) => boolean;
  /** Whether an entity's state changes are messages to the butler (`turns`). */
  readonly turns: (entityId: string) => boolean;
  readonly #settings: HomeAssistantSettings;
  readonly #confirmDomains: ReadonlySet<string>;
  readonly #confirmEntity: (entityId: string) => boolean;

  /**
   * Checks `settings`; throws a `TypeError` naming the setting and the entry HA could never match.
   *
   * @example
   * ```ts
   * const rules = new HaRules({
   *   url: "http://homeassistant.local:8123",
   *   token: "",
   *   domains: ["light"],
   *   confirm: ["lock", "cover.garage"],
   *   subscribe: ["binary_sensor.*door*"],
   * });
   * rules.sensitive("lock", "lock.front_door"); // true
   * rules.domainList(); // "light; only with the owner's yes: lock, cover.garage"
   * ```
   */
  constructor(settings: HomeAssistantSettings) {
    this.#settings = settings;
    for (const domain of settings.domains) {
      if (!DOMAIN.test(domain)) {
        throw new TypeError(
          `smart_home.home_assistant.domains: ${JSON.stringify(domain)} is not a Home Assistant domain ` +
            `(lower-case letters, digits and _, such as light or media_player)`,
        );
      }
    }
    for (const entry of settings.confirm) {
      if (!DOMAIN.test(entry) && !ENTITY_PATTERN.test(entry)) {
        throw new TypeError(
          `smart_home.home_assistant.confirm: ${JSON.stringify(entry)} is neither a domain (lock) nor an entity id ` +
            `or glob (cover.garage, cover.*garage*)`,
        );
      }
    }
    for (const entry of settings.subscribe) {
      if (!ENTITY_PATTERN.test(entry)) {
        throw new TypeError(
          `smart_home.home_assistant.subscribe: ${JSON.stringify(entry)} is not an entity id or glob ` +
            `(binary_sensor.front_door, binary_sensor.*door*)`,
        );
      }
    }
    this.#confirmDomains = new Set(settings.confirm.filter((entry) => DOMAIN.test(entry)));
    this.#confirmEntity = entityMatcher(settings.confirm.filter((entry) => !DOMAIN.test(entry)));
    // A confirm domain is callable, on the owner's yes: `confirm: [lock]` would mean nothing otherwise.
    this.allowedDomains = new Set([...settings.domains, ...this.#confirmDomains]);
    this.subscribed = entityMatcher(settings.subscribe);
    this.turns = entityMatcher(settings.turns ?? []);
  }

  /** Whether a service on `entityId` in `domain` waits for the owner's yes (a `confirm` domain or entity). */
  sensitive(domain: string, entityId: string): boolean {
    return this.#confirmDomains.has(domain) || this.#confirmEntity(entityId);
  }

  /** The callable domains as the tools and the refusals name them. */
  domainList(): string {
    const plain = this.#settings.domains.join(", ") || "none";
    const confirm = this.#settings.confirm.length
      ? `; only with the owner's yes: ${this.#settings.confirm.join(", ")}`
      : "";
    return `${plain}${confirm}`;
  }

  /**
   * Why Home Assistant is out of reach, given the connection's last error: an empty token comes first, since no
   * attempt can succeed without one.
   */
  problem(lastError: string | null): string | null {
    return this.#settings.token.trim() === "" ? "smart_home.home_assistant.token is empty" : lastError;
  }

  /** {@link HaRules.problem} as the tools add it to a sentence: ` (why)`, or nothing when there is no why. */
  whyNot(lastError: string | null): string {
    const why = this.problem(lastError);
    return why ? ` (${why})` : "";
  }
}
