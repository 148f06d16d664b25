/**
 * The one error a bad config raises: it lists every problem, each naming the key, the value and what is allowed.
 *
 * @module
 */

/** Thrown when a config cannot be used. `problems` holds one line per bad key. */
export class ConfigError extends Error {
  /** One sentence per problem, each naming the key. */
  readonly problems: readonly string[];

  /**
   * @example
   * ```ts
   * const error = new ConfigError("config/homed.yaml", ["llm.temperature: got 3; allowed: a number from 0 to 2"]);
   * error.message; // "Invalid config (config/homed.yaml):\n  - llm.temperature: got 3; allowed: a number from 0 to 2"
   * error.problems; // ["llm.temperature: got 3; allowed: a number from 0 to 2"]
   * ```
   */
  constructor(source: string, problems: readonly string[]) {
    super(`Invalid config (${source}):\n${problems.map((line) => `  - ${line}`).join("\n")}`);
    this.name = "ConfigError";
    this.problems = problems;
  }
}
