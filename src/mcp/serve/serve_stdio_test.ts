import assert from "node:assert/strict";
import type { ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { ButlerAccess } from "./homed_tools.ts";
import { LineStreamTransport, serveStdio } from "./serve_stdio.ts";

const access: ButlerAccess = {
  chat: (text) => Promise.resolve({ reply: `Heard: ${text}`, channel: "http" }),
  recall: () => Promise.resolve([]),
  searchKnowledge: () => Promise.resolve([]),
  schedules: () => Promise.resolve([{ id: "s1" }]),
};

const encoder = new TextEncoder();

/** Everything a stream carries until it ends, as text. */
async function allText(stream: ReadableStream<Uint8Array>): Promise<string> {
  let text = "";
  for await (const chunk of stream.pipeThrough(new TextDecoderStream())) text += chunk;
  return text;
}

/** `serveStdio` on a pair of in-process pipes: what the client writes, and what the server answers. */
function pipes() {
  const toServer = new TransformStream<Uint8Array, Uint8Array>();
  const fromServer = new TransformStream<Uint8Array, Uint8Array>();
  return {
    server: { input: toServer.readable, output: fromServer.writable },
    client: { input: fromServer.readable, output: toServer.writable },
  };
}

function textOf(result: Awaited<ReturnType<Client["callTool"]>>): string {
  return (result.content as Array<{ text?: string }>).map((block) => block.text ?? "").join("");
}

Deno.test("the SDK's client talks to serveStdio over in-process streams, and serving ends when the input does", async () => {
  const { server, client: ends } = pipes();
  const errors: Error[] = [];
  const serving = serveStdio(access, { version: "9.9.9", ...server, onError: (error) => errors.push(error) });
  const client = new Client({ name: "homed-test", version: "1.0.0" });
  await client.connect(new LineStreamTransport(ends.input, ends.output));
  assert.equal(client.getServerVersion()?.name, "homed");
  assert.equal((await client.listTools()).tools.length, 4);
  assert.equal(textOf(await client.callTool({ name: "chat", arguments: { text: "hello" } })), "Heard: hello");
  await client.close(); // closes our output, the server's input
  await serving;
  assert.deepEqual(errors, []);
});

Deno.test("requests already read when the input ends are still answered, then the output ends", async () => {
  const { server, client: ends } = pipes();
  const asked = Promise.withResolvers<void>();
  const gate = Promise.withResolvers<void>();
  const slow: ButlerAccess = {
    ...access,
    schedules: async () => {
      asked.resolve();
      await gate.promise;
      return [{ id: "s1" }];
    },
  };
  const serving = serveStdio(slow, { version: "9.9.9", ...server, onError: () => {} });
  let ended = false;
  void serving.then(() => (ended = true));
  const answers = allText(ends.input);
  const writer = ends.output.getWriter();
  // A script's one shot: initialize and one call, then end of input at once (as `echo … | homed mcp serve`).
  const lines = [
    {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "sh", version: "1" } },
    },
    { jsonrpc: "2.0", method: "notifications/initialized" },
    { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "schedule_list", arguments: {} } },
  ];
  await writer.write(encoder.encode(lines.map((line) => JSON.stringify(line)).join("\n")));
  await writer.close();
  await asked.promise;
  await new Promise((resolve) => setTimeout(resolve, 20)); // time for the end of input to be read
  assert.equal(ended, false, "still serving while a call is unanswered");
  gate.resolve();
  await serving;
  const replies = (await answers).trim().split("\n").map((line) => JSON.parse(line));
  assert.deepEqual(replies.map((reply) => reply.id), [1, 2]);
  assert.deepEqual(JSON.parse(replies[1].result.content[0].text), [{ id: "s1" }]);
});

Deno.test("a line that is not JSON-RPC is reported and skipped; the next one, split across reads, is served", async () => {
  const { server, client: ends } = pipes();
  const errors: string[] = [];
  const serving = serveStdio(access, { version: "9.9.9", ...server, onError: (error) => errors.push(error.message) });
  const answers = allText(ends.input);
  const writer = ends.output.getWriter();
  // The good line comes in two pieces, its end in the second.
  await writer.write(encoder.encode('hello there\r\n{"jsonrpc":"2.0","id":"p",'));
  await writer.write(encoder.encode('"method":"ping"}\r\n'));
  await writer.close();
  await serving;
  assert.deepEqual(errors, ["A line of the input is not a JSON-RPC message: hello there"]);
  assert.deepEqual(JSON.parse(await answers), { jsonrpc: "2.0", id: "p", result: {} });
});

