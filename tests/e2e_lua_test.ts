/**
 * End to end with the LuaAdapter provider: a real homed process (flags from src/flags.ts, which grant the adapter and
 * wasmoon's glue.wasm and nothing more), the shipped adapters, and strict fake Ollama and Anthropic servers.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { FakeVendor } from "./support/fake_vendor.ts";
import { deno, postJson, REPO, startHomed, taskFlags, workspace } from "./support/homed_process.ts";
import { teardown } from "./support/teardown.ts";

const adapter = (name: string) => join(REPO, "config", "adapters", name);

for (const kind of ["ollama", "anthropic"] as const) {
  Deno.test(`${kind} adapter: a tool-call round trip through the agent's tool loop`, async () => {
    const vendor = FakeVendor.start(kind);
    vendor.enqueue(
      { toolCalls: [{ name: "output_list_channels", arguments: {} }] },
      { reply: "You can reach me over http." },
    );
    const homed = await startHomed(
      await workspace({
        llm: {
          provider: "lua",
          // The Anthropic one as embedded in homed (as a compiled binary has it), the Ollama one from its file.
          adapter: kind === "anthropic" ? "builtin:anthropic" : adapter(`${kind}.lua`),
          base_url: vendor.baseUrl,
          api_key: kind === "anthropic" ? vendor.apiKey : "",
          model: kind === "ollama" ? "qwen3:8b" : "claude-sonnet-4-5",
          max_retries: 0,
        },
        onebot: { enabled: false },
      }),
    );
    try {
      const { status, body } = await postJson(`${homed.url}/api/chat`, { text: "Which channels are there?" });
      assert.equal(status, 200, JSON.stringify(body));
      assert.deepEqual(body, { reply: "You can reach me over http.", channel: "http", rounds: 2 });
      assert.equal(vendor.requests.length, 2);
      const second = vendor.requests[1]!.body.messages as Array<Record<string, unknown>>;
      if (kind === "ollama") {
        const result = second.at(-1)!;
        assert.equal(result.role, "tool");
        assert.equal(result.tool_name, "output_list_channels");
        assert.match(String(result.content), /http/);
        assert.deepEqual((second.at(-2)!.tool_calls as unknown[]).length, 1);
      } else {
        const [call] = (second.at(-2)!.content as Array<Record<string, unknown>>).filter((b) => b.type === "tool_use");
        const [result] = second.at(-1)!.content as Array<Record<string, unknown>>;
        assert.equal(result!.type, "tool_result");
        assert.equal(result!.tool_use_id, call!.id);
        assert.equal(vendor.requests[1]!.body.system !== undefined, true, "the persona went to the top-level system");
      }
    } finally {
      await teardown(
        async () => assert.equal(await homed.stop(), 0, homed.stderr()),
        () => vendor.close(),
      );
    }
  });
}

Deno.test("an adapter spinning until lua.time_limit: /healthz and the next turn are served, the turn fails clearly", async () => {
  const vendor = FakeVendor.start("ollama");
  vendor.enqueue({ reply: "Hello from the second channel." });
  const ws = await workspace({
    llm: { provider: "lua", adapter: "spin.lua", base_url: vendor.baseUrl, model: "m", max_retries: 0 },
    lua: { time_limit: "1500ms" },
    onebot: { enabled: false },
  });
  await Deno.writeTextFile(
    join(ws.dir, "spin.lua"),
    `function build_request(text)
       local r = json.decode(text)
       if r.messages[#r.messages].content:find("spin please") then while true do end end
       return json.encode({ url = r.base_url .. "/api/chat", method = "POST", headers = {},
         body = json.encode({ model = r.model, stream = false, messages = json.array({ { role = "user", content = "hi" } }) }) })
     end
     function parse_response(status, text) return json.encode({ content = json.decode(text).message.content }) end`,
  );
  const homed = await startHomed(ws);
  try {
    const started = performance.now();
    let spunAt = Infinity;
    const spinning = postJson(`${homed.url}/api/chat`, { text: "spin please" }).then((answer) => {
      spunAt = performance.now();
      return answer;
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    const healthz = await fetch(`${homed.url}/healthz`);
    await healthz.body?.cancel();
    const healthzAt = performance.now();
    assert.equal(healthz.status, 200);
    const other = postJson(`${homed.url}/api/chat`, { text: "hello", user: "bob" });
    const spun = await spinning;
    // Ordering, not a stopwatch: the listener answered while the script still spun.
    assert.ok(healthzAt < spunAt, "/healthz was answered before the spinning turn ended");
    assert.ok(performance.now() - started >= 1_400, "the script ran until its limit");
    assert.notEqual(spun.status, 200);
    assert.match(JSON.stringify(spun.body), /spin\.lua: stopped after 1500 ms \(lua\.time_limit\)/);
    const answered = await other;
    assert.equal(answered.status, 200, JSON.stringify(answered.body));
    assert.equal((answered.body as { reply: string }).reply, "Hello from the second channel.");
  } finally {
    await teardown(
      async () => assert.equal(await homed.stop(), 0, homed.stderr()),
      () => vendor.close(),
    );
  }
});

Deno.test("an adapter with a syntax error stops start-up with the file and line", async () => {
  const ws = await workspace({ llm: { provider: "lua", adapter: "broken.lua" }, onebot: { enabled: false } });
  await Deno.writeTextFile(join(ws.dir, "broken.lua"), "function build_request(text)\n  return 1 +\nend\n");
  const flags = await taskFlags("run", ws.env);
  const result = await deno(["run", ...flags, "src/main.ts", "run"], { env: ws.env });
  assert.notEqual(result.code, 0);
  assert.match(
    result.stderr,
    new RegExp(
      `llm\\.adapter: ${
        ws.dir.replaceAll("/", "\\/")
      }\\/broken\\.lua does not compile: broken\\.lua:3: unexpected symbol near 'end'`,
    ),
  );
  await Deno.remove(ws.dir, { recursive: true });
});
