/**
 * End to end for the CLI and start-up: `homed chat`, `doctor`, `init`, `flags`, auth, and the errors a bad config
 * or a missing right gives. Each runs real processes with the flags the deno tasks use.
 */

import assert from "node:assert/strict";
import { luaWasmPath } from "../src/lua/wasm_path.ts";
import { join } from "node:path";
import { parse } from "yaml";
import { DEFAULT_PERSONA_TEXT } from "../src/agent/personal.ts";
import { DAEMON_V8_FLAGS } from "../src/rights/command_flags.ts";
import { parseConfig } from "../src/config/load.ts";
import { DEFAULT_CONTRACT, TEST_KEY } from "./support/contract.ts";
import { FakeLlm } from "./support/fake_llm.ts";
import { deno, postJson, REPO as REPO_DIR, startHomed, taskFlags, workspace } from "./support/homed_process.ts";
import { teardown } from "./support/teardown.ts";

const KEY = TEST_KEY;
const TOKEN = "a-long-enough-api-token";

Deno.test("homed chat holds a conversation with tool calls against a running daemon", async () => {
  const fake = FakeLlm.start(DEFAULT_CONTRACT);
  fake.enqueue(
    { reply: "Hello, I am Alfred." },
    { toolCalls: [{ name: "output_list_channels", arguments: {} }] },
    { reply: "Only http for now." },
  );
  const ws = await workspace({ llm: { base_url: fake.baseUrl, api_key: KEY }, daemon: { api_token: TOKEN } }, {
    HOMED_API_TOKEN: "unused-by-this-config",
  });
  const homed = await startHomed(ws);
  try {
    const flags = await taskFlags("chat", ws.env);
    assert.ok(flags.includes(`--allow-net=127.0.0.1:${ws.port}`), flags.join(" "));
    const result = await deno(["run", ...flags, "src/main.ts", "chat", "--user", "bob"], {
      env: ws.env,
      stdin: "Who are you?\nWhich channels?\n",
    });
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout, "Hello, I am Alfred.\nOnly http for now.\n");
    const last = fake.requests[2]!.body.messages as Array<{ role: string; content: string }>;
    assert.deepEqual(last.map((m) => m.role), ["system", "user", "assistant", "user", "assistant", "tool"]);
    assert.ok(
      last[3]!.content.endsWith('\n\n[via http, from owner as "bob", trust owner] Which channels?'),
      last[3]!.content,
    );
    assert.equal(
      last[1]!.content,
      '[via http, from owner as "bob", trust owner] Who are you?',
      "history keeps the message without its reference",
    );
  } finally {
    await teardown(async () => assert.equal(await homed.stop(), 0, homed.stderr()), () => fake.close());
  }
});

Deno.test("homed chat says when the daemon is not running", async () => {
  const ws = await workspace({});
  const flags = await taskFlags("chat", ws.env);
  const result = await deno(["run", ...flags, "src/main.ts", "chat", "--message", "hi"], { env: ws.env });
  assert.equal(result.code, 1);
  assert.match(result.stdout, new RegExp(`cannot reach homed at http://127\\.0\\.0\\.1:${ws.port}.*is it running\\?`));
  await Deno.remove(ws.dir, { recursive: true });
});

Deno.test("/api/* needs the bearer token when one is set: missing 401, wrong 403", async () => {
  const fake = FakeLlm.start(DEFAULT_CONTRACT);
  fake.enqueue({ reply: "authorised" });
  const homed = await startHomed(
    await workspace({ llm: { base_url: fake.baseUrl, api_key: KEY }, daemon: { api_token: TOKEN } }),
  );
  try {
    assert.equal((await (await fetch(`${homed.url}/healthz`)).json()).ok, true);
    const missing = await fetch(`${homed.url}/api/status`);
    assert.equal(missing.status, 401);
    assert.equal(missing.headers.get("www-authenticate"), 'Bearer realm="homed"');
    assert.equal((await missing.json()).error.code, "unauthorized");
    const wrong = await postJson(`${homed.url}/api/chat`, { text: "hi" }, { authorization: "Bearer not-the-token" });
    assert.equal(wrong.status, 403);
    assert.equal((wrong.body.error as { code: string }).code, "forbidden");
    const right = await postJson(`${homed.url}/api/chat`, { text: "hi" }, { authorization: `Bearer ${TOKEN}` });
    assert.equal(right.status, 200);
    assert.equal(right.body.reply, "authorised");
  } finally {
    await teardown(async () => assert.equal(await homed.stop(), 0, homed.stderr()), () => fake.close());
  }
});

