/**
 * homed as an MCP client against real servers over stdio: the official `server-everything` and `server-filesystem`,
 * and a small fixture server (10 MB results, cancellations, a changing list). Shows the tools appearing and being
 * called through the registry, homed's argument checks and trust rules in front of them, and what happens when a
 * server crashes mid-call, never answers, sends too much or is stopped.
 *
 * @module
 */

import { getLogger } from "@logtape/logtape";
import assert from "node:assert/strict";
import type { ToolOutcome } from "../tools/tool.ts";
import { systemClock } from "../clock.ts";
import { ToolRegistry } from "../tools/registry.ts";
import { testToolContext } from "../../tests/support/tool_context.ts";
import { waitFor } from "../../tests/support/wait.ts";
import type { McpServerStatus } from "./mcp_service.ts";
import { probeServer } from "./mcp_service.ts";
import {
  everythingStdio,
  FILESYSTEM,
  fixtureStdio,
  killFromOutside,
  processExists,
  serverConfig,
  startService,
  testBaseEnv,
} from "./testdata/servers.ts";

/** A call's result and text; whose words it carries (`trust`) is mcp_tools_test.ts's to check. */
const plain = ({ ok, content }: ToolOutcome) => ({ ok, content });

function serverStatus(status: Record<string, unknown>, name: string): McpServerStatus {
  const servers = status.servers as Record<string, McpServerStatus>;
  const server = servers[name];
  assert.ok(server, `no status for ${name}`);
  return server;
}

Deno.test("start() returns at once; server-everything's tools then appear as mcp__everything__*, listed in the status", async () => {
  const started = performance.now();
  await using harness = startService([everythingStdio()]);
  const tookMs = performance.now() - started;
  assert.ok(tookMs < 200, `start took ${tookMs} ms`);
  assert.equal(serverStatus(harness.service.status(), "everything").state, "connecting");
  await waitFor(() => harness.tools.has("mcp__everything__echo"), "server-everything's tools");
  const names = harness.tools.specs().map((spec) => spec.name);
  for (const name of ["mcp__everything__echo", "mcp__everything__get-sum", "mcp__everything__get-tiny-image"]) {
    assert.ok(names.includes(name), `${name} in ${names.join(", ")}`);
  }
  const status = serverStatus(harness.service.status(), "everything");
  assert.equal(status.transport, "stdio");
  assert.equal(status.state, "ready");
  assert.equal(status.source, "mcp.servers");
  assert.ok(status.tools.some((tool) => tool.name === "mcp__everything__get-sum" && tool.mcp_name === "get-sum"));
  assert.equal(status.last_error, null);
});

Deno.test("echo and get-sum called through the registry give the server's text; an image is a note", async () => {
  await using harness = startService([everythingStdio()]);
  await waitFor(() => harness.tools.has("mcp__everything__echo"), "server-everything's tools");
  const context = testToolContext();
  assert.deepEqual(plain(await harness.tools.call("mcp__everything__echo", '{"message":"hello"}', context)), {
    ok: true,
    content: "Echo: hello",
  });
  assert.deepEqual(plain(await harness.tools.call("mcp__everything__get-sum", '{"a":2,"b":40}', context)), {
    ok: true,
    content: "The sum of 2 and 40 is 42.",
  });
  const image = await harness.tools.call("mcp__everything__get-tiny-image", "{}", context);
  assert.equal(image.ok, true);
  assert.match(image.content, /\[image: image\/png, \d+ bytes, not shown\]/);
  assert.equal(serverStatus(harness.service.status(), "everything").calls, 3);
});

Deno.test("arguments that do not match the server's schema are refused by homed before the call, naming the field", async () => {
  await using harness = startService([everythingStdio()]);
  await waitFor(() => harness.tools.has("mcp__everything__get-sum"), "server-everything's tools");
  const context = testToolContext();
  const wrongType = await harness.tools.call("mcp__everything__get-sum", '{"a":1,"b":"two"}', context);
  assert.deepEqual(wrongType, {
    ok: false,
    content:
      'Error: invalid arguments for tool "mcp__everything__get-sum": field "b" must be number; got {"a":1,"b":"two"}',
  });
  const missing = await harness.tools.call("mcp__everything__echo", "{}", context);
  assert.equal(missing.ok, false);
  assert.match(missing.content, /missing required field "message"/);
  assert.equal(serverStatus(harness.service.status(), "everything").calls, 0, "nothing reached the server");
});

