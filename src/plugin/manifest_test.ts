import assert from "node:assert/strict";
import { ManifestError, readManifest } from "./manifest.ts";

const read = (manifest: Record<string, unknown>) =>
  readManifest(JSON.stringify(manifest), "/p/pager", "/p/pager/skill.json");
const base = { name: "pager", version: "1.0.0", description: "A pager" };

Deno.test("skill.json problems name the field: schema, paths, io, exec program", () => {
  const cases: Array<[Record<string, unknown> | string, RegExp]> = [
    ["{not json", /^\/p\/pager\/skill\.json: not JSON/],
    [{ ...base, version: "1" }, /version: must match pattern/],
    [{ ...base, extra: 1 }, /\(top level\): unknown field "extra"/],
    [{ ...base, lua: "../x.lua" }, /lua: "\.\.\/x\.lua" is outside the plugin's folder/],
    [
      { ...base, io: { capabilities: ["text"] } },
      /io: a plugin's channel needs the lua script that serves it; io\.on_output: a channel that shows output needs the Lua function that shows it/,
    ],
    [
      { ...base, lua: "m.lua", io: { capabilities: ["smell"], on_output: "show" } },
      /io\.capabilities\.0: must be one of "text"/,
    ],
    [{ ...base, lua: "m.lua", io: { poll: { lua: "p", every_ms: 10 } } }, /io\.poll\.every_ms: must be >= 1000/],
    [
      { ...base, native: "onebot", lua: "m.lua", io: {} },
      /io: a native plugin's device comes from its factory, not from io/,
    ],
    [
      {
        ...base,
        tools: [{
          name: "t",
          description: "d",
          parameters: { type: "object" },
          handler: { exec: { argv: ["{prog}"] } },
        }],
      },
      /tools\.0\.handler\.exec\.argv\.0: "\{prog\}" must be a program name or an absolute path/,
    ],
    [
      {
        ...base,
        tools: [{
          name: "t",
          description: "d",
          parameters: { type: "object" },
          handler: { lua: "f", exec: { argv: ["ls"] } },
        }],
      },
      /tools\.0\.handler: must NOT have more than 1 fields/,
    ],
  ];
  for (const [manifest, pattern] of cases) {
    assert.throws(
      () => typeof manifest === "string" ? readManifest(manifest, "/p/pager", "/p/pager/skill.json") : read(manifest),
      (error: unknown) => {
        assert.ok(error instanceof ManifestError, String(error));
        assert.match(error.message, pattern);
        return true;
      },
      JSON.stringify(manifest),
    );
  }
  const ok = read({
    ...base,
    lua: "main.lua",
    io: { capabilities: ["text"], on_output: "show", poll: { lua: "poll", every_ms: 60_000 } },
  });
  assert.deepEqual(ok.io, { capabilities: ["text"], onOutput: "show", poll: { lua: "poll", everyMs: 60_000 } });
  assert.equal(ok.lua, "/p/pager/main.lua");
});
