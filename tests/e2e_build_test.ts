/**
 * End to end for the device builds: `deno task bundle` (the documented fallback where no denort can be had) gives one
 * homed.js that runs on the pinned Deno with the flags it computes itself — Lua adapter embedded, glue.wasm beside
 * it, starter knowledge seeded on a first start — and `deno task release --bundle` packs it with the config, a unit
 * and the adapters. `deno task compile` without a denort says where to get one.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { readTar } from "../src/backup/tar.ts";
import { FakeVendor } from "./support/fake_vendor.ts";
import { deno, healthy, postJson, REPO, spawnDeno, workspace } from "./support/homed_process.ts";
import { waitFor } from "./support/wait.ts";
import { buildScriptArgs } from "./support/build_script.ts";

Deno.test("the bundle runs on Deno with its own computed flags: chat through an embedded Lua adapter, knowledge seeded", async () => {
  const out = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-bundle-" });
  const vendor = FakeVendor.start("ollama");
  const ws = await workspace({
    llm: { provider: "lua", adapter: "builtin:ollama", base_url: vendor.baseUrl, model: "qwen3:8b", max_retries: 0 },
    onebot: { enabled: false },
    paths: { knowledge: "./fresh-knowledge" },
  });
  let child: Deno.ChildProcess | undefined;
  try {
    const built = await deno([...buildScriptArgs(out), "bundle", "--out", out]);
    assert.equal(built.code, 0, built.stdout + built.stderr);
    const script = join(out, "homed.js");
    for (const name of ["homed.js", "glue.wasm", "homed"]) assert.ok((await Deno.stat(join(out, name))).isFile, name);
    assert.equal((await Deno.stat(join(out, "homed"))).mode! & 0o111, 0o111, "the launcher is executable");

    const version = await deno(["run", "--no-prompt", "--allow-read", "--allow-env", script, "version"]);
    assert.match(
      version.stdout,
      /^homed \d+\.\d+\.\d+ \(commit (?!dev)[0-9a-f]{7,}|^homed \d+\.\d+\.\d+ \(commit unknown/,
    );
    const flags = await deno(["run", "--no-prompt", "--allow-read", "--allow-env", script, "flags"], { env: ws.env });
    assert.equal(flags.code, 0, flags.stderr);
    assert.ok(flags.stdout.includes(`${join(out, "glue.wasm")}`), "the wasm beside the bundle, not node_modules");
    assert.ok(!flags.stdout.includes("node_modules"), flags.stdout);

    child = spawnDeno(["run", ...flags.stdout.trim().split(" "), script, "run"], { env: ws.env, cwd: ws.dir });
    const url = `http://127.0.0.1:${ws.port}`;
    await waitFor(() => healthy(url), "the bundled homed", { limitMs: 20_000 });
    vendor.enqueue({ reply: "Hello from the bundle." });
    const { status, body } = await postJson(`${url}/api/chat`, { text: "Hi" });
    assert.equal(status, 200, JSON.stringify(body));
    assert.equal(body.reply, "Hello from the bundle.");
    // The web console travels inside the bundle.
    const page = await fetch(`${url}/`);
    assert.equal(page.status, 200);
    assert.match(await page.text(), /<script type="module" src="\/console\/console\.js"/);
    const chatModule = await fetch(`${url}/console/pages/chat.js`);
    assert.equal(chatModule.headers.get("content-type"), "text/javascript; charset=utf-8");
    assert.equal(await chatModule.text(), await Deno.readTextFile(join(REPO, "src/api/console/assets/pages/chat.js")));
    assert.equal(
      await Deno.readTextFile(join(ws.dir, "fresh-knowledge", "cooking", "content.md")),
      await Deno.readTextFile(join(REPO, "knowledge", "cooking", "content.md")),
      "the starter knowledge was copied on the first start",
    );
    child.kill("SIGTERM");
    assert.equal((await child.status).code, 0);
    await child.stderr.cancel();
    child = undefined;
  } finally {
    if (child) {
      try {
        child.kill("SIGKILL");
      } catch { /* it ended on its own */ }
      await child.status;
      await child.stderr.cancel();
    }
    await vendor.close();
    await Deno.remove(out, { recursive: true });
    await Deno.remove(ws.dir, { recursive: true });
  }
});

Deno.test("release --bundle packs the bundle, example config, a standard-layout unit and the adapters", async () => {
  const out = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-release-" });
  try {
    const packed = await deno([...buildScriptArgs(out), "release", "--bundle", "--out", out]);
    assert.equal(packed.code, 0, packed.stdout + packed.stderr);
    const archive = /Packed (\S+\.tar\.gz) \(bundle\)/.exec(packed.stdout)?.[1];
    assert.ok(archive, packed.stdout);
    const members = new Map<string, Uint8Array>();
    const file = await Deno.open(archive);
    for await (const entry of readTar(file.readable.pipeThrough(new DecompressionStream("gzip")))) {
      members.set(entry.path.replace(/^homed-[^/]+\//, ""), entry.data);
    }
    assert.deepEqual([...members.keys()].sort(), [
      "INSTALL.md",
      "adapters/anthropic.lua",
      "adapters/ollama.lua",
      "glue.wasm",
      "homed",
      "homed.example.yaml",
      "homed.js",
      "homed.service",
      "silk.wasm",
    ]);
    const unit = new TextDecoder().decode(members.get("homed.service"));
    assert.match(
      unit,
      /^ExecStart=\/usr\/local\/bin\/deno run --no-prompt .*--allow-read=[^ ]*\/usr\/local\/lib\/homed\/glue\.wasm/m,
    );
    assert.match(unit, / \/usr\/local\/lib\/homed\/homed\.js --standard-layout run$/m);
    assert.match(unit, /^ReadWritePaths=-\/var\/lib\/homed$/m);
    assert.match(unit, /^EnvironmentFile=-\/etc\/homed\/homed\.env$/m);
    assert.doesNotMatch(unit, new RegExp(REPO), "nothing of the build machine's paths");
  } finally {
    await Deno.remove(out, { recursive: true });
  }
});

Deno.test("compile without a usable denort says where to get one and how to fall back", async () => {
  const out = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-compile-" });
  try {
    const result = await deno([...buildScriptArgs(out), "compile", "--out", out], {
      env: { DENORT_BIN: join(out, "none") },
    });
    assert.equal(result.code, 1);
    assert.match(result.stderr, new RegExp(`deno compile failed with DENORT_BIN=${out}/none`));
    assert.match(result.stderr, /Could not find denort/);
    const info = await Deno.readTextFile(join(REPO, "src", "build_info.ts"));
    assert.match(info, /COMMIT = "dev"/, "build_info.ts is put back after a failed build");
  } finally {
    await Deno.remove(out, { recursive: true });
  }
});
