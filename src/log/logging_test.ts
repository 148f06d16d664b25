import assert from "node:assert/strict";
import { log, setupLogging, stopLogging } from "./logging.ts";
import { redactProperties, secretMasker } from "./redact.ts";
import { RecentLines } from "./recent_lines.ts";

Deno.test("secret values are masked anywhere in a line; short values are left alone", () => {
  const mask = secretMasker(["sk-live-123456", "abc"]);
  assert.equal(mask("key=sk-live-123456 and sk-live-123456"), "key=[REDACTED] and [REDACTED]");
  assert.equal(mask("abc stays"), "abc stays");
});

Deno.test("properties with secret-looking names are masked at any depth", () => {
  assert.deepEqual(redactProperties({ api_key: "x", nested: { Authorization: "Bearer t", token: "" }, n: 1 }), {
    api_key: "[REDACTED]",
    nested: { Authorization: "[REDACTED]", token: "" },
    n: 1,
  });
});

Deno.test("log lines honour the level, the format and redaction", () => {
  const lines: string[] = [];
  setupLogging({ level: "info", format: "json", secrets: ["sk-secret-999"], write: (line) => lines.push(line) });
  try {
    log("llm").debug("hidden");
    log("llm").info("Calling with {key} for {model}", { key: "sk-secret-999", model: "m", api_key: "sk-secret-999" });
    log("llm").warning("Raw sk-secret-999 in text");
  } finally {
    stopLogging();
  }
  assert.equal(lines.length, 2);
  const first = JSON.parse(lines[0]!);
  assert.equal(first.level, "info");
  assert.equal(first.logger, "homed.llm");
  assert.equal(first.message, "Calling with [REDACTED] for m");
  assert.equal(first.api_key, "[REDACTED]");
  assert.ok(!lines.join("").includes("sk-secret-999"));

  const text: string[] = [];
  setupLogging({ level: "debug", format: "text", secrets: [], write: (line) => text.push(line) });
  try {
    log("agent").debug("Turn {id} took {ms} ms", { id: "e1", ms: 5, extra: true });
  } finally {
    stopLogging();
  }
  assert.match(text[0]!, /^\d{4}-\d\d-\d\dT.*Z \[DBG\] homed\.agent: Turn e1 took 5 ms \{"extra":true\}\n$/);
});

Deno.test("values with control characters cannot clear the terminal or forge a log line", () => {
  const lines: string[] = [];
  const hostile = "Cola wings\u001b[2J\n2026-11-30T00:00:00.000Z [ERR] homed: forged\u009b31m";
  for (const format of ["text", "json"] as const) {
    setupLogging({ level: "info", format, secrets: [], write: (line) => lines.push(line) });
    try {
      log("knowledge").info("Learned {heading} in {topic}", { heading: hostile, topic: "cooking" });
    } finally {
      stopLogging();
    }
  }
  for (const line of lines) {
    assert.equal(line.split("\n").length, 2, `one line each: ${JSON.stringify(line)}`);
    const controls = [...line.slice(0, -1)].filter((char) => char < " " || (char >= "\u007f" && char <= "\u009f"));
    assert.deepEqual(controls, [], "no raw control character");
  }
  assert.ok(
    lines[0]!.endsWith(
      "Learned Cola wings\\u001b[2J\\n2026-11-30T00:00:00.000Z [ERR] homed: forged\\u009b31m in cooking\n",
    ),
    lines[0],
  );
  assert.equal(JSON.parse(lines[1]!).heading, hostile, "JSON keeps the value, escaped");
});

Deno.test("recent lines: the log's records kept masked and one line each, newest last, at most the capacity", () => {
  const recent = new RecentLines(3);
  setupLogging({ level: "info", format: "json", secrets: ["sk-secret-0123456789"], write: () => {}, recent });
  try {
    const logger = log("api");
    logger.info("Key {key} used", { key: "sk-secret-0123456789" });
    logger.warning("Line one\nforged line");
    logger.debug("Below the level: not kept");
    logger.error("Three");
    logger.error("Four");
  } finally {
    stopLogging();
  }
  const lines = recent.newest(10);
  assert.equal(lines.length, 3);
  assert.deepEqual(lines.map((line) => line.level), ["warning", "error", "error"]);
  assert.equal(lines[0]!.category, "homed.api");
  assert.ok(!lines[0]!.message.includes("\n"), lines[0]!.message);
  assert.deepEqual(recent.newest(1).map((line) => line.message), ["Four"]);
});

Deno.test("recent lines: a secret never kept; a bad capacity named", () => {
  const recent = new RecentLines(5);
  setupLogging({ level: "info", format: "text", secrets: ["sk-secret-0123456789"], write: () => {}, recent });
  try {
    log().info("Key {key} used", { key: "sk-secret-0123456789" });
  } finally {
    stopLogging();
  }
  assert.ok(!recent.newest(5)[0]!.message.includes("sk-secret-0123456789"), recent.newest(5)[0]!.message);
  assert.throws(() => new RecentLines(0), /capacity must be at least 1, not 0/);
});
