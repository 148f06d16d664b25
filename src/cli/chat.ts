/**
 * `homed chat`: terminal chat with a running daemon, the reply streamed as it is produced.
 *
 * @module
 */

import { connectHost } from "../config/listen_addr.ts";
import { readSse } from "../net/sse.ts";
import { textLines } from "../text/text_lines.ts";
import type { CommandLine } from "./command_line.ts";
import { loadCommandConfig } from "./command_config.ts";
import { taskCommand } from "./commands.ts";
import { print } from "./output.ts";
import { checkRights } from "./rights_check.ts";

/** Options of {@link runChat}. */
export interface ChatOptions {
  /** Base URL of the daemon, e.g. `http://127.0.0.1:8080`. */
  url: string;
  /** `daemon.api_token`, empty for none. */
  token: string;
  user: string;
  /** One message and exit, instead of a conversation on stdin. */
  message?: string | undefined;
  input: ReadableStream<Uint8Array>;
  write: (text: string) => void;
  /** Whether to print the `you>` prompt (a terminal). */
  interactive: boolean;
}

/** What `/help` prints. */
export const CHAT_HELP = [
  "Type a message and press Enter; the butler's reply streams in as it is written.",
  "  /help   this help",
  "  /quit   leave (also /exit or Ctrl-D)",
  "Everything else is sent as a message, as the user named by --user (default: owner).",
  "",
].join("\n");

/** Sends one message and prints the streamed reply; returns false when the turn failed. */
async function say(options: ChatOptions, text: string): Promise<boolean> {
  let response: Response;
  try {
    response = await fetch(`${options.url}/api/chat/stream`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
      },
      body: JSON.stringify({ text, user: options.user }),
    });
  } catch (error) {
    options.write(
      `homed chat: cannot reach homed at ${options.url} (${(error as Error).message}); is it running? Start it with: ${
        taskCommand("start")
      }\n`,
    );
    return false;
  }
  if (!response.ok || !response.body) {
    const body = await response.text();
    let message = body;
    try {
      message = JSON.parse(body).error?.message ?? body;
    } catch { /* not JSON: show as is */ }
    options.write(`homed chat: HTTP ${response.status}: ${message}\n`);
    return false;
  }
  let ok = false;
  for await (const event of readSse(response.body)) {
    const data = JSON.parse(event.data);
    if (event.event === "delta") options.write(data.text);
    else if (event.event === "tool") {
      options.write(options.interactive ? `\n  [tool ${data.name}${data.ok ? "" : " failed"}]\n` : "");
    } else if (event.event === "done") {
      options.write("\n");
      ok = true;
    } else if (event.event === "error") options.write(`\nhomed: ${data.message}\n`);
  }
  return ok;
}

/**
 * Runs the chat; returns the process exit code.
 *
 * @example
 * ```ts
 * Deno.exit(await runChat({ url: "http://127.0.0.1:8080", token: "", user: "owner", input: Deno.stdin.readable,
 *   write: (t) => Deno.stdout.writeSync(new TextEncoder().encode(t)), interactive: true }));
 * ```
 */
export async function runChat(options: ChatOptions): Promise<number> {
  if (options.message !== undefined) return (await say(options, options.message)) ? 0 : 1;
  if (options.interactive) {
    options.write(`Connected to ${options.url}. Type a message; /help for help, /quit or Ctrl-D to leave.\nyou> `);
  }
  // Reminders and other messages for the http channel arrive here while the conversation goes on.
  const listening = new AbortController();
  const events = printEvents(options, listening.signal);
  try {
    return await converse(options);
  } finally {
    listening.abort();
    await events;
  }
}

/**
 * Prints what `GET /api/events` pushes (a reminder, `output_send` to http) as it arrives, until `signal` aborts. A
 * daemon without the endpoint, or a guest's token, just means nothing is pushed.
 */
async function printEvents(options: ChatOptions, signal: AbortSignal): Promise<void> {
  try {
    const response = await fetch(`${options.url}/api/events`, {
      headers: options.token ? { authorization: `Bearer ${options.token}` } : {},
      signal,
    });
    if (!response.ok || !response.body) {
      await response.body?.cancel();
      return;
    }
    for await (const event of readSse(response.body)) {
      if (event.event !== "message") continue;
      let text = event.data;
      try {
        const body = JSON.parse(event.data) as { text?: unknown; channel?: unknown };
        if (typeof body.text === "string") text = body.text;
      } catch { /* shown as sent */ }
      options.write(`\n[homed] ${text}\n${options.interactive ? "you> " : ""}`);
    }
  } catch {
    // Aborted at exit, or the daemon went away: the conversation reports that itself.
  }
}

async function converse(options: ChatOptions): Promise<number> {
  let failures = 0;
  for await (const line of textLines(options.input)) {
    const command = line.trim().toLowerCase();
    if (command === "/quit" || command === "/exit") break;
    if (command === "/help") options.write(CHAT_HELP);
    else if (line.trim() !== "") {
      if (!(await say(options, line))) failures++;
    }
    if (options.interactive) options.write("you> ");
  }
  if (options.interactive) options.write("\n");
  return failures ? 1 : 0;
}

/**
 * `homed chat`: talks to the daemon of this config (or `--url`, then without the rights check), as `--user`, one
 * `--message` or a conversation on stdin; exits with {@link runChat}'s code.
 *
 * @example
 * ```ts
 * import { parseCommandLine } from "./command_line.ts";
 *
 * await chatCli(parseCommandLine(["chat", "--message", "What is on today?"]));
 * ```
 */
export async function chatCli(line: CommandLine): Promise<void> {
  const { options } = line;
  const { loaded, denied } = await loadCommandConfig(options.config, line.layout);
  if (!options.url) checkRights(loaded, "chat", denied);
  const listen = loaded.config.daemon.listen_addr;
  const code = await runChat({
    url: options.url ?? `http://${connectHost(listen)}:${listen.port}`,
    token: loaded.config.daemon.api_token,
    user: options.user ?? "owner",
    message: options.message,
    input: Deno.stdin.readable,
    write: print,
    interactive: Deno.stdin.isTerminal(),
  });
  return Deno.exit(code);
}
