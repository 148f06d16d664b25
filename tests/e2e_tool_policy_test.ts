/**
 * `agent.tool_policy` end to end, with a real homed, the strict fake Home Assistant and the fake LLM: a `deny` rule
 * takes a tool out of the model's list for that trust (and a call anyway is refused, naming the rule); a `confirm`
 * rule holds a call of an ordinary tool until the owner's yes, which runs it once without the model; an `allow` rule
 * lets the owner's unlock — a sensitive call, held by default — run at once.
 */

import assert from "node:assert/strict";
import { FIXTURE, ROOT } from "../src/mcp/testdata/servers.ts";
import { DEFAULT_CONTRACT, TEST_KEY } from "./support/contract.ts";
import { FakeHomeAssistant } from "./support/fake_home_assistant.ts";
import { FakeLlm } from "./support/fake_llm.ts";
import { chatAs, startHomed, workspace } from "./support/homed_process.ts";
import { teardown } from "./support/teardown.ts";
import { waitFor } from "./support/wait.ts";

const OWNER = "owner-token-0123456789abcdef";
const MEMBER = "member-token-0123456789abcdef";
type Tools = Array<{ function: { name: string } }>;
type Messages = Array<{ role: string; content: string | null }>;

Deno.test("tool_policy: deny takes a tool off the model's list for that trust, confirm holds it for the owner, allow lifts the taint's hold, not a lock's", async () => {
  const llm = FakeLlm.start(DEFAULT_CONTRACT);
  const ha = FakeHomeAssistant.start({
    entities: [
      { entity_id: "lock.front_door", state: "locked", attributes: { friendly_name: "Front door" } },
      { entity_id: "light.hall", state: "off", attributes: { friendly_name: "Hall" } },
    ],
    token: "fake-ha-token-0123456789",
  });
  const homed = await startHomed(
    await workspace({
      llm: { base_url: llm.baseUrl, api_key: TEST_KEY },
      onebot: { enabled: false },
      daemon: { api_token: OWNER, api_tokens: { mia: { token: MEMBER, trust: "household" } } },
      // Locks are sensitive by default (smart_home.home_assistant.confirm).
      smart_home: { home_assistant: { url: ha.url, token: ha.token } },
      agent: {
        tool_policy: {
          knowledge_search: { household: "deny" },
          "output_list_*": "confirm",
          ha_call_service: { owner: "allow" },
        },
      },
    }),
  );
  try {
    await waitFor(async () => {
      const status = await (await fetch(`${homed.url}/api/status`, {
        headers: { authorization: `Bearer ${OWNER}` },
      })).json();
      return status.services.io.devices.ha?.state === "connected";
    }, "homed connected to Home Assistant");
    const offered = (index: number) => (llm.requests[index]!.body.tools as Tools).map((t) => t.function.name);

    // deny: the member's turn is not even offered knowledge_search; a call anyway is refused, naming the rule.
    llm.enqueue({ toolCalls: [{ name: "knowledge_search", arguments: { query: "wifi" } }] }, { reply: "No." });
    await chatAs(homed, MEMBER, "what is the wifi password?");
    assert.ok(!offered(0).includes("knowledge_search"), "not offered to a household member");
    const refused = (llm.requests[1]!.body.messages as Messages).filter((m) => m.role === "tool").at(-1)!.content!;
    assert.match(
      refused,
      /^Error: tool "knowledge_search" is refused to trust household by agent\.tool_policy "knowledge_search" for household; it was not run/,
    );
    llm.enqueue({ reply: "ok" });
    await chatAs(homed, OWNER, "hi");
    assert.ok(offered(2).includes("knowledge_search"), "the owner is offered it");

    // confirm: an ordinary tool the rule names waits for the owner; the owner's yes runs it once, with no model.
    llm.enqueue({ toolCalls: [{ name: "output_list_channels", arguments: {} }] }, { reply: "Asked you first." });
    await chatAs(homed, OWNER, "which channels are there?");
    const held = (llm.requests.at(-1)!.body.messages as Messages).filter((m) => m.role === "tool").at(-1)!.content!;
    assert.match(held, /^Not done yet: "output_list_channels \{\}" needs the owner's confirmation/);
    const before = llm.requests.length;
    const yes = await chatAs(homed, OWNER, "yes");
    assert.match(String(yes.reply), /^Done: output_list_channels \{\}\. .*http/s);
    assert.equal(llm.requests.length, before, "the yes cost no model call");

    // allow: the owner's turn carries the member's words (tainted), yet his light runs at once by the rule; a lock
    // stays sensitive — the rule allows the tool, not its sensitive calls — and waits for his yes.
    const call = (domain: string, service: string, entity_id: string) => ({
      toolCalls: [{ name: "ha_call_service", arguments: { domain, service, entity_id } }],
    });
    llm.enqueue(call("light", "turn_on", "light.hall"), { reply: "On." });
    await chatAs(homed, OWNER, "hall light on");
    assert.deepEqual(ha.calls.map((c) => [c.service, c.entity_ids[0]]), [["turn_on", "light.hall"]]);
    llm.enqueue(call("lock", "unlock", "lock.front_door"), { reply: "Asked you first." });
    await chatAs(homed, OWNER, "unlock the front door");
    assert.match(
      (llm.requests.at(-1)!.body.messages as Messages).filter((m) => m.role === "tool").at(-1)!.content!,
      /^Not done yet: "Unlock lock\.front_door \(lock\.unlock\)" needs the owner's confirmation/,
    );
    assert.equal(ha.calls.length, 1, "the unlock waits");
    assert.match(String((await chatAs(homed, OWNER, "yes")).reply), /^Done: Unlock lock\.front_door/);
    assert.deepEqual(ha.calls.map((c) => c.service), ["turn_on", "unlock"]);
    const actions = (await (await fetch(`${homed.url}/api/actions`, { headers: { authorization: `Bearer ${OWNER}` } }))
      .json()).actions as Array<{ tool: string; decision: string; rule: string; taint: string }>;
    const [unlock, light] = actions.filter((a) => a.tool === "ha_call_service");
    assert.deepEqual([light!.decision, light!.rule, light!.taint], [
      "allow",
      'agent.tool_policy "ha_call_service" for owner',
      "household",
    ]);
    assert.deepEqual([unlock!.decision, unlock!.rule], [
      "confirm",
      'a sensitive action (agent.tool_policy "ha_call_service" for owner allows the tool, not its sensitive calls)',
    ]);
    assert.deepEqual(llm.violations, []);
  } finally {
    await teardown(
      async () => assert.equal(await homed.stop(), 0, homed.stderr()),
      () => ha.close(),
      () => llm.close(),
    );
  }
});

Deno.test("a tool_policy rule that is not allow, confirm or deny stops start-up naming the key and the value", async () => {
  const ws = await workspace({ llm: { api_key: TEST_KEY }, agent: { tool_policy: { gpio_set: "maybe" } } });
  try {
    await assert.rejects(startHomed(ws), /agent\.tool_policy\.gpio_set: got "maybe"; allowed: allow, confirm or deny/);
  } finally {
    await Deno.remove(ws.dir, { recursive: true }).catch(() => {});
  }
});

Deno.test("taint: after an MCP server's text, the owner's light waits for the owner's yes; without it, it runs; the audit says why", async () => {
  const llm = FakeLlm.start(DEFAULT_CONTRACT);
  const ha = FakeHomeAssistant.start({
    entities: [{ entity_id: "light.hall", state: "off", attributes: { friendly_name: "Hall" } }],
    token: "fake-ha-token-0123456789",
  });
  const homed = await startHomed(
    await workspace({
      llm: { base_url: llm.baseUrl, api_key: TEST_KEY },
      onebot: { enabled: false },
      daemon: { api_token: OWNER },
      smart_home: { home_assistant: { url: ha.url, token: ha.token } },
      mcp: {
        servers: {
          // Its tools say nothing of openWorldHint: MCP takes them to reach the open world, a stranger's words.
          web: { command: Deno.execPath(), args: ["run", "--no-prompt", `--allow-read=${ROOT}`, FIXTURE] },
        },
      },
    }),
  );
  const api = async (path: string) =>
    await (await fetch(`${homed.url}${path}`, { headers: { authorization: `Bearer ${OWNER}` } })).json();
  const light = {
    name: "ha_call_service",
    arguments: { domain: "light", service: "turn_on", entity_id: "light.hall" },
  };
  try {
    await waitFor(async () => {
      const status = await api("/api/status");
      return status.services.io.devices.ha?.state === "connected" &&
        status.services.mcp?.servers?.web?.state === "ready";
    }, "Home Assistant and the MCP server ready");

    // A plain turn: the owner's light runs at once.
    llm.enqueue({ toolCalls: [light] }, { reply: "On." });
    await chatAs(homed, OWNER, "hall light on");
    assert.equal(ha.calls.length, 1);

    // The same request after reading a web page: held for the owner, who says yes; it runs once.
    llm.enqueue(
      { toolCalls: [{ name: "mcp__web__big", arguments: { chars: 5 } }] },
      { toolCalls: [light] },
      { reply: "Waiting for you." },
    );
    await chatAs(homed, OWNER, "read the page, then hall light on");
    const held = (llm.requests.at(-1)!.body.messages as Messages).filter((m) => m.role === "tool").at(-1)!.content!;
    assert.match(held, /^Not done yet: "Turn on light\.hall \(light\.turn_on\)" needs the owner's confirmation/);
    assert.match(held, /why: a turn that holds words of trust guest, below the asker's \(owner\), may not act/);
    // The turn inspector shows what each request held: the owner's first round, then the web page's words.
    const turns = (await api("/api/turns")).turns as Array<{ id: string; text: string }>;
    const tainted = turns.find((t) => t.text === "read the page, then hall light on")!;
    const detail = await api(`/api/turns/${tainted.id}`);
    assert.deepEqual(detail.requests.map((r: { lowest_trust_seen: string }) => r.lowest_trust_seen), [
      "owner",
      "guest",
      "guest",
    ]);
    assert.equal(ha.calls.length, 1, "not run in a tainted turn");
    const yes = await chatAs(homed, OWNER, "yes");
    assert.match(String(yes.reply), /^Done: Turn on light\.hall/);
    assert.equal(ha.calls.length, 2);

    const { actions } = await api("/api/actions");
    const calls = actions.filter((a: { tool: string }) => a.tool === "ha_call_service");
    assert.deepEqual(calls.map((a: { decision: string; taint: string }) => [a.decision, a.taint]), [
      ["confirm", "guest"],
      ["allow", "owner"],
    ]);
    assert.match(
      calls[0].rule,
      /holds words of trust guest, below the asker's \(owner\), may not act without the owner/,
    );
    assert.deepEqual(llm.violations, []);
  } finally {
    await teardown(
      async () => assert.equal(await homed.stop(), 0, homed.stderr()),
      () => ha.close(),
      () => llm.close(),
    );
  }
});
