/**
 * End to end: `homed init` answered by a script (lines on standard input, as `deno task init` gets them when stdin is
 * not a terminal) writes a config that doctor accepts — doctor runs on it with the key from the 0600 `homed.env`,
 * which the fake LLM checks — and never prints the key. A bad answer stops it, naming the question and the answer.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { parse } from "yaml";
import { FakeLlm } from "./support/fake_llm.ts";
import { DEFAULT_CONTRACT, TEST_KEY } from "./support/contract.ts";
import { deno, freePort, REPO } from "./support/homed_process.ts";

/** This machine's zone as init's child sees it: `TZ`, which the tests set so the default is known. */
const SYSTEM_ZONE = "Asia/Tokyo";

/**
 * `homed init` with the flags `deno task init` gives it, answers on stdin; `doctor: false` leaves out the right to run
 * Deno, so init does not run doctor (which would reach the LLM's host).
 */
async function init(home: string, stdin: string, extra: string[] = [], options: { doctor?: boolean } = {}) {
  const env = { HOMED_CONFIG: join(home, "etc", "homed.yaml"), TZ: SYSTEM_ZONE };
  const flags = await deno(["run", "--no-prompt", "--allow-read", "--allow-env", join(REPO, "src/flags.ts"), "init"], {
    env,
    cwd: home,
  });
  assert.equal(flags.code, 0, flags.stderr);
  const given = flags.stdout.trim().split(" ").filter((flag) =>
    options.doctor !== false || !flag.startsWith("--allow-run")
  );
  return await deno(["run", ...given, join(REPO, "src/main.ts"), "init", ...extra], {
    env,
    cwd: home,
    stdin,
  });
}