Deno.test("a guest is refused a household server's tool with the rule named; a household member may call it", async () => {
  await using harness = startService([everythingStdio({ trust: "household" })]);
  await waitFor(() => harness.tools.has("mcp__everything__echo"), "server-everything's tools");
  const guest = await harness.tools.call(
    "mcp__everything__echo",
    '{"message":"hi"}',
    testToolContext("qq:group:1", "guest"),
  );
  assert.equal(guest.ok, false);
  assert.match(guest.content, /is for household members and the owner/);
  assert.match(guest.content, /trust guest/);
  const member = await harness.tools.call(
    "mcp__everything__echo",
    '{"message":"hi"}',
    testToolContext("qq:private:2", "household"),
  );
  assert.deepEqual(plain(member), { ok: true, content: "Echo: hi" });
});

Deno.test("an owner-trust server (the default) refuses household members too", async () => {
  await using harness = startService([everythingStdio()]);
  await waitFor(() => harness.tools.has("mcp__everything__echo"), "server-everything's tools");
  const member = await harness.tools.call(
    "mcp__everything__echo",
    '{"message":"hi"}',
    testToolContext("qq", "household"),
  );
  assert.equal(member.ok, false);
  assert.match(member.content, /is for the owner only/);
});

Deno.test("killing the stdio child mid-call fails that call clearly; the server is started again and the next call works", async () => {
  await using harness = startService([everythingStdio()]);
  await waitFor(() => harness.tools.has("mcp__everything__echo"), "server-everything's tools");
  const connection = harness.service.connection("everything")!;
  const firstPid = connection.pid!;
  assert.ok(firstPid > 0);
  const context = testToolContext();
  const running = harness.tools.call(
    "mcp__everything__trigger-long-running-operation",
    '{"duration":5,"steps":5}',
    context,
  );
  await new Promise((resolve) => setTimeout(resolve, 300));
  await killFromOutside(firstPid);
  const outcome = await running;
  assert.equal(outcome.ok, false);
  assert.match(
    outcome.content,
    /MCP server "everything" went away during the call of "trigger-long-running-operation"/,
  );
  assert.match(outcome.content, /killed by SIGKILL/);
  assert.match(outcome.content, /homed is starting it again/);
  await waitFor(
    () => connection.state === "ready" && connection.pid !== firstPid && harness.tools.has("mcp__everything__echo"),
    "the server started again",
  );
  assert.deepEqual(plain(await harness.tools.call("mcp__everything__echo", '{"message":"back"}', context)), {
    ok: true,
    content: "Echo: back",
  });
  const status = serverStatus(harness.service.status(), "everything");
  assert.equal(status.restarts, 1);
  assert.equal(status.failures, 1);
  assert.match(status.last_error ?? "", /^MCP server "everything" went away: its process was killed by SIGKILL/);
});

Deno.test("a call past its deadline is stopped and cancelled on the server too (notifications/cancelled)", async () => {
  await using harness = startService([fixtureStdio({ timeout: 500 })]);
  await waitFor(() => harness.tools.has("mcp__fixture__slow"), "the fixture's tools");
  const context = testToolContext();
  const started = performance.now();
  const slow = await harness.tools.call("mcp__fixture__slow", "{}", context);
  assert.ok(performance.now() - started < 3_000);
  assert.deepEqual(slow, {
    ok: false,
    content:
      'Error: tool "mcp__fixture__slow" did not finish within 0.5s (the tool\'s own timeout); it was stopped and ' +
      "its result discarded",
  });
  await waitFor(async () => {
    const count = await harness.tools.call("mcp__fixture__cancellations", "{}", context);
    return count.content === "1";
  }, "the server to count the cancellation");
});

