/**
 * End to end with OpenClaw skills: a real homed process whose flags come from src/flags.ts (which grant exactly the
 * binaries and variables the skills' gates look for), the four published fixtures in its plugins folder, a PATH that
 * holds `curl` only, and the fake OpenAI-compatible server.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { DEFAULT_CONTRACT, TEST_KEY } from "./support/contract.ts";
import { FakeLlm } from "./support/fake_llm.ts";
import { postJson, REPO, startHomed, workspace } from "./support/homed_process.ts";
import { teardown } from "./support/teardown.ts";

const FIXTURES = fileURLToPath(new URL("./fixtures/skills/", import.meta.url));

Deno.test("OpenClaw fixtures: gated as documented, listed by /api/plugins, offered in the system message, read through the tool loop", async () => {
  const fake = FakeLlm.start(DEFAULT_CONTRACT);
  const bin = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-bin-" });
  await Deno.writeTextFile(join(bin, "curl"), "#!/bin/sh\n");
  await Deno.chmod(join(bin, "curl"), 0o755);
  const ws = await workspace(
    { llm: { base_url: fake.baseUrl, api_key: TEST_KEY, max_retries: 0 }, onebot: { enabled: false } },
    { PATH: bin },
  );
  for (const name of ["weather", "openhue", "apple-reminders", "1password"]) {
    await Deno.mkdir(join(ws.dir, "plugins", name), { recursive: true });
    await Deno.copyFile(join(FIXTURES, name, "SKILL.md"), join(ws.dir, "plugins", name, "SKILL.md"));
  }
  await Deno.writeTextFile(join(ws.dir, "plugins", "weather", "notes.md"), "Use {baseDir}/notes.md for more.\n");
  fake.enqueue(
    { toolCalls: [{ name: "skill_read", arguments: { name: "weather" } }] },
    { toolCalls: [{ name: "skill_read", arguments: { name: "weather", path: "../openhue/SKILL.md" } }] },
    { reply: "wttr.in says it is sunny." },
  );
  const homed = await startHomed(ws);
  try {
    const response = await fetch(`${homed.url}/api/plugins`);
    const { plugins, problems } = await response.json();
    assert.deepEqual(problems, []);
    const byName = Object.fromEntries(
      (plugins as Array<{ name: string; eligible: boolean; reasons: string[]; kind: string }>).map((p) => [p.name, p]),
    );
    assert.deepEqual(
      Object.fromEntries(Object.entries(byName).map(([name, p]) => [name, [p.kind, p.eligible, p.reasons]])),
      {
        "1password": ["skill", true, ["no OpenClaw metadata: no gates"]],
        "apple-reminders": ["skill", false, ["os: needs darwin, this is linux"]],
        openhue: ["skill", false, ["requires.bins: openhue is not on PATH"]],
        weather: ["skill", true, [`requires.bins: curl at ${bin}/curl`]],
      },
    );
    const channels = await (await fetch(`${homed.url}/api/channels`)).json();
    assert.deepEqual(
      (channels.channels as Array<{ name: string; type: string }>).filter((c) => c.type === "plugin").map((c) =>
        c.name
      ),
      ["plugin-1password", "plugin-weather"],
      "each offered skill is a plugin device",
    );
    const { status, body } = await postJson(`${homed.url}/api/chat`, { text: "What's the weather in Hangzhou?" });
    assert.equal(status, 200, JSON.stringify(body));
    assert.equal((body as { reply: string }).reply, "wttr.in says it is sunny.");
    const system = (fake.requests[0]!.body.messages as Array<{ content: string }>)[0]!.content;
    const section = system.indexOf("## [homed] Skills (mandatory)");
    assert.ok(section > 0, "the skills section follows the persona");
    assert.match(system, /<available_skills>\n {2}<skill>\n {4}<name>1password<\/name>/);
    assert.match(
      system,
      /<name>weather<\/name>\n {4}<description>Get current weather and forecasts \(no API key required\)\.<\/description>/,
    );
    assert.ok(!system.includes("<name>openhue</name>") && !system.includes("<name>apple-reminders</name>"));
    const toolResults = (fake.requests.at(-1)!.body.messages as Array<{ role: string; content: string }>)
      .filter((message) => message.role === "tool").map((message) => message.content);
    assert.match(toolResults[0]!, /^\n?# Weather\n\nTwo free services, no API keys needed\./);
    assert.match(toolResults[1]!, /path "\.\.\/openhue\/SKILL\.md" is outside the folder of the skill weather/);
  } finally {
    await teardown(
      async () => assert.equal(await homed.stop(), 0, homed.stderr()),
      () => fake.close(),
      () => Deno.remove(bin, { recursive: true }),
    );
  }
});

Deno.test("a skill's /command with command-dispatch: tool answers without the model; POST /api/plugins/reload adds a skill", async () => {
  const fake = FakeLlm.start(DEFAULT_CONTRACT);
  const ws = await workspace({
    llm: { base_url: fake.baseUrl, api_key: TEST_KEY, max_retries: 0 },
    onebot: { enabled: false },
  });
  const skill = async (name: string, extra = "") => {
    await Deno.mkdir(join(ws.dir, "plugins", name), { recursive: true });
    await Deno.writeTextFile(
      join(ws.dir, "plugins", name, "SKILL.md"),
      `---\nname: ${name}\ndescription: The ${name} skill\n${extra}---\nBody of ${name}\n`,
    );
  };
  await skill("channels", "command-dispatch: tool\ncommand-tool: output_list_channels\n");
  fake.enqueue({ reply: "ok" });
  const homed = await startHomed(ws);
  try {
    const direct = await postJson(`${homed.url}/api/chat`, { text: "/channels all" });
    assert.equal(direct.status, 200, JSON.stringify(direct.body));
    assert.equal((direct.body as { rounds: number }).rounds, 0);
    // OpenClaw's dispatch arguments reached the tool through the registry, which checked them against its schema
    // (output_list_channels takes none): proof of the direct call, and of the checks it keeps.
    assert.equal(
      (direct.body as { reply: string }).reply,
      'Error: invalid arguments for tool "output_list_channels": unknown field "command"; unknown field "commandName"; ' +
        'unknown field "skillName"; got {"command":"all","commandName":"channels","skillName":"channels"}',
    );
    assert.equal(fake.requests.length, 0, "the model was not asked");

    await skill("kettle");
    const reload = await postJson(`${homed.url}/api/plugins/reload`, {});
    assert.equal(reload.status, 200, JSON.stringify(reload.body));
    assert.deepEqual(reload.body, { skills: 2, eligible: 2, problems: [] });
    const hello = await postJson(`${homed.url}/api/chat`, { text: "hello" });
    assert.equal(hello.status, 200, JSON.stringify(hello.body));
    const system = (fake.requests[0]!.body.messages as Array<{ content: string }>)[0]!.content;
    assert.match(system, /<name>kettle<\/name>/);
  } finally {
    await teardown(
      async () => assert.equal(await homed.stop(), 0, homed.stderr()),
      () => fake.close(),
    );
  }
});

Deno.test("a Lua tool plugin through the tool loop; reload while 20 turns are queued and running: none fails", async () => {
  const fake = FakeLlm.start(DEFAULT_CONTRACT);
  const ws = await workspace({
    llm: { base_url: fake.baseUrl, api_key: TEST_KEY, max_retries: 0 },
    onebot: { enabled: false },
    plugins: { watch: false },
  });
  const dir = join(ws.dir, "plugins", "thermo");
  await Deno.mkdir(dir, { recursive: true });
  await Deno.writeTextFile(
    join(dir, "skill.json"),
    JSON.stringify({
      name: "thermo",
      version: "1.0.0",
      description: "Room temperatures",
      lua: "main.lua",
      tools: [{
        name: "room_temperature",
        description: "The temperature of a room",
        parameters: { type: "object", properties: { room: { type: "string" } }, required: ["room"] },
        handler: { lua: "room_temperature" },
      }],
    }),
  );
  const version = (v: string) =>
    Deno.writeTextFile(
      join(dir, "main.lua"),
      `function room_temperature(text) return "${v}: " .. json.decode(text).room .. " is 21 degrees" end`,
    );
  await version("v1");
  const TURNS = 20;
  for (let i = 0; i < TURNS; i++) {
    fake.enqueue(
      { toolCalls: [{ name: "room_temperature", arguments: { room: `room-${i}` } }], delayMs: 20 },
      { reply: `Turn ${i} done.` },
    );
  }
  const homed = await startHomed(ws);
  try {
    const channels = await (await fetch(`${homed.url}/api/channels`)).json();
    assert.ok(
      (channels.channels as Array<{ name: string }>).some((channel) => channel.name === "plugin-thermo"),
      "the plugin is a device",
    );
    const turns = Array.from({ length: TURNS }, (_, i) => postJson(`${homed.url}/api/chat`, { text: `Turn ${i}?` }));
    await fake.received(6);
    await version("v2");
    const reloaded = await postJson(`${homed.url}/api/plugins/reload`, {});
    assert.equal(reloaded.status, 200, JSON.stringify(reloaded.body));
    await Deno.writeTextFile(join(dir, "main.lua"), "function room_temperature(\n"); // a broken v3
    const broken = await postJson(`${homed.url}/api/plugins/reload`, {});
    assert.equal(broken.status, 200);
    assert.match(JSON.stringify(broken.body), /thermo: .*main\.lua:2: .*the previous version stays/);
    const results = await Promise.all(turns);
    for (const result of results) assert.equal(result.status, 200, JSON.stringify(result.body));
    // Twenty requests race to the server, so which scripted answer each one got is open; every one got one.
    assert.deepEqual(
      results.map((result) => (result.body as { reply: string }).reply).sort(),
      Array.from({ length: TURNS }, (_, i) => `Turn ${i} done.`).sort(),
    );
    const outputs = fake.requests.flatMap((request) =>
      (request.body.messages as Array<{ role: string; content: string }>).filter((m) => m.role === "tool")
        .map((m) => m.content)
    );
    const distinct = new Set(outputs.map((output) => output.split(":")[0]));
    assert.ok(outputs.every((output) => /^v[12]: room-\d+ is 21 degrees$/.test(output)), outputs.join("\n"));
    assert.deepEqual([...distinct].sort(), ["v1", "v2"], "both versions served, nothing half-swapped");
  } finally {
    await teardown(
      async () => assert.equal(await homed.stop(), 0, homed.stderr()),
      () => fake.close(),
    );
  }
});

Deno.test("QQ off: the OneBot endpoint answers 503 unavailable; the shipped plugins/qq, copied in, loads without a problem and turns it on", async () => {
  const fake = FakeLlm.start(DEFAULT_CONTRACT);
  const ws = await workspace({
    llm: { base_url: fake.baseUrl, api_key: TEST_KEY, max_retries: 0 },
    onebot: { enabled: false },
    plugins: { watch: false },
  });
  const homed = await startHomed(ws);
  try {
    const off = await fetch(`${homed.url}/onebot/v11/ws`);
    assert.equal(off.status, 503);
    assert.deepEqual(await off.json(), {
      error: {
        code: "unavailable",
        message: 'QQ is not on: set onebot.enabled: true, or add a plugin with native: "onebot" (plugins/qq)',
      },
    });
    await Deno.mkdir(join(ws.dir, "plugins", "qq"), { recursive: true });
    for (const file of ["skill.json", "SKILL.md"]) {
      await Deno.copyFile(join(REPO, "plugins", "qq", file), join(ws.dir, "plugins", "qq", file));
    }
    const reload = await postJson(`${homed.url}/api/plugins/reload`, {});
    assert.deepEqual([reload.status, reload.body], [200, { skills: 1, eligible: 1, problems: [] }]);
    const { plugins, problems } = await (await fetch(`${homed.url}/api/plugins`)).json();
    assert.deepEqual(problems, []);
    assert.deepEqual(
      (plugins as Array<Record<string, unknown>>).map((p) => [p.name, p.kind, p.eligible, p.errors]),
      [["qq", "skill", true, []], ["qq", "native", true, []]],
    );
    const on = await fetch(`${homed.url}/onebot/v11/ws`);
    assert.deepEqual([on.status, await on.json()], [400, {
      error: { code: "bad_request", message: 'X-Self-ID must be the bot\'s QQ number, got ""' },
    }]);
  } finally {
    await teardown(
      async () => assert.equal(await homed.stop(), 0, homed.stderr()),
      () => fake.close(),
    );
  }
});
