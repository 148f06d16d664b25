import assert from "node:assert/strict";
import { testPluginIo } from "../../tests/support/plugins.ts";
import { join } from "node:path";
import { testToolContext } from "../../tests/support/tool_context.ts";
import { fillArgv } from "./exec_tool.ts";

Deno.test("argv templates fill fields as whole values and refuse what could become an option or is not a value", () => {
  assert.deepEqual(fillArgv(["curl", "-s", "wttr.in/{city}?format={n}"], { city: "Hang zhou; rm -rf /", n: 3 }), [
    "curl",
    "-s",
    "wttr.in/Hang zhou; rm -rf /?format=3",
  ]);
  const cases: Array<[Record<string, unknown>, RegExp]> = [
    [{}, /^argument "city" is missing$/],
    [{ city: "-rf" }, /^argument "city" may not start with "-", got "-rf"$/],
    [{ city: { a: 1 } }, /^argument "city" must be text, a number or true\/false, got \{"a":1\}$/],
    [{ city: "a\0b" }, /^argument "city" contains a NUL character$/],
  ];
  for (const [args, pattern] of cases) {
    assert.throws(() => fillArgv(["ls", "{city}"], args), (error: unknown) => {
      assert.ok(error instanceof TypeError);
      assert.match(error.message, pattern);
      return true;
    });
  }
});

Deno.test("exec tools run only when allowed and listed, with a scrubbed environment, capped output and a clear failure", async () => {
  const deno = Deno.execPath();
  const root = await Deno.realPath(await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-exec-" }));
  const tool = (name: string, argv: string[], extra: Record<string, unknown> = {}) => ({
    name,
    description: name,
    parameters: { type: "object", properties: { city: { type: "string" } }, additionalProperties: false },
    handler: { exec: { argv, ...extra } },
  });
  await Deno.mkdir(join(root, "weather"));
  await Deno.writeTextFile(
    join(root, "weather", "skill.json"),
    JSON.stringify({
      name: "weather",
      version: "1.0.0",
      description: "Weather by a program",
      tools: [
        tool("weather_now", [
          deno,
          "eval",
          "console.log(Deno.args.join('|'), Object.keys(Deno.env.toObject()).sort().join(','))",
          "{city}",
          "fixed",
        ]),
        tool("weather_flood", [deno, "eval", "console.log('x'.repeat(5000))"], { max_output_bytes: 1000 }),
        tool("weather_fail", [deno, "eval", "console.error('no such city'); Deno.exit(3)"]),
      ],
    }),
  );
  // Through the daemon's path: the plugin's device in a real IOManager, its tools in that IOManager's registry.
  const open = async (exec: { allowed: boolean; allowlist: string[] }) => {
    const opened = await testPluginIo(root, {
      exec: { ...exec, env: () => ({ PATH: "/usr/bin:/bin", LANG: "C.UTF-8", WEATHER_KEY: "k" }) },
    });
    await opened.plugins.start();
    return opened;
  };
  let { tools, plugins, io, stop } = await open({ allowed: false, allowlist: [deno] });
  assert.equal(tools.has("weather_now"), false);
  assert.match(
    plugins.problems().join("\n"),
    /weather: tool weather_now: exec tools are off \(plugins\.allow_exec: false\)/,
  );
  assert.equal(io.channels().some((channel) => channel.name === "plugin-weather"), false, "no device either");
  await stop();
  ({ tools, plugins, io, stop } = await open({ allowed: true, allowlist: ["curl"] }));
  assert.match(
    plugins.problems().join("\n"),
    new RegExp(
      `weather: tool weather_now: ${
        deno.replaceAll("/", "\\/").replaceAll(".", "\\.")
      } is not in plugins\\.exec_allowlist`,
    ),
  );
  assert.equal(tools.has("weather_now"), false);
  await stop();
  ({ tools, plugins, io, stop } = await open({ allowed: true, allowlist: [deno] }));
  assert.deepEqual(plugins.problems(), []);
  assert.ok(io.channels().some((channel) => channel.name === "plugin-weather"));
  const call = (name: string, args: Record<string, unknown>) =>
    tools.call(name, JSON.stringify(args), testToolContext());
  assert.deepEqual(await call("weather_now", { city: "Hang zhou" }), {
    ok: true,
    content: "Hang zhou|fixed LANG,PATH,WEATHER_KEY\n",
  });
  const injected = await call("weather_now", { city: "--allow-all" });
  assert.equal(injected.ok, false);
  assert.match(injected.content, /argument "city" may not start with "-", got "--allow-all"/);
  const flood = await call("weather_flood", {});
  assert.equal(flood.ok, false);
  assert.match(flood.content, /wrote more than 1000 bytes and was stopped$/);
  const failed = await call("weather_fail", {});
  assert.equal(failed.ok, false);
  assert.match(failed.content, /exited with code 3: no such city$/);
  await stop();
  await Deno.remove(root, { recursive: true });
});