Deno.test("homed refuses to listen beyond loopback without a token, naming the key", async () => {
  const ws = await workspace({ daemon: { listen_addr: "0.0.0.0:0" } });
  const flags = await taskFlags("run", ws.env);
  const result = await deno(["run", ...flags, "src/main.ts", "run"], { env: ws.env });
  assert.equal(result.code, 2);
  assert.match(
    result.stderr,
    /daemon\.api_token: got nothing; allowed: a token of at least 16 characters, required because daemon\.listen_addr "0\.0\.0\.0:0" is beyond loopback/,
  );
  assert.match(result.stderr, /onebot\.access_token: got nothing/);
  await Deno.remove(ws.dir, { recursive: true });
});

Deno.test("a bad config fails start-up naming the key, the value and what is allowed", async () => {
  const ws = await workspace({ llm: { temperature: 3, thinking: "maybe" }, memory: { cold_after: "3 days" } });
  const flags = await taskFlags("run", ws.env);
  const result = await deno(["run", ...flags, "src/main.ts", "run"], { env: ws.env });
  assert.equal(result.code, 2);
  assert.match(result.stderr, new RegExp(`Invalid config \\(${ws.configPath}\\)`));
  assert.match(result.stderr, /llm\.temperature: got 3; allowed: a number from 0 to 2/);
  assert.match(result.stderr, /llm\.thinking: got "maybe"; allowed: true, false or "omit"/);
  assert.match(result.stderr, /memory\.cold_after: got "3 days"; allowed: a duration such as/);
  await Deno.remove(ws.dir, { recursive: true });
});

Deno.test("a missing right is a start-up error naming the path", async () => {
  const ws = await workspace({});
  const flags = (await taskFlags("run", ws.env)).filter((flag) => !flag.startsWith("--allow-write"));
  const result = await deno(["run", ...flags, "src/main.ts", "run"], { env: ws.env });
  assert.equal(result.code, 2);
  assert.match(result.stderr, new RegExp(`lacks rights its config needs: write access to ${ws.dir}/knowledge`));
  assert.match(result.stderr, /homed flags --mode run/);
  await Deno.remove(ws.dir, { recursive: true });
});

Deno.test("flags are narrow: config and data anywhere, no -A, no run or ffi", async () => {
  const ws = await workspace({
    daemon: { data_dir: "/tmp/homed-elsewhere-data" },
    llm: { base_url: "https://llm.example:8443/v1" },
  });
  const flags = await taskFlags("run", ws.env);
  assert.deepEqual(flags, [
    "--no-prompt",
    `--allow-read=${ws.configPath},${ws.dir}/personal.md,${ws.dir}/intents,${ws.dir}/knowledge,${ws.dir}/plugins,/tmp/homed-elsewhere-data,${luaWasmPath()}`,
    `--allow-write=${ws.dir}/knowledge,${ws.dir}/plugins,/tmp/homed-elsewhere-data`,
    `--allow-net=127.0.0.1:${ws.port},llm.example:8443`,
    "--allow-env=HOMED_CONFIG,HOMED_API_TOKEN,DEEPSEEK_API_KEY,ONEBOT_ACCESS_TOKEN,LOG_TOKENS,LOG_STREAM,NOTIFY_SOCKET",
    // The data dir's free space (the low-disk warning): statfs only, never all of --allow-sys.
    "--allow-sys=statfs",
    DAEMON_V8_FLAGS,
  ]);
  const printed = await deno(["task", "--quiet", "flags", "--config", ws.configPath], {
    env: { PATH: Deno.env.get("PATH") ?? "" },
  });
  assert.equal(printed.code, 0, printed.stderr);
  assert.equal(printed.stdout.trim(), flags.join(" "));
  // A bad config still yields flags that let homed read it and report the problem.
  await Deno.writeTextFile(ws.configPath, "llm: [unclosed\n");
  const fallback = await taskFlags("run", ws.env);
  assert.deepEqual(fallback.slice(0, 2), ["--no-prompt", `--allow-read=${ws.configPath}`]);
  const result = await deno(["run", ...fallback, "src/main.ts", "run"], { env: ws.env });
  assert.equal(result.code, 2);
  assert.match(result.stderr, /the file is not valid YAML/);
  await Deno.remove(ws.dir, { recursive: true });
});