Deno.test("a stdio server that never answers initialize leaves homed up: shown failing, then paused, and said so to a call", async () => {
  const started = performance.now();
  await using harness = startService(
    [serverConfig("mute", { command: "sh", args: ["-c", "exec sleep 600"] })],
    { spawnTimeoutMs: 300 },
  );
  assert.ok(performance.now() - started < 200, "start() did not wait for the server");
  const connection = harness.service.connection("mute")!;
  await waitFor(() => connection.state === "reconnecting", "the first failed start", { limitMs: 5_000 });
  assert.match(
    serverStatus(harness.service.status(), "mute").last_error ?? "",
    /^MCP server "mute" did not answer initialize and tools\/list within 0\.3 s/,
  );
  await waitFor(() => connection.state === "paused", "the server paused", { limitMs: 10_000 });
  const status = serverStatus(harness.service.status(), "mute");
  assert.equal(status.failed_starts, 3);
  assert.equal(status.restarts, 2);
  assert.deepEqual(status.tools, []);
  assert.ok(
    status.next_attempt_at && Date.parse(status.next_attempt_at) > Date.now() + 30_000,
    status.next_attempt_at!,
  );
  await assert.rejects(
    connection.call("anything", {}, { signal: new AbortController().signal, timeoutMs: 1_000 }),
    /MCP server "mute" is paused after 3 failed starts in a row \(last error: MCP server "mute" did not answer initialize/,
  );
  assert.equal(connection.pid, null, "no child is left running while paused");
});

Deno.test("a server that keeps failing after it ran is paused, and a turn still holding its tool is told so", async () => {
  const marker = await Deno.makeTempFile({ prefix: "homed-mcp-broken-" });
  await Deno.remove(marker);
  const fixture = fixtureStdio();
  const script = `test -e '${marker}' && { echo 'config broken' >&2; exit 7; }; exec "$0" "$@"`;
  try {
    await using harness = startService([
      serverConfig("flaky", {
        command: "sh",
        args: ["-c", script, fixture.command!, ...fixture.args],
        cwd: fixture.cwd,
      }),
    ]);
    await waitFor(() => harness.tools.has("mcp__flaky__big"), "the server's tools");
    const turn = harness.tools.view(); // a turn that started while the server was up
    const connection = harness.service.connection("flaky")!;
    await Deno.writeTextFile(marker, "");
    await killFromOutside(connection.pid!);
    await waitFor(() => connection.state === "paused", "the server paused");
    assert.equal(harness.tools.has("mcp__flaky__big"), false, "its tools are withdrawn");
    const outcome = await turn.call("mcp__flaky__big", '{"chars":1}', testToolContext());
    assert.equal(outcome.ok, false);
    assert.match(
      outcome.content,
      /^Error: tool "mcp__flaky__big" failed: MCP server "flaky" is paused after 3 failed starts in a row \(last error: MCP server "flaky" failed to start: its process exited with code 7 \(its last words on stderr: config broken\)\); homed tries again at \d{4}-/,
    );
    assert.match(serverStatus(harness.service.status(), "flaky").last_error ?? "", /exited with code 7/);
  } finally {
    await Deno.remove(marker).catch(() => {});
  }
});

Deno.test("a command that is not installed is an error naming the setting and the command", async () => {
  await using harness = startService([serverConfig("nope", { command: "homed-no-such-mcp-server" })]);
  const connection = harness.service.connection("nope")!;
  await waitFor(() => serverStatus(harness.service.status(), "nope").last_error !== null, "the failed start");
  assert.equal(
    serverStatus(harness.service.status(), "nope").last_error,
    'MCP server "nope": the command "homed-no-such-mcp-server" (mcp.servers.nope.command) was not found on PATH; ' +
      "install it or give its full path",
  );
  assert.notEqual(connection.state, "ready");
});

Deno.test("a 10 MB result is cut to 256 KiB with a visible marker", async () => {
  await using harness = startService([fixtureStdio()]);
  await waitFor(() => harness.tools.has("mcp__fixture__big"), "the fixture's tools");
  const outcome = await harness.tools.call("mcp__fixture__big", '{"chars":10485760}', testToolContext());
  assert.equal(outcome.ok, true);
  assert.ok(outcome.content.length < 300_000, `kept ${outcome.content.length} characters`);
  assert.ok(
    outcome.content.endsWith("\n[… cut: the MCP server sent 10485760 characters; homed kept the first 262144]"),
    outcome.content.slice(-200),
  );
});

Deno.test("a message over the read limit is dropped unread and its call fails at once, naming the limit", async () => {
  await using harness = startService([fixtureStdio()], { maxMessageBytes: 1024 * 1024 });
  await waitFor(() => harness.tools.has("mcp__fixture__big"), "the fixture's tools");
  const started = performance.now();
  const outcome = await harness.tools.call("mcp__fixture__big", '{"chars":2000000}', testToolContext());
  assert.ok(performance.now() - started < 5_000, "answered without waiting for the deadline");
  assert.equal(outcome.ok, false);
  assert.match(outcome.content, /MCP server "fixture" sent a message of \d+ bytes, over homed's limit of 1048576/);
  assert.deepEqual(plain(await harness.tools.call("mcp__fixture__big", '{"chars":3}', testToolContext())), {
    ok: true,
    content: "xxx",
  });
});

Deno.test("tools/list_changed brings the server's new tool without a restart", async () => {
  await using harness = startService([fixtureStdio()]);
  await waitFor(() => harness.tools.has("mcp__fixture__add_tool"), "the fixture's tools");
  assert.equal(harness.tools.has("mcp__fixture__late"), false);
  assert.deepEqual(plain(await harness.tools.call("mcp__fixture__add_tool", "{}", testToolContext())), {
    ok: true,
    content: "added",
  });
  await waitFor(() => harness.tools.has("mcp__fixture__late"), "the new tool");
  assert.deepEqual(plain(await harness.tools.call("mcp__fixture__late", "{}", testToolContext())), {
    ok: true,
    content: "late tool here",
  });
  assert.equal(serverStatus(harness.service.status(), "fixture").restarts, 0);
});

Deno.test("a schema homed cannot check whole is loosened: the call goes through and the server's own error comes back", async () => {
  await using harness = startService([fixtureStdio()]);
  await waitFor(() => harness.tools.has("mcp__fixture__strict"), "the fixture's tools");
  const spec = harness.tools.specs().find((s) => s.name === "mcp__fixture__strict")!;
  assert.deepEqual(spec.parameters, {
    type: "object",
    properties: { n: { type: "integer", description: "A positive number" } },
    required: ["n"],
  });
  const context = testToolContext();
  assert.match(
    (await harness.tools.call("mcp__fixture__strict", '{"n":"x"}', context)).content,
    /field "n" must be integer/,
  );
  assert.deepEqual(plain(await harness.tools.call("mcp__fixture__strict", '{"n":-1}', context)), {
    ok: false,
    content: `Error: tool "mcp__fixture__strict" failed: n must be positive (the server's own check)`,
  });
  assert.deepEqual(plain(await harness.tools.call("mcp__fixture__strict", '{"n":3}', context)), {
    ok: true,
    content: "n is 3",
  });
});

Deno.test("a stdio server sees only PATH, HOME and its own env", async () => {
  await using harness = startService([everythingStdio({ env: { MY_SETTING: "42" } })]);
  await waitFor(() => harness.tools.has("mcp__everything__get-env"), "server-everything's tools");
  const outcome = await harness.tools.call("mcp__everything__get-env", "{}", testToolContext());
  assert.equal(outcome.ok, true);
  const env = JSON.parse(outcome.content) as Record<string, string>;
  const expected = ["HOME", "MY_SETTING", "PATH"].filter((key) =>
    key === "MY_SETTING" || Deno.env.get(key) !== undefined
  );
  assert.deepEqual(Object.keys(env).sort(), expected);
  assert.equal(env.MY_SETTING, "42");
  assert.equal(env.PATH, Deno.env.get("PATH"));
});

Deno.test("include and exclude pick the server's tools by exact name", async () => {
  await using harness = startService([everythingStdio({ include: ["echo", "get-sum"], exclude: ["get-sum"] })]);
  await waitFor(() => serverStatus(harness.service.status(), "everything").state === "ready", "the server ready");
  assert.deepEqual(
    harness.tools.specs().map((spec) => spec.name),
    ["mcp__everything__echo"],
  );
});

Deno.test("a disabled server is not started and is listed as disabled", async () => {
  await using harness = startService([everythingStdio({ enabled: false }, "off"), fixtureStdio()]);
  await waitFor(() => harness.tools.has("mcp__fixture__big"), "the fixture's tools");
  const status = harness.service.status();
  assert.deepEqual(status.disabled, ["off"]);
  assert.deepEqual(Object.keys(status.servers as object), ["fixture"]);
  assert.equal(harness.service.connection("off"), undefined);
});

Deno.test("stop() withdraws the tools and kills the stdio children", async () => {
  const tools = new ToolRegistry();
  const harness = startService([everythingStdio(), fixtureStdio()], { tools });
  await waitFor(() => tools.has("mcp__everything__echo") && tools.has("mcp__fixture__big"), "both servers ready");
  const pids = [harness.service.connection("everything")!.pid!, harness.service.connection("fixture")!.pid!];
  const started = performance.now();
  await harness.service.stop();
  assert.ok(performance.now() - started < 5_000);
  assert.deepEqual(tools.specs(), []);
  for (const pid of pids) assert.equal(await processExists(pid), false, `process ${pid} is gone`);
  assert.equal(serverStatus(harness.service.status(), "everything").state, "stopped");
});

Deno.test("server-filesystem on a temp folder: files written, read and listed; a path outside is the server's error", async () => {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "homed-mcp-fs-" }));
  try {
    await using harness = startService([serverConfig("files", { command: "node", args: [FILESYSTEM, dir] })]);
    await waitFor(() => harness.tools.has("mcp__files__write_file"), "server-filesystem's tools");
    const context = testToolContext();
    const write = await harness.tools.call(
      "mcp__files__write_file",
      JSON.stringify({ path: `${dir}/list.txt`, content: "milk\neggs" }),
      context,
    );
    assert.equal(write.ok, true, write.content);
    assert.equal(await Deno.readTextFile(`${dir}/list.txt`), "milk\neggs");
    assert.deepEqual(
      plain(
        await harness.tools.call("mcp__files__read_text_file", JSON.stringify({ path: `${dir}/list.txt` }), context),
      ),
      { ok: true, content: "milk\neggs" },
    );
    const listing = await harness.tools.call("mcp__files__list_directory", JSON.stringify({ path: dir }), context);
    assert.match(listing.content, /\[FILE\] list\.txt/);
    const outside = await harness.tools.call("mcp__files__read_text_file", '{"path":"/etc/hostname"}', context);
    assert.equal(outside.ok, false);
    assert.match(outside.content, /^Error: tool "mcp__files__read_text_file" failed: .*[Aa]ccess denied/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("probeServer names the tools of a working server, and the first error of a broken one", async () => {
  const options = {
    clock: systemClock,
    logger: getLogger(["homed", "doctor"]),
    baseEnv: testBaseEnv(),
    timeoutMs: 10_000,
  };
  const good = await probeServer(fixtureStdio(), options);
  assert.deepEqual(good, {
    ok: true,
    detail: "stdio, 6 tools: big, slow, cancellations, add_tool, strict, fail",
    offered: 6,
  });
  // What homed would register: include and exclude applied, for doctor's count against llm.max_tools.
  const some = await probeServer({ ...fixtureStdio(), include: ["big", "slow"], exclude: ["slow"] }, options);
  assert.deepEqual(some, {
    ok: true,
    detail: "stdio, 6 tools (1 after include/exclude): big, slow, cancellations, add_tool, strict, fail",
    offered: 1,
  });
  const exits = await probeServer(
    serverConfig("exits", { command: "sh", args: ["-c", "echo no config >&2; exit 3"] }),
    options,
  );
  assert.deepEqual(exits, {
    ok: false,
    detail: 'MCP server "exits" failed to start: its process exited with code 3 (its last words on stderr: no config)',
  });
});
