/**
 * More tools than the model accepts, end to end: a real homed with an MCP server offering 300 tools and the strict
 * fake LLM, which refuses a request with more than 128 (as DeepSeek and OpenAI do). Turns still work, each offers
 * homed's own tools and the MCP tools nearest the message, and status names what was left out; a `llm.max_tools`
 * that homed's own tools cannot fit stops start-up naming the key and the value.
 */

import assert from "node:assert/strict";
import { FIXTURE, ROOT } from "../src/mcp/testdata/servers.ts";
import { DEFAULT_CONTRACT, TEST_KEY } from "./support/contract.ts";
import { FakeLlm } from "./support/fake_llm.ts";
import { deno, startHomed, taskFlags, workspace } from "./support/homed_process.ts";
import { teardown } from "./support/teardown.ts";
import { waitFor } from "./support/wait.ts";

const GADGETS = 300;

Deno.test("an MCP server with 300 tools: every request carries at most 128, the turn works, status names the rest", async () => {
  const llm = FakeLlm.start(DEFAULT_CONTRACT);
  const homed = await startHomed(
    await workspace({
      llm: { base_url: llm.baseUrl, api_key: TEST_KEY },
      onebot: { enabled: false },
      mcp: {
        servers: {
          fixture: {
            command: Deno.execPath(),
            args: ["run", "--no-prompt", `--allow-read=${ROOT}`, FIXTURE, `--gadgets=${GADGETS}`],
            trust: "anyone",
          },
        },
      },
    }),
  );
  try {
    const status = async () => await (await fetch(`${homed.url}/api/status`)).json();
    await waitFor(async () => (await status()).services.mcp?.servers?.fixture?.state === "ready", "the server ready");
    const registered: number = (await status()).tools;
    assert.ok(registered > GADGETS, `all ${registered} tools are registered`);

    llm.enqueue(
      { toolCalls: [{ name: "mcp__fixture__weather_forecast", arguments: { city: "Hangzhou" } }] },
      { reply: "明天杭州晴。" },
    );
    const response = await fetch(`${homed.url}/api/chat`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ text: "What is the weather forecast for Hangzhou tomorrow?" }),
    });
    assert.equal(response.status, 200, await response.clone().text());
    assert.equal((await response.json()).reply, "明天杭州晴。");
    assert.deepEqual(llm.violations, [], "no request carried more tools than the model accepts");

    const offered = (llm.requests[0]!.body.tools as Array<{ function: { name: string } }>).map((t) => t.function.name);
    assert.equal(offered.length, 128);
    for (const name of ["knowledge_search", "schedule_create", "output_send", "mcp__fixture__weather_forecast"]) {
      assert.ok(offered.includes(name), `${name} is offered`);
    }
    const tool = (llm.requests[1]!.body.messages as Array<{ role: string; content: string }>).find((m) =>
      m.role === "tool"
    );
    assert.equal(tool?.content, "sunny in Hangzhou", "the chosen MCP tool ran");

    const agent = (await status()).agent;
    assert.equal(agent.max_tools, 128);
    assert.equal(agent.tools_left_out.length, registered - 128);
    assert.ok(
      agent.tools_left_out.every((name: string) => name.startsWith("mcp__fixture__")),
      "only MCP tools left out",
    );
    assert.ok(!agent.tools_left_out.includes("mcp__fixture__weather_forecast"));
    assert.match(homed.stderr(), /More tools than llm\.max_tools \(128\): this turn left out \d+ \(mcp__fixture__/);
  } finally {
    await teardown(
      async () => assert.equal(await homed.stop(), 0, homed.stderr()),
      () => llm.close(),
    );
  }
});

Deno.test("a llm.max_tools below homed's own tools stops start-up naming the key, the value and the least it can be", async () => {
  const ws = await workspace({ llm: { api_key: TEST_KEY, max_tools: 3 }, onebot: { enabled: false } });
  try {
    const flags = await taskFlags("run", ws.env);
    const run = await deno(["run", ...flags, "src/main.ts", "run"], { env: ws.env });
    assert.notEqual(run.code, 0);
    assert.match(
      run.stderr,
      /llm\.max_tools: got 3, but homed's own tools and the configured devices' come to \d+, and every turn offers them all; allowed: at least \d+/,
    );
  } finally {
    await Deno.remove(ws.dir, { recursive: true });
  }
});