Deno.test("homed doctor reports each check and fails on a refused key", async () => {
  const fake = FakeLlm.start({ apiKey: KEY, model: "fake-model" });
  for (const [key, expectCode] of [[KEY, 0], ["sk-wrong-key-000000", 1]] as const) {
    const ws = await workspace({ llm: { base_url: fake.baseUrl, api_key: key, model: "fake-model" } });
    const flags = await taskFlags("doctor", ws.env);
    const result = await deno(["run", ...flags, "src/main.ts", "doctor"], { env: ws.env });
    assert.equal(result.code, expectCode, result.stdout + result.stderr);
    assert.match(result.stdout, new RegExp(`ok {3}config +${ws.configPath} \\(\\$HOMED_CONFIG\\) is valid`));
    assert.match(result.stdout, /ok {3}permissions +every right/);
    assert.match(result.stdout, /ok {3}data_dir +.* is writable/);
    assert.match(
      result.stdout,
      expectCode === 0
        ? /ok {3}llm +http:\/\/127\.0\.0\.1:\d+\/v1 reachable, key accepted\n/
        : /FAIL llm +.*refused the API key \(HTTP 401\)/,
    );
    await Deno.remove(ws.dir, { recursive: true });
  }
  await fake.close();
});

Deno.test("homed doctor says when homed.env lets others read the keys, naming the file and the fix", async () => {
  const ws = await workspace({});
  try {
    const envFile = join(ws.dir, "homed.env");
    await Deno.writeTextFile(envFile, "DEEPSEEK_API_KEY=sk-x\n", { mode: 0o644 });
    await Deno.chmod(envFile, 0o644);
    const open = await deno(["run", ...await taskFlags("doctor", ws.env), "src/main.ts", "doctor"], { env: ws.env });
    assert.match(
      open.stdout,
      new RegExp(`FAIL secrets +${envFile} has mode 644: others can read the keys in it; run chmod 600 ${envFile}`),
    );
    await Deno.chmod(envFile, 0o600);
    const closed = await deno(["run", ...await taskFlags("doctor", ws.env), "src/main.ts", "doctor"], { env: ws.env });
    assert.match(closed.stdout, /ok {3}secrets +.*homed\.env is readable by its owner only \(600\)/);
  } finally {
    await Deno.remove(ws.dir, { recursive: true });
  }
});

Deno.test("homed init writes a config that loads and points at the checkout, and never overwrites", async () => {
  const home = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-init-" });
  const entry = new URL("../src/main.ts", import.meta.url).pathname;
  const run = (extra: string[]) =>
    deno(["run", "--no-prompt", `--allow-read=${home}`, `--allow-write=${home}`, entry, "init", ...extra], {
      cwd: home,
    });
  const created = await run([]);
  assert.equal(created.code, 0, created.stderr);
  assert.match(
    created.stdout,
    new RegExp(`^wrote ${home}/config/homed\\.yaml\nwrote ${home}/personal\\.md\n\nNext steps:\n`),
  );
  assert.match(created.stdout, / {2}2\. Check config, rights and the LLM: +npx -y deno@2\.9\.6 task doctor\n/);
  const text = await Deno.readTextFile(join(home, "config/homed.yaml"));
  const raw = parse(text);
  assert.deepEqual(raw.paths, {
    personal: "../personal.md",
    knowledge: "../knowledge",
    plugins: "../plugins",
    intents: "../intents",
  });
  assert.equal(raw.daemon.data_dir, "../data");
  const loaded = parseConfig({
    text,
    location: { path: join(home, "config/homed.yaml"), origin: "--config" },
    readEnv: () => undefined,
    cwd: "/",
  });
  assert.equal(loaded.config.paths.personal, join(home, "personal.md"));
  assert.equal(loaded.config.daemon.data_dir, join(home, "data"));
  assert.equal(await Deno.readTextFile(join(home, "personal.md")), DEFAULT_PERSONA_TEXT);
  const again = await run([]);
  assert.equal(again.code, 1);
  assert.match(again.stderr, new RegExp(`${home}/config/homed\\.yaml already exists; pass --force`));
  await Deno.remove(home, { recursive: true });
});

Deno.test("start-up problems outside the config are named: a busy port, an unwritable data dir", async () => {
  const busy = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (busy.addr as Deno.NetAddr).port;
  const ws = await workspace({ daemon: { listen_addr: `127.0.0.1:${port}` } });
  const flags = await taskFlags("run", ws.env);
  const inUse = await deno(["run", ...flags, "src/main.ts", "run"], { env: ws.env });
  busy.close();
  assert.equal(inUse.code, 1);
  assert.match(
    inUse.stderr,
    new RegExp(`Cannot listen on 127\\.0\\.0\\.1:${port} \\(daemon\\.listen_addr\\): the address is in use`),
  );

  await Deno.writeTextFile(join(ws.dir, "not-a-dir"), "");
  const blocked = await workspace({ daemon: { data_dir: join(ws.dir, "not-a-dir", "data") } });
  const result = await deno(["run", ...await taskFlags("run", blocked.env), "src/main.ts", "run"], {
    env: blocked.env,
  });
  assert.equal(result.code, 1);
  assert.match(result.stderr, new RegExp(`daemon\\.data_dir: ${ws.dir}/not-a-dir/data is not writable`));
  await Deno.remove(ws.dir, { recursive: true });
  await Deno.remove(blocked.dir, { recursive: true });
});