Deno.test("a line longer than the limit ends the connection with an error naming the limit", async () => {
  const toServer = new TransformStream<Uint8Array, Uint8Array>();
  const fromServer = new TransformStream<Uint8Array, Uint8Array>();
  const transport = new LineStreamTransport(toServer.readable, fromServer.writable, { maxLineChars: 64 });
  const errors: string[] = [];
  transport.onerror = (error) => errors.push(error.message);
  const output = allText(fromServer.readable);
  await transport.start();
  const writer = toServer.writable.getWriter();
  void writer.write(encoder.encode("x".repeat(100))).catch(() => {});
  await transport.closed;
  assert.deepEqual(errors, ["A message on the input exceeds 64 characters"]);
  assert.equal(await output, "");
  await writer.abort().catch(() => {});
});

Deno.test("an aborted signal stops serving though the input stays open", async () => {
  const { server, client: ends } = pipes();
  const stop = new AbortController();
  const serving = serveStdio(access, { version: "9.9.9", ...server, signal: stop.signal });
  const output = allText(ends.input);
  stop.abort();
  await serving;
  assert.equal(await output, "");
  // The server let go of its input (cancelled it), so the client's end of that pipe is errored, not left open.
  await assert.rejects(ends.output.getWriter().write(encoder.encode("{}\n")));
});

const FIXTURE = fileURLToPath(new URL("./testdata/fake_butler_stdio.ts", import.meta.url));

Deno.test("as a child process on real stdin and stdout, it serves the SDK's client and exits when stdin ends", async () => {
  // No rights at all: the server needs none of its own (the daemon is reached by the access, here a fake).
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--quiet", "--no-prompt", FIXTURE],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const logged = allText(child.stderr);
  const client = new Client({ name: "homed-test", version: "1.0.0" });
  const errors: Error[] = [];
  client.onerror = (error) => errors.push(error);
  await client.connect(new LineStreamTransport(child.stdout, child.stdin));
  assert.equal(client.getServerVersion()?.version, "0.0.0-fixture");
  const chat = await client.callTool({ name: "chat", arguments: { text: "ping" } });
  assert.equal(textOf(chat), "Echo from a child process: ping");
  const refused = await client.callTool({ name: "memory_recall", arguments: { query: "umbrella" } });
  assert.deepEqual([refused.isError, textOf(refused)], [true, "Guests do not see the household's memory"]);
  await client.close(); // ends the child's stdin
  assert.equal((await child.status).code, 0);
  // Its log lines went to stderr; nothing but protocol reached stdout (the client met no unreadable line).
  assert.deepEqual(errors, []);
  assert.equal(await logged, "fake butler: serving MCP on stdio\nfake butler: standard input ended\n");
});

/**
 * What the SDK's `StdioClientTransport` reads of homed's environment: `OSTYPE` as its `which` loads, and the six
 * variables it passes to every child. Without the rights (`deno task test` grants a shorter list) its test is skipped.
 */
const SDK_STDIO_ENV = ["OSTYPE", "HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "NODE_V8_COVERAGE"];
const sdkStdioAllowed = SDK_STDIO_ENV.every((variable) =>
  Deno.permissions.querySync({ name: "env", variable }).state === "granted"
);

Deno.test({
  name: "the SDK's own StdioClientTransport talks to it as a child, which exits by itself when stdin ends",
  ignore: !sdkStdioAllowed,
}, async () => {
  // Loaded here, not above: loading it reads OSTYPE, which the skipped run has no right to.
  const { StdioClientTransport } = await import(
    "@modelcontextprotocol/sdk/client/stdio.js"
  ) as typeof import("@modelcontextprotocol/sdk/client/stdio");
  const transport = new StdioClientTransport({
    command: Deno.execPath(),
    args: ["run", "--quiet", "--no-prompt", FIXTURE],
    stderr: "pipe",
  });
  let logged = "";
  transport.stderr?.on("data", (chunk: Uint8Array) => (logged += new TextDecoder().decode(chunk)));
  const client = new Client({ name: "homed-test", version: "1.0.0" });
  const errors: Error[] = [];
  client.onerror = (error) => errors.push(error);
  await client.connect(transport);
  assert.equal(client.getServerVersion()?.version, "0.0.0-fixture");
  const found = await client.callTool({ name: "knowledge_search", arguments: { query: "router", k: 2 } });
  assert.deepEqual(JSON.parse(textOf(found)), [{ query: "router", k: 2 }]);

  // The transport keeps its child private. Its stdin is ended here, as a leaving client does, to see the server exit
  // on its own: close() would SIGTERM it after 2 s (and leave an unref'd timer of the SDK's behind).
  const child = (transport as unknown as { _process?: ChildProcess })._process;
  assert.ok(child?.stdin);
  const exited = new Promise<number | null>((resolve) => child.once("close", resolve));
  child.stdin.end();
  assert.equal(await exited, 0);
  await client.close();
  assert.deepEqual(errors, []);
  assert.equal(logged, "fake butler: serving MCP on stdio\nfake butler: standard input ended\n");
});
