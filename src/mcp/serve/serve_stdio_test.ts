import assert from "node:assert/strict";
import type { ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import { McpError } from "@modelcontextprotocol/sdk/types.js";
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

Deno.test("a line that is not JSON is answered -32700 and reported; the next one, split across reads, is served", async () => {
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
  assert.deepEqual(errors, ["A line of the input is not JSON: hello there"]);
  const [refusal, pong] = (await answers).trim().split("\n").map((line) => JSON.parse(line));
  assert.equal(refusal.id, null);
  assert.equal(refusal.error.code, -32700);
  assert.match(refusal.error.message, /^Parse error: the line is not JSON \(.+\): hello there$/);
  assert.deepEqual(pong, { jsonrpc: "2.0", id: "p", result: {} });
});

Deno.test("a line of JSON that is not a JSON-RPC message is answered -32600 (Invalid Request) naming it", async () => {
  const { server, client: ends } = pipes();
  const errors: string[] = [];
  const serving = serveStdio(access, { version: "9.9.9", ...server, onError: (error) => errors.push(error.message) });
  const answers = allText(ends.input);
  const writer = ends.output.getWriter();
  const lines = [
    '{"foo":1}',
    "[]",
    "42",
    '{"jsonrpc":"2.0","id":3,"method":7}',
    '{"jsonrpc":"2.0","id":4,"method":"ping"}',
  ];
  await writer.write(encoder.encode(lines.join("\n") + "\n"));
  await writer.close();
  await serving;
  const replies = (await answers).trim().split("\n").map((line) => JSON.parse(line));
  assert.deepEqual(replies.map((reply) => [reply.id, reply.error?.code ?? "ok"]), [
    [null, -32600],
    [null, -32600],
    [null, -32600],
    [3, -32600],
    [4, "ok"],
  ]);
  assert.match(replies[0].error.message, /^Invalid Request: .*\{"foo":1\}/);
  assert.match(replies[1].error.message, /^Invalid Request: .*\[\]/);
  assert.match(replies[2].error.message, /^Invalid Request: .*42/);
  assert.match(replies[3].error.message, /^Invalid Request: .*"method":7/);
  assert.equal(errors.length, 4);
});

Deno.test("over stdio an unknown tool and a tools/list cursor are JSON-RPC errors -32602 naming them", async () => {
  const { server, client: ends } = pipes();
  const serving = serveStdio(access, { version: "9.9.9", ...server });
  const client = new Client({ name: "homed-test", version: "1.0.0" });
  await client.connect(new LineStreamTransport(ends.input, ends.output));
  const isRpcError = (code: number, message: RegExp) => (error: unknown) => {
    assert.ok(error instanceof McpError, `an McpError, not ${error}`);
    assert.equal(error.code, code);
    assert.match(error.message, message);
    return true;
  };
  await assert.rejects(
    client.callTool({ name: "open_garage", arguments: {} }),
    isRpcError(-32602, /Unknown tool: open_garage/),
  );
  await assert.rejects(client.listTools({ cursor: "abc" }), isRpcError(-32602, /cursor "abc"/));
  assert.equal((await client.listTools()).tools.length, 4);
  await client.close();
  await serving;
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

Deno.test("over stdio a chat longer than answerWithinMs is answered in time, the rest by turn_id; the end stops a turn", async () => {
  const { server, client: ends } = pipes();
  const release = Promise.withResolvers<string>();
  const stopped: AbortSignal[] = [];
  const slow: ButlerAccess = {
    ...access,
    chat: async (text, options) => {
      if (options?.signal) stopped.push(options.signal);
      options?.onText?.("Hmm, ");
      // The second turn never ends by itself: the end of serving must stop it.
      const rest = text === "forever" ? await new Promise<string>(() => {}) : await release.promise;
      return { reply: `Hmm, ${rest}`, channel: "http" };
    },
  };
  const serving = serveStdio(slow, { version: "9.9.9", ...server, answerWithinMs: 50 });
  const client = new Client({ name: "homed-test", version: "1.0.0" });
  await client.connect(new LineStreamTransport(ends.input, ends.output));
  const first = textOf(await client.callTool({ name: "chat", arguments: { text: "What's for dinner?" } }));
  assert.match(first, /^The butler is still working on this .*Its reply so far:\n\nHmm, \n/s);
  const id = /turn_id "([^"]+)"/.exec(first)?.[1] ?? "";
  release.resolve("pasta.");
  assert.equal(textOf(await client.callTool({ name: "chat", arguments: { turn_id: id } })), "Hmm, pasta.");
  assert.match(textOf(await client.callTool({ name: "chat", arguments: { text: "forever" } })), /still working/);
  await client.close();
  await serving;
  assert.deepEqual(stopped.map((signal) => signal.aborted), [false, true]);
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