Deno.test("scripted init: an OpenAI-compatible URL, model and key give a config doctor accepts; the key stays unseen", async () => {
  const fake = FakeLlm.start(DEFAULT_CONTRACT);
  const home = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-init-script-" });
  try {
    const port = freePort();
    const result = await init(home, `${fake.baseUrl}\nfake-model\n${TEST_KEY}\nno\n`, ["--port", String(port)]);
    assert.equal(result.code, 0, result.stderr);
    assert.ok(!`${result.stdout}${result.stderr}`.includes(TEST_KEY), "the key is never echoed");
    const envFile = join(home, "etc", "homed.env");
    assert.equal((await Deno.stat(envFile)).mode! & 0o777, 0o600);
    assert.equal(await Deno.readTextFile(envFile), `LLM_API_KEY=${TEST_KEY}\n`);
    assert.match(result.stdout, /homed\.env \(mode 0600\) with LLM_API_KEY — values not shown/);
    for (const check of ["config", "permissions", "persona", "data_dir", "listen", "llm"]) {
      assert.match(result.stdout, new RegExp(`^ok +${check} `, "m"), `doctor: ${check}\n${result.stdout}`);
    }
    assert.match(result.stdout, /ok +llm +http:\/\/127\.0\.0\.1:\d+\/v1 reachable, key accepted/);
    assert.doesNotMatch(result.stdout, /Check config, rights and the LLM/, "doctor passed: no need to run it again");
    const config = parse(await Deno.readTextFile(join(home, "etc", "homed.yaml")));
    // thinking: the starter's false — what DeepSeek-compatible servers need and local servers ignore. No answer to
    // the time zone question (the input ended): this machine's.
    assert.deepEqual(
      [config.llm.base_url, config.llm.model, config.llm.api_key, config.llm.thinking, config.daemon.listen_addr],
      [fake.baseUrl, "fake-model", "${LLM_API_KEY}", false, `127.0.0.1:${port}`],
    );
    assert.equal(config.daemon.timezone, SYSTEM_ZONE);
    assert.match(result.stderr, /Time zone of the household \[Asia\/Tokyo\]: /, "the question names the default");

    // The LAN: tokens made and kept in homed.env, the key line kept, the config listening on every interface.
    const lan = await init(home, "", [
      "--force",
      "--provider",
      fake.baseUrl,
      "--model",
      "fake-model",
      "--lan",
      "--port",
      String(port),
    ]);
    assert.equal(lan.code, 0, lan.stderr);
    const lines = (await Deno.readTextFile(envFile)).trim().split("\n");
    assert.ok(lines.includes(`LLM_API_KEY=${TEST_KEY}`), "the key written before is kept");
    const token = (name: string) => lines.find((line) => line.startsWith(`${name}=`))?.slice(name.length + 1) ?? "";
    assert.match(token("HOMED_API_TOKEN"), /^[\w-]{43}$/);
    assert.match(token("ONEBOT_ACCESS_TOKEN"), /^[\w-]{43}$/);
    assert.notEqual(token("HOMED_API_TOKEN"), token("ONEBOT_ACCESS_TOKEN"));
    assert.ok(!lan.stdout.includes(token("HOMED_API_TOKEN")), "tokens are not printed either");
    assert.equal(parse(await Deno.readTextFile(join(home, "etc", "homed.yaml"))).daemon.listen_addr, `:${port}`);
    assert.match(lan.stdout, /^ok +config /m, "doctor accepts the LAN config: the tokens reach it from homed.env");
    assert.match(lan.stdout, /^ok +permissions /m);
  } finally {
    await fake.close();
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("scripted init stops on a bad answer, naming the question and what was answered; nothing is written", async () => {
  const home = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-init-bad-" });
  try {
    const provider = await init(home, "gopher://x\n");
    assert.equal(provider.code, 2);
    assert.match(provider.stderr, /provider: "gopher:\/\/x" is not deepseek, ollama or an http\(s\) URL/);
    const model = await init(home, "http://127.0.0.1:9/v1\n\n");
    assert.equal(model.code, 2);
    assert.match(model.stderr, /model: an OpenAI-compatible server needs a model name; none was given/);
    const lan = await init(home, "ollama\n\nmaybe\n");
    assert.equal(lan.code, 2);
    assert.match(lan.stderr, /lan: "maybe" is not yes or no/);
    const port = await init(home, "", ["--port", "99999"]);
    assert.equal(port.code, 2);
    assert.match(port.stderr, /port: "99999" is not a port number/);
    const zone = await init(home, "ollama\n\nno\nMars/Olympus\n");
    assert.equal(zone.code, 2);
    assert.match(
      zone.stderr,
      /timezone: "Mars\/Olympus" is not an IANA time zone such as Asia\/Shanghai, Europe\/Berlin or UTC/,
    );
    const offset = await init(home, "", ["--provider", "ollama", "--model", "m", "--timezone", "+08:00"]);
    assert.equal(offset.code, 2);
    assert.match(offset.stderr, /timezone: "\+08:00" is not an IANA time zone/, "an offset knows no summer time");
    await assert.rejects(Deno.stat(join(home, "etc", "homed.yaml")), Deno.errors.NotFound);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("init asks the household's time zone: a typed zone is written as the database spells it", async () => {
  const home = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-init-zone-" });
  try {
    const typed = await init(home, "ollama\n\nno\neurope/berlin\n", [], { doctor: false });
    assert.equal(typed.code, 0, typed.stderr);
    const written = await Deno.readTextFile(join(home, "etc", "homed.yaml"));
    assert.equal(parse(written).daemon.timezone, "Europe/Berlin");
    assert.match(written, /\n {2}# [^\n]+\n {2}timezone: "?Europe\/Berlin"?\n/, "the key's comment is kept");
    const flagged = await init(home, "", ["--force", "--provider", "ollama", "--model", "m", "--timezone", "UTC"], {
      doctor: false,
    });
    assert.equal(flagged.code, 0, flagged.stderr);
    assert.equal(parse(await Deno.readTextFile(join(home, "etc", "homed.yaml"))).daemon.timezone, "UTC");
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("init's thinking: false for DeepSeek-compatible and local servers, omit for Ollama and APIs that refuse the field", async () => {
  const home = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-init-thinking-" });
  try {
    const thinkingOf = async (provider: string) => {
      const result = await init(home, "", ["--force", "--provider", provider, "--model", "m", "--timezone", "UTC"], {
        doctor: false,
      });
      assert.equal(result.code, 0, result.stderr);
      return parse(await Deno.readTextFile(join(home, "etc", "homed.yaml"))).llm.thinking;
    };
    // A DeepSeek-compatible server thinks when the field is left out, then refuses tool-call turns without its
    // reasoning: the starter's false is written (kept) for it and for any server that ignores unknown fields.
    assert.equal(await thinkingOf("https://api.deepseek.com/v1"), false);
    assert.equal(await thinkingOf("https://llm.example.com/v1"), false);
    assert.equal(await thinkingOf("http://127.0.0.1:8000/v1"), false);
    assert.equal(await thinkingOf("https://api.openai.com/v1"), "omit");
    assert.equal(await thinkingOf("https://generativelanguage.googleapis.com/v1beta/openai"), "omit");
    assert.equal(await thinkingOf("ollama"), "omit");
    assert.equal(await thinkingOf("deepseek"), false);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});