Deno.test("homed init writes a config outside config/ with flags naming that path, and says what to do next", async () => {
  const home = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-init-far-" });
  const target = join(home, "etc", "homed", "homed.yaml");
  const env = { HOMED_CONFIG: target };
  // As `deno task init` does: flags computed for HOMED_CONFIG, run from the checkout's folder (here: home).
  const flags = await deno([
    "run",
    "--no-prompt",
    "--allow-read",
    "--allow-env",
    join(REPO_DIR, "src/flags.ts"),
    "init",
  ], {
    env,
    cwd: home,
  });
  assert.equal(flags.code, 0, flags.stderr);
  assert.equal(
    flags.stdout.trim(),
    `--no-prompt --allow-read=${home}/etc/homed,${home}/personal.md --allow-write=${home}/etc/homed,${home}/personal.md --allow-env=HOMED_CONFIG,LOG_TOKENS,LOG_STREAM --allow-run=${Deno.execPath()}`,
  );
  const printed = await deno(
    [
      "run",
      "--no-prompt",
      "--allow-read",
      "--allow-env",
      join(REPO_DIR, "src/main.ts"),
      "flags",
      "--mode",
      "init",
      "--config",
      target,
    ],
    { cwd: home },
  );
  assert.equal(printed.stdout.trim(), flags.stdout.trim(), "homed flags --mode init --config prints the same");
  const result = await deno(["run", ...flags.stdout.trim().split(" "), join(REPO_DIR, "src/main.ts"), "init"], {
    env,
    cwd: home,
  });
  assert.equal(result.code, 0, result.stderr);
  // With the right to run Deno (as the task gives it), init runs doctor on the new config before the next steps.
  assert.match(
    result.stdout,
    new RegExp(
      `^wrote ${target}\nwrote ${home}/personal\\.md\n\nDoctor \\(.*task doctor\\):\nok +config [^]*\nNext steps:\n`,
    ),
  );
  assert.match(result.stdout, /^FAIL llm +No LLM API key is set/m, "doctor's verdict on the key is shown");
  assert.match(result.stdout, /export DEEPSEEK_API_KEY=sk-…/);
  assert.match(result.stdout, new RegExp(`HOMED_CONFIG=${target} npx -y deno@2\\.9\\.6 task doctor`));
  assert.match(result.stdout, new RegExp(`HOMED_CONFIG=${target} npx -y deno@2\\.9\\.6 task start`));
  const loaded = parseConfig({
    text: await Deno.readTextFile(target),
    location: { path: target, origin: "--config" },
    readEnv: () => undefined,
    cwd: "/",
  });
  assert.equal(loaded.config.paths.personal, join(home, "personal.md"));
  // --config with the task's (HOMED_CONFIG-less) flags: refused with the right advice, nothing written.
  const elsewhere = join(home, "other", "homed.yaml");
  const refused = await deno([
    "run",
    ...flags.stdout.trim().split(" "),
    join(REPO_DIR, "src/main.ts"),
    "init",
    "--config",
    elsewhere,
  ], {
    env,
    cwd: home,
  });
  assert.equal(refused.code, 2);
  assert.match(
    refused.stderr,
    new RegExp(`lacks rights its config needs: read access to ${home}/other; write access to ${home}/other`),
  );
  assert.match(refused.stderr, /name the config through HOMED_CONFIG/);
  await Deno.remove(home, { recursive: true });
});

Deno.test("homed version names the version, the commit and the Deno it runs on", async () => {
  for (const args of [["version"], ["--version"]]) {
    const result = await deno(["run", "--no-prompt", "src/main.ts", ...args]);
    assert.equal(result.code, 0, result.stderr);
    assert.match(
      result.stdout.trim(),
      new RegExp(
        `^homed \\d+\\.\\d+\\.\\d+ \\(commit (dev|[0-9a-f]{7,40}); deno ${
          Deno.version.deno.replaceAll(".", "\\.")
        }, v8 \\S+, typescript \\S+\\)$`,
      ),
    );
  }
});
