/**
 * Questions on the terminal for `homed init`: a line read as typed, or — for a secret — read with echo off, so a key
 * never shows on screen or in a terminal recording. When standard input is not a terminal, answers are read line by
 * line from it (scripted set-up), and nothing is echoed either.
 *
 * @module
 */

import { textLines } from "../text/text_lines.ts";
import type { Ask } from "./init_answers.ts";

const encoder = new TextEncoder();

/** Reads one line from a raw-mode terminal without echo; Ctrl-C exits with 130, Ctrl-D ends input. */
async function readHidden(): Promise<string | undefined> {
  Deno.stdin.setRaw(true);
  const chars: string[] = [];
  const buffer = new Uint8Array(64);
  try {
    for (;;) {
      const count = await Deno.stdin.read(buffer);
      if (count === null) return chars.length ? chars.join("") : undefined;
      for (const char of new TextDecoder().decode(buffer.subarray(0, count))) {
        if (char === "\r" || char === "\n") return chars.join("");
        if (char === "\u0003") {
          Deno.stdin.setRaw(false);
          Deno.stderr.writeSync(encoder.encode("\n"));
          Deno.exit(130);
        }
        if (char === "\u0004") return chars.length ? chars.join("") : undefined;
        if (char === "\u007f" || char === "\b") chars.pop();
        else if (char >= " ") chars.push(char);
      }
    }
  } finally {
    Deno.stdin.setRaw(false);
    Deno.stderr.writeSync(encoder.encode("\n"));
  }
}

/** Reads one line from a terminal in its usual (cooked) mode, without a stream that would read ahead. */
async function readTyped(): Promise<string | undefined> {
  const buffer = new Uint8Array(1024);
  let text = "";
  for (;;) {
    const count = await Deno.stdin.read(buffer);
    if (count === null) return text || undefined;
    text += new TextDecoder().decode(buffer.subarray(0, count));
    if (text.includes("\n")) return text.slice(0, text.indexOf("\n")).replace(/\r$/, "");
  }
}

/**
 * An {@link Ask} on this process's standard input; questions go to standard error, so stdout stays the report.
 *
 * @example
 * ```ts
 * const { ask, interactive } = terminalAsk();
 * await ask("Model [qwen3:8b]: ", {});
 * ```
 */
export function terminalAsk(): { ask: Ask; interactive: boolean } {
  const interactive = Deno.stdin.isTerminal();
  let lines: AsyncGenerator<string> | undefined;
  const ask: Ask = async (question, options) => {
    Deno.stderr.writeSync(encoder.encode(question));
    if (interactive) return options.secret ? await readHidden() : await readTyped();
    lines ??= textLines(Deno.stdin.readable);
    const next = await lines.next();
    Deno.stderr.writeSync(encoder.encode("\n"));
    return next.done ? undefined : next.value;
  };
  return { ask, interactive };
}
