/**
 * LogTape set-up for homed: one sink to stderr, text or JSON lines, level from config, secrets masked.
 *
 * @module
 */

import { configureSync, getLogger, type Logger, type LogLevel, type LogRecord, resetSync } from "@logtape/logtape";
import { escapeControl } from "../text/untrusted.ts";
import { redactProperties, secretMasker } from "./redact.ts";
import type { RecentLine, RecentLines } from "./recent_lines.ts";

/** Options of {@link setupLogging}. */
export interface LoggingOptions {
  level: LogLevel;
  format: "text" | "json";
  /** Secret values to mask wherever they appear. */
  secrets: readonly string[];
  /** Where lines go; stderr by default. */
  write?: (line: string) => void;
  /** Also keeps the newest lines here (masked like the log), for `GET /api/logs`. */
  recent?: RecentLines;
}

const LEVEL_TAG: Record<LogLevel, string> = {
  trace: "TRC",
  debug: "DBG",
  info: "INF",
  warning: "WRN",
  error: "ERR",
  fatal: "FTL",
};

function renderMessage(record: LogRecord): string {
  return record.message.map((part, index) =>
    index % 2 === 0 ? String(part) : typeof part === "string" ? part : JSON.stringify(redactProperties(part))
  ).join("");
}

/**
 * Formats one record as a single line; exported for tests.
 *
 * @example
 * ```ts
 * const record = {
 *   category: ["homed", "api"],
 *   level: "info",
 *   message: ["Listening on ", "http://127.0.0.1:8080", ""],
 *   rawMessage: "Listening on {url}",
 *   properties: { url: "http://127.0.0.1:8080" },
 *   timestamp: 0,
 * } as const;
 * formatRecord(record, "text", (s) => s);
 * // "1970-01-01T00:00:00.000Z [INF] homed.api: Listening on http://127.0.0.1:8080"
 * formatRecord(record, "json", (s) => s);
 * // '{"time":"1970-01-01T00:00:00.000Z","level":"info","logger":"homed.api","message":"Listening on …","url":"…"}'
 * ```
 */
export function formatRecord(record: LogRecord, format: "text" | "json", mask: (text: string) => string): string {
  const properties = redactProperties(record.properties) as Record<string, unknown>;
  if (format === "json") {
    // JSON escapes C0 controls itself; C1 (0x80–0x9f, e.g. the one-byte CSI) would still reach a terminal raw.
    return mask(
      JSON.stringify({
        time: new Date(record.timestamp).toISOString(),
        level: record.level,
        logger: record.category.join("."),
        message: renderMessage(record),
        ...properties,
      }).replace(/[\u007f-\u009f]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`),
    );
  }
  const raw = typeof record.rawMessage === "string" ? record.rawMessage : record.rawMessage.join("");
  const unmentioned = Object.fromEntries(Object.entries(properties).filter(([key]) => !raw.includes(`{${key}}`)));
  const extra = Object.keys(unmentioned).length ? ` ${JSON.stringify(unmentioned)}` : "";
  // One record is one line: values (model output, message text, file names) cannot clear the screen or forge lines.
  return mask(
    `${new Date(record.timestamp).toISOString()} [${LEVEL_TAG[record.level]}] ${record.category.join(".")}: ${
      escapeControl(`${renderMessage(record)}${extra}`)
    }`,
  );
}

/**
 * Configures logging for the process; call once at start-up, and {@link stopLogging} at exit.
 *
 * @example
 * ```ts
 * setupLogging({ level: "info", format: "text", secrets: [Deno.env.get("DEEPSEEK_API_KEY") ?? ""] });
 * log("agent").info("Turn done in {ms} ms", { ms: 12 });
 * ```
 */
export function setupLogging(options: LoggingOptions): void {
  const mask = secretMasker(options.secrets);
  const encoder = new TextEncoder();
  const write = options.write ?? ((line: string) => {
    try {
      Deno.stderr.writeSync(encoder.encode(line));
    } catch {
      // stderr closed: nothing else to tell.
    }
  });
  configureSync({
    reset: true,
    sinks: {
      main: (record: LogRecord) => {
        const line = formatRecord(record, options.format, mask);
        write(`${line}\n`);
        // The console's copy is the text line: the one just written when the log is text, made once more for JSON.
        if (options.recent) {
          options.recent.add(recentLine(record, options.format === "text" ? line : formatRecord(record, "text", mask)));
        }
      },
    },
    loggers: [
      { category: ["homed"], lowestLevel: options.level, sinks: ["main"] },
      { category: ["logtape", "meta"], lowestLevel: "warning", sinks: ["main"] },
    ],
  });
}

/** A record as the console shows it: the text line's message part, masked and on one line. */
function recentLine(record: LogRecord, line: string): RecentLine {
  const prefix = `${new Date(record.timestamp).toISOString()} [${LEVEL_TAG[record.level]}] ${
    record.category.join(".")
  }: `;
  return {
    time: new Date(record.timestamp).toISOString(),
    level: record.level,
    category: record.category.join("."),
    message: line.startsWith(prefix) ? line.slice(prefix.length) : line,
  };
}

/** Flushes and detaches the sinks. */
export function stopLogging(): void {
  resetSync();
}

/**
 * A logger under the `homed` category.
 *
 * @example
 * ```ts
 * log("api").warning("Rejected {path}", { path: "/api/chat" });
 * ```
 */
export function log(...category: string[]): Logger {
  return getLogger(["homed", ...category]);
}
