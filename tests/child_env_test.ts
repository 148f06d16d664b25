/**
 * Test children keep what Deno needs from the shell (its cache, certificates, proxies) and nothing secret, and the
 * test task grants the suite exactly the right to read those variables.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { childEnv, PASSED_TO_CHILDREN, REPO } from "./support/homed_process.ts";

Deno.test("the test task may read every variable test children keep, and childEnv passes only those and the test's own", async () => {
  const tasks = JSON.parse(await Deno.readTextFile(join(REPO, "deno.json"))).tasks;
  const command: string = tasks.test.command;
  const allowed = /--allow-env=(\S+)/.exec(command)?.[1]?.split(",") ?? [];
  for (const name of PASSED_TO_CHILDREN) {
    assert.ok(allowed.includes(name), `--allow-env of the test task lacks ${name}`);
  }
  assert.deepEqual(tasks.test.dependencies, ["setup"], "the test task runs the install step first");

  const env = childEnv({ HOMED_CONFIG: "/tmp/h.yaml", NO_COLOR: "0" });
  assert.equal(env.HOMED_CONFIG, "/tmp/h.yaml");
  assert.equal(env.NO_COLOR, "0", "the test's own values win");
  for (const name of Object.keys(env)) {
    assert.ok(
      (PASSED_TO_CHILDREN as readonly string[]).includes(name) || name === "HOMED_CONFIG" || name === "NO_COLOR" ||
        name === "DENO_NO_UPDATE_CHECK",
      `${name} is not passed to children`,
    );
  }
  for (const name of PASSED_TO_CHILDREN) assert.equal(env[name], Deno.env.get(name), name);
  for (const secret of ["DENO_AUTH_TOKENS", "NPM_TOKEN", "DEEPSEEK_API_KEY", "HOMED_API_TOKEN"]) {
    assert.ok(!(PASSED_TO_CHILDREN as readonly string[]).includes(secret), `${secret} never reaches a child`);
  }
});

Deno.test("a child Deno started by a test finds the same cache as the suite", async () => {
  const expected = Deno.env.get("DENO_DIR");
  const child = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json"],
    env: childEnv(),
    clearEnv: true,
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.ok(child.success, new TextDecoder().decode(child.stderr));
  const info = JSON.parse(new TextDecoder().decode(child.stdout));
  if (expected) assert.equal(info.denoDir, expected);
  else assert.match(info.denoDir, /deno$/, "the default cache under HOME");
  assert.ok(info.npmCache.startsWith(info.denoDir));
});
