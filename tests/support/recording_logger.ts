/**
 * A logger for tests that keeps every line it is given, at any level, as text: the message and its properties as
 * JSON — so a test can assert what was logged (once, naming the setting) and what never was (a secret).
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";

/**
 * A logger whose lines go to `lines` (children and `with` log there too).
 *
 * @example
 * ```ts
 * const lines: string[] = [];
 * recordingLogger(lines).warning("Telegram: {error}", { error: "401" });
 * lines; // ['Telegram: {error} {"error":"401"}']
 * ```
 */
export function recordingLogger(lines: string[]): Logger {
  const keep = (message: unknown, properties?: Record<string, unknown>) =>
    lines.push(`${String(message)} ${JSON.stringify(properties ?? {})}`);
  const logger: Logger = new Proxy({} as Logger, {
    get: (_target, key) => {
      if (key === "getChild" || key === "with") return () => logger;
      if (key === "isEnabledFor") return () => true;
      return keep;
    },
  });
  return logger;
}
