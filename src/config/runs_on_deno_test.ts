import assert from "node:assert/strict";
import { runsOnDeno } from "./runs_on_deno.ts";

Deno.test("a deno executable runs homed's sources; anything else is a compiled homed", () => {
  assert.equal(runsOnDeno("/usr/local/bin/deno"), true);
  assert.equal(runsOnDeno("C:\\deno\\deno.exe"), true);
  assert.equal(runsOnDeno("/root/.npm/_npx/7a40/node_modules/deno/deno"), true);
  assert.equal(runsOnDeno("/usr/local/bin/homed"), false);
  assert.equal(runsOnDeno("/opt/denoland/homed"), false);
  assert.equal(runsOnDeno(Deno.execPath()), true, "the tests run on deno");
});
