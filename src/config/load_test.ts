import assert from "node:assert/strict";
import { ConfigError } from "./config_error.ts";
import { parseDuration } from "./duration.ts";
import { expandEnv, referencedVariables } from "./expand.ts";
import { type LoadedConfig, locateConfig, parseConfig } from "./load.ts";
import { llmProviders } from "./llm_providers.ts";

const env = (vars: Record<string, string>) => (name: string) => vars[name];

function parse(text: string, vars: Record<string, string> = {}, path = "/etc/homed/homed.yaml"): LoadedConfig {
  return parseConfig({ text, location: { path, origin: "--config" }, readEnv: env(vars), cwd: "/work" });
}

function problems(text: string, vars: Record<string, string> = {}): string[] {
  try {
    parse(text, vars);
  } catch (error) {
    assert.ok(error instanceof ConfigError, String(error));
    return [...error.problems];
  }
  assert.fail("the config was accepted");
}

Deno.test("durations parse in every unit and reject the rest", () => {
  assert.equal(parseDuration("15s"), 15_000);
  assert.equal(parseDuration("30m"), 1_800_000);
  assert.equal(parseDuration("72h"), 259_200_000);
  assert.equal(parseDuration("500ms"), 500);
  assert.equal(parseDuration("1.5h"), 5_400_000);
  assert.equal(parseDuration("7d"), 604_800_000);
  for (const bad of ["", "15", "s", "15 s", "-1s", "1w", "1e3s"]) assert.equal(parseDuration(bad), undefined, bad);
});

Deno.test("env expansion: set, unset, default, empty with default", () => {
  const read = env({ A: "x", EMPTY: "" });
  assert.equal(expandEnv("${A}-${B}-${B:-dflt}-${EMPTY:-fb}-${A:-no}", read), "x--dflt-fb-x");
  assert.deepEqual(referencedVariables("${A} ${B:-1} ${A}"), ["A", "B"]);
  assert.equal(expandEnv("$A ${1BAD} ${A", read), "$A ${1BAD} ${A");
});

Deno.test("no config at all gives every default", () => {
  const { config, envNames } = parseConfig({
    text: "",
    location: { path: undefined, origin: "embedded defaults" },
    readEnv: () => undefined,
    cwd: "/srv/homed",
  });
  assert.deepEqual(config.daemon, {
    listen_addr: { host: "127.0.0.1", port: 8080 },
    data_dir: "/srv/homed/data",
    heartbeat_interval: 15_000,
    low_disk: 500 * 1024 ** 2,
    api_token: "",
    api_tokens: {},
    public_hosts: [],
    allowed_origins: [],
    max_body_bytes: 262_144,
    shutdown_grace: 10_000,
    timezone: "",
    openai_api: false,
  });
  assert.deepEqual(config.llm, {
    model: "deepseek-v4-flash",
    base_url: "https://api.deepseek.com/v1",
    api_key: "",
    temperature: 0.7,
    max_tokens: 4096,
    thinking: false,
    timeout: 30_000,
    turn_timeout: 90_000,
    max_retries: 2,
    max_tools: 128,
    provider: "openai",
    adapter: "",
    fallbacks: [],
    probe_interval: 30_000,
  });
  assert.deepEqual(config.lua, { time_limit: 1_000, memory_limit: 16_777_216 });
  assert.deepEqual(config.onebot, {
    enabled: true,
    path: "/onebot/v11/ws",
    access_token: "",
    owner: "",
    allow_users: [],
    allow_groups: [],
    approve_friends: [],
    group_prefix: "",
    forward_url: "",
    action_timeout: 30_000,
    split_at: 1_500,
    min_send_interval: 1_000,
    queue_limit: 100,
    max_frame_bytes: 1_048_576,
  });
  assert.deepEqual(config.io, { routes: {}, send_timeout: 30_000, max_waiting_per_sender: 50 });
  assert.deepEqual(config.agent, {
    local_intents: "fallback",
    max_tool_rounds: 10,
    tool_timeout: 30_000,
    tool_policy: {},
  });
  assert.deepEqual(config.memory, {
    context_size: 30,
    context_tokens: 48_000,
    cold_after: 259_200_000,
    distill_interval: 1_800_000,
  });
  assert.deepEqual(config.paths, {
    intents: "/srv/homed/intents",
    personal: "/srv/homed/personal.md",
    knowledge: "/srv/homed/knowledge",
    plugins: "/srv/homed/plugins",
  });
  assert.deepEqual(config.log, { level: "info", format: "text" });
  assert.equal(config.vision, null);
  assert.deepEqual(config.speech, { stt: null, tts: null, reply_with_voice: "when_spoken_to" });
  assert.deepEqual(config.media, {
    max_image_bytes: 10_485_760,
    max_audio_bytes: 10_485_760,
    guest_max_bytes: 2_097_152,
    fetch_timeout: 20_000,
    fetch_hosts: ["*.qpic.cn", "*.qq.com", "*.qq.com.cn"],
    allow_hosts: [],
    cache_bytes: 268_435_456,
  });
  assert.deepEqual(config.devices, { serial: {}, gpio: {}, microphone: null, speaker: null, camera: null });
  assert.deepEqual(config.mcp, { servers: {}, import: "", serve_http: false });
  assert.deepEqual(config.smart_home, { home_assistant: null, mqtt: null });
  assert.deepEqual(envNames, ["HOMED_API_TOKEN", "DEEPSEEK_API_KEY", "ONEBOT_ACCESS_TOKEN"]);
});

Deno.test("secrets come from the environment even when the file omits them", () => {
  const { config, apiKeySource } = parse("llm:\n  model: m\n", {
    DEEPSEEK_API_KEY: "sk-123",
    HOMED_API_TOKEN: "t".repeat(20),
  });
  assert.equal(config.llm.api_key, "sk-123");
  assert.equal(config.daemon.api_token, "t".repeat(20));
  assert.equal(apiKeySource, "${DEEPSEEK_API_KEY}");
});

Deno.test("values expand from the environment, numbers included, after YAML parsing", () => {
  const { config, envNames } = parse(
    'llm:\n  max_tokens: "${TOKENS:-512}"\n  model: "${MODEL}"\n  api_key: "${MY_KEY}"\n',
    { MODEL: "a: [b]", MY_KEY: "k" },
  );
  assert.equal(config.llm.max_tokens, 512);
  assert.equal(config.llm.model, "a: [b]");
  assert.deepEqual(envNames, ["TOKENS", "MODEL", "MY_KEY", "HOMED_API_TOKEN", "ONEBOT_ACCESS_TOKEN"]);
});

Deno.test("relative paths resolve against the config file's folder; absolute ones stay", () => {
  const { config, explicitKeys } = parse("daemon:\n  data_dir: /var/lib/homed\npaths:\n  personal: ./me.md\n");
  assert.equal(config.daemon.data_dir, "/var/lib/homed");
  assert.equal(config.paths.personal, "/etc/homed/me.md");
  assert.equal(config.paths.knowledge, "/etc/homed/knowledge");
  assert.ok(explicitKeys.has("paths.personal"));
  assert.ok(!explicitKeys.has("paths.knowledge"));
  const lua = parse("llm:\n  provider: lua\n  adapter: adapters/ollama.lua\n").config;
  assert.equal(lua.llm.adapter, "/etc/homed/adapters/ollama.lua");
  assert.deepEqual(lua.lua, { time_limit: 1_000, memory_limit: 16_777_216 });
  assert.equal(parse("").config.llm.provider, "openai");
});

Deno.test("the standard layout puts data, knowledge and plugins in /var/lib/homed unless the file says otherwise", () => {
  const base = {
    location: { path: undefined, origin: "embedded defaults" as const },
    readEnv: () => undefined,
    cwd: "/x",
  };
  const standard = parseConfig({ ...base, text: "", layout: "standard" });
  assert.equal(standard.config.daemon.data_dir, "/var/lib/homed");
  assert.equal(standard.config.paths.personal, "/etc/homed/personal.md");
  assert.equal(standard.config.paths.knowledge, "/var/lib/homed/knowledge", "learned knowledge is state");
  assert.equal(standard.config.paths.plugins, "/var/lib/homed/plugins");
  const custom = parseConfig({
    ...base,
    text: "daemon:\n  data_dir: /data\npaths:\n  knowledge: /srv/k\n",
    layout: "standard",
  });
  assert.equal(custom.config.daemon.data_dir, "/data");
  assert.equal(custom.config.paths.knowledge, "/srv/k");
});

Deno.test("lookup order: --config, then $HOMED_CONFIG, then config/homed.yaml, then defaults", () => {
  const exists = (path: string) => path === "/srv/config/homed.yaml";
  const base = { cwd: "/srv", exists };
  assert.deepEqual(locateConfig({ ...base, flag: "a.yaml", readEnv: env({ HOMED_CONFIG: "/b.yaml" }) }), {
    path: "/srv/a.yaml",
    origin: "--config",
  });
  assert.deepEqual(locateConfig({ ...base, readEnv: env({ HOMED_CONFIG: "/b.yaml" }) }), {
    path: "/b.yaml",
    origin: "$HOMED_CONFIG",
  });
  assert.deepEqual(locateConfig({ ...base, readEnv: env({}) }), {
    path: "/srv/config/homed.yaml",
    origin: "default file",
  });
  assert.deepEqual(locateConfig({ cwd: "/elsewhere", exists, readEnv: env({}) }), {
    path: undefined,
    origin: "embedded defaults",
  });
});

Deno.test("each kind of bad value names the key, the value and what is allowed", () => {
  const cases: Array<[string, RegExp]> = [
    ["llm:\n  temperature: 2.5\n", /^llm\.temperature: got 2\.5; allowed: a number from 0 to 2$/],
    ["llm:\n  temperature: warm\n", /^llm\.temperature: got "warm"; allowed: a number from 0 to 2$/],
    ["llm:\n  max_tokens: 1.5\n", /^llm\.max_tokens: got 1\.5; allowed: a whole number from 1 to 1000000$/],
    ["llm:\n  thinking: yes\n", /^llm\.thinking: got "yes"; allowed: true, false or "omit"$/],
    ["llm:\n  base_url: ftp://x\n", /^llm\.base_url: got "ftp:\/\/x"; allowed: an http:\/\/ or https:\/\/ URL/],
    ["llm:\n  model: ''\n", /^llm\.model: got ""; allowed: a non-empty model name$/],
    ["daemon:\n  heartbeat_interval: 15\n", /^daemon\.heartbeat_interval: got 15; allowed: a duration such as/],
    ["daemon:\n  heartbeat_interval: 2h\n", /^daemon\.heartbeat_interval: got "2h"; allowed: .*from 1s to 1h$/],
    ["daemon:\n  listen_addr: localhost\n", /^daemon\.listen_addr: got "localhost"; allowed: host:port such as/],
    [
      "daemon:\n  listen_addr: 127.0.0.1:70000\n",
      /^daemon\.listen_addr: got "127\.0\.0\.1:70000"; allowed: .*port from 0 to 65535$/,
    ],
    [
      "daemon:\n  api_token: short\n",
      /^daemon\.api_token: got a secret of 5 characters; allowed: empty \(not set\) or a string of at least 16 characters$/,
    ],
    [
      "daemon:\n  max_body_bytes: 10\n",
      /^daemon\.max_body_bytes: got 10; allowed: a whole number from 1024 to 16777216$/,
    ],
    ["onebot:\n  enabled: maybe\n", /^onebot\.enabled: got "maybe"; allowed: true or false$/],
    [
      "telegram:\n  token: abc-from-botfather\n",
      /^telegram\.token: got a secret of 18 characters; allowed: a bot token from @BotFather: <bot id>:<secret>, such as 123456789:AA…$/,
    ],
    [
      'telegram:\n  token: "123456789:AAabcdefghijklmnopqrstuvwxyz0123456"\n  owner: "@wei"\n',
      /^telegram\.owner: got "@wei"; allowed: empty, or a Telegram id \(digits; a group's begins with -\)$/,
    ],
    [
      "weixin:\n  owner: wei@qq.com\n",
      /^weixin\.owner: got "wei@qq\.com"; allowed: empty, or a WeChat user id ending in @im\.wechat$/,
    ],
    ["weixin:\n  split_at: 4000\n", /^weixin\.split_at: got 4000; allowed: a whole number from 100 to 2000$/],
    [
      "daemon:\n  timezone: Mars/Base\n",
      /^daemon\.timezone: got "Mars\/Base"; allowed: an IANA time zone such as Asia\/Shanghai/,
    ],
    [
      "llm:\n  adapter: builtin:gemini\n",
      /^llm\.adapter: got "builtin:gemini"; allowed: a file path or "builtin:anthropic", "builtin:ollama"$/,
    ],
    [
      "tracker:\n  overlay: { mount: /opt/homed, upper: /var/up, lower: [] }\n",
      /^tracker\.overlay\.lower: got \[\]; allowed: a list of at least one lower folder$/,
    ],
    ["onebot:\n  path: no-slash\n", /^onebot\.path: got "no-slash"; allowed: a URL path starting with "\/"$/],
    ["onebot:\n  owner: mom\n", /^onebot\.owner: got "mom"; allowed: /],
    ["onebot:\n  allow_groups: [12]\n", /^onebot\.allow_groups\.0: got "12"; allowed: a QQ number \(digits\)$/],
    [
      "onebot:\n  forward_url: http://127.0.0.1:3001\n",
      /^onebot\.forward_url: got "http:\/\/127\.0\.0\.1:3001"; allowed: empty, or a ws:\/\/ or wss:\/\/ URL/,
    ],
    ["onebot:\n  split_at: 5\n", /^onebot\.split_at: got 5; allowed: a whole number from 100 to 10000$/],
    ["vision:\n  base_url: file:///x\n  model: m\n", /^vision\.base_url: got "file:\/\/\/x"; allowed: an http:\/\//],
    ["vision:\n  base_url: http://127.0.0.1:1/v1\n", /^vision\.model: got nothing; allowed: a non-empty model name$/],
    [
      "speech:\n  reply_with_voice: sometimes\n",
      /^speech\.reply_with_voice: got "sometimes"; allowed: "never", "when_spoken_to" or "always"$/,
    ],
    [
      "speech:\n  stt: { base_url: 'http://127.0.0.1:1/v1', model: w, language: chinese }\n",
      /^speech\.stt\.language: got "chinese"; allowed: empty \(the server detects it\) or an ISO-639-1 code/,
    ],
    [
      "devices:\n  serial:\n    Sensors: { path: /dev/ttyUSB0 }\n",
      /^devices\.serial\.Sensors: got "Sensors"; allowed: a device name: 1 to 32 of a-z, 0-9, _ and -$/,
    ],
    [
      "devices:\n  serial:\n    s: { baud: 9600 }\n",
      /^devices\.serial\.s\.path: got nothing; allowed: a non-empty file system path$/,
    ],
    [
      "devices:\n  gpio:\n    bell: { line: 17, direction: sideways }\n",
      /^devices\.gpio\.bell\.direction: got "sideways"; allowed: "in" or "out"$/,
    ],
    [
      "devices:\n  camera: { command: [] }\n",
      /^devices\.camera\.command: got \[\]; allowed: a list: the program, then its arguments$/,
    ],
    [
      "devices:\n  microphone: { trust: friend }\n",
      /^devices\.microphone\.trust: got "friend"; allowed: "owner", "household" or "guest"$/,
    ],
    [
      "smart_home:\n  home_assistant: { url: 'http://ha:8123', token: short }\n",
      /^smart_home\.home_assistant\.token: got a secret of 5 characters; allowed: empty \(not set\) or a string of at least 16/,
    ],
    [
      "smart_home:\n  mqtt: { url: 'tcp://broker:1883' }\n",
      /^smart_home\.mqtt\.url: got "tcp:\/\/broker:1883"; allowed: an mqtt:\/\/ or mqtts:\/\/ URL$/,
    ],
    ["media:\n  max_image_bytes: 10\n", /^media\.max_image_bytes: got 10; allowed: a whole number from 1024 to/],
    ["media:\n  allow_hosts: ['http://x']\n", /^media\.allow_hosts\.0: got "http:\/\/x"; allowed: a host such as/],
    ["io:\n  routes:\n    http: 'bad channel'\n", /^io\.routes\.http: got "bad channel"; allowed: a channel name/],
    ["memory:\n  context_size: 2\n", /^memory\.context_size: got 2; allowed: a whole number from 4 to 1000$/],
    ["log:\n  level: loud\n", /^log\.level: got "loud"; allowed: "debug", "info", "warning" or "error"$/],
    ["agent:\n  max_tool_rounds: 0\n", /^agent\.max_tool_rounds: got 0; allowed: a whole number from 1 to 50$/],
    ["paths:\n  personal: ''\n", /^paths\.personal: got ""; allowed: a non-empty file system path$/],
    [
      "llm:\n  turn_timeout: 500ms\n",
      /^llm\.turn_timeout: got "500ms"; allowed: a duration such as .*, from 1s to 1h$/,
    ],
    [
      "io:\n  send_timeout: forever\n",
      /^io\.send_timeout: got "forever"; allowed: a duration such as .*, from 1s to 10m$/,
    ],
    ["agent:\n  tool_timeout: 0s\n", /^agent\.tool_timeout: got "0s"; allowed: a duration such as .*, from 1s to 30m$/],
    [
      "daemon:\n  shutdown_grace: 1h\n",
      /^daemon\.shutdown_grace: got "1h"; allowed: a duration such as .*, from 1s to 5m$/,
    ],
    [
      "memory:\n  context_tokens: 100\n",
      /^memory\.context_tokens: got 100; allowed: a whole number from 2000 to 2000000$/,
    ],
    ["llm: 5\n", /^llm: got 5; allowed: a mapping of keys$/],
    [
      "llm:\n  provider: gemini\n",
      /^llm\.provider: got "gemini"; allowed: "openai" \(chat completions\) or "lua" \(an adapter script\)$/,
    ],
    [
      "llm:\n  provider: lua\n",
      /^llm\.adapter: got nothing; allowed: the path of a Lua adapter script, required because llm\.provider is "lua"$/,
    ],
    ["lua:\n  time_limit: 5ms\n", /^lua\.time_limit: got "5ms"; allowed: a duration such as .*, from 10ms to 1m$/],
    [
      "lua:\n  memory_limit: 1000\n",
      /^lua\.memory_limit: got 1000; allowed: a whole number from 1048576 to 1073741824$/,
    ],
    [
      "daemon:\n  listen_adr: x\n",
      /^daemon\.listen_adr: unknown key; allowed keys here: listen_addr, timezone, data_dir, heartbeat_interval, low_disk, api_token, api_tokens, public_hosts, allowed_origins, max_body_bytes, shutdown_grace, openai_api$/,
    ],
    [
      "lm:\n  model: x\n",
      /^lm: unknown key; allowed keys here: daemon, llm, lua, people, onebot, weixin, telegram, vision, speech, media, devices, smart_home, mcp, io, agent, memory, plugins, tracker, backup, paths, log$/,
    ],
    ["- a\n- b\n", /^\(top level\): got \["a","b"\]; allowed: a mapping of keys$/],
    ["llm: [\n", /^the file is not valid YAML: /],
  ];
  for (const [text, pattern] of cases) {
    const found = problems(text);
    assert.equal(found.length, 1, `${text} → ${found.join(" | ")}`);
    assert.match(found[0]!, pattern);
  }
});

Deno.test("llm.fallbacks, llm.probe_interval, llm.budget: what is left out comes from the primary; each error names the key and value", () => {
  const { config } = parse([
    "llm:",
    "  temperature: 0.2",
    "  timeout: 20s",
    "  prices: { input: 2, input_cache_hit: 0.5, output: 8, currency: CNY }",
    "  probe_interval: 1m",
    "  budget: { daily: 5, monthly_tokens: 2000000 }",
    "  fallbacks:",
    "    - { model: llama3, base_url: 'http://127.0.0.1:11434/v1', max_tokens: 1024 }",
    "    - { provider: lua, adapter: adapters/x.lua, model: claude, base_url: 'https://api.anthropic.com', name: claude }",
    "",
  ].join("\n"));
  assert.equal(config.llm.probe_interval, 60_000);
  assert.deepEqual(config.llm.budget, { daily: 5, monthly_tokens: 2_000_000 });
  assert.deepEqual(config.llm.fallbacks[0], {
    provider: "openai",
    model: "llama3",
    base_url: "http://127.0.0.1:11434/v1",
    api_key: "",
    adapter: "",
    max_tokens: 1024,
  });
  assert.equal(config.llm.fallbacks[1]!.adapter, "/etc/homed/adapters/x.lua", "relative to the config file");
  const [primary, local, claude] = llmProviders(config);
  assert.equal(primary!.name, "deepseek-v4-flash@api.deepseek.com");
  assert.deepEqual(
    [local!.name, local!.key, local!.temperature, local!.max_tokens, local!.timeout, local!.thinking],
    ["llama3@127.0.0.1:11434", "llm.fallbacks.0", 0.2, 1024, 20_000, false],
  );
  assert.equal(claude!.name, "claude");

  const cases: Array<[string, RegExp]> = [
    [
      "llm:\n  fallbacks:\n    - { base_url: 'http://127.0.0.1:11434/v1' }\n",
      /^llm\.fallbacks\.0\.model: got nothing; allowed: a non-empty model name$/,
    ],
    [
      "llm:\n  fallbacks:\n    - { model: llama3 }\n",
      /^llm\.fallbacks\.0\.base_url: got nothing; allowed: an http:\/\/ or https:\/\/ URL/,
    ],
    [
      "llm:\n  fallbacks:\n    - { model: m, base_url: 'http://h/v1', api_key: sk-0123456789, color: red }\n",
      /^llm\.fallbacks\.0\.color: unknown key; allowed keys here: provider, model, base_url, api_key, adapter, name, temperature, max_tokens, thinking, timeout, max_retries, prices$/,
    ],
    [
      "llm:\n  fallbacks:\n    - { model: m, base_url: 'http://h/v1', api_key: short, temperature: 3 }\n",
      /^llm\.fallbacks\.0\.temperature: got 3; allowed: a number from 0 to 2$/,
    ],
    [
      "llm:\n  fallbacks:\n    - { provider: lua, model: m, base_url: 'http://h' }\n",
      /^llm\.fallbacks\.0\.adapter: got nothing; allowed: the path of a Lua adapter script or builtin:<name>, required because llm\.fallbacks\.0\.provider is "lua"$/,
    ],
    [
      "llm:\n  fallbacks:\n    - { provider: lua, adapter: 'builtin:gemini', model: m, base_url: 'http://h' }\n",
      /^llm\.fallbacks\.0\.adapter: got "builtin:gemini"; allowed: a file path or "builtin:anthropic", "builtin:ollama"$/,
    ],
    [
      "llm:\n  fallbacks:\n    - { model: deepseek-v4-flash, base_url: 'https://api.deepseek.com/beta' }\n",
      /^llm\.fallbacks\.0\.name: got "deepseek-v4-flash@api\.deepseek\.com", the name of llm too; allowed: a name of its own/,
    ],
    [
      "llm:\n  fallbacks:\n    - { model: m, base_url: 'http://h/v1', prices: { input: 1, input_cache_hit: 1, output: 1, currency: USD } }\n",
      /^llm\.fallbacks\.0\.prices: got prices in "USD"; allowed: prices in llm\.prices' currency \(set llm\.prices first\)/,
    ],
    [
      "llm:\n  probe_interval: 500ms\n",
      /^llm\.probe_interval: got "500ms"; allowed: a duration such as .*, from 1s to 1h$/,
    ],
    ["llm:\n  probe_interval: 2h\n", /^llm\.probe_interval: got "2h"; allowed: a duration such as .*, from 1s to 1h$/],
    [
      "llm:\n  budget: { daily: 5 }\n",
      /^llm\.budget\.daily: got 5; allowed: a limit in llm\.prices' currency, which needs llm\.prices — set llm\.prices/,
    ],
    [
      "llm:\n  budget: { monthly: 50 }\n",
      /^llm\.budget\.monthly: got 50; allowed: a limit in llm\.prices' currency, which needs llm\.prices/,
    ],
    ["llm:\n  budget: { daily_tokens: 0 }\n", /^llm\.budget\.daily_tokens: got 0; allowed: a whole number from 1 to /],
    ["llm:\n  budget: { weekly: 5 }\n", /^llm\.budget\.weekly: unknown key; allowed keys here: daily, monthly, /],
  ];
  for (const [text, pattern] of cases) {
    const found = problems(text);
    assert.equal(found.length, 1, `${text} → ${found.join(" | ")}`);
    assert.match(found[0]!, pattern);
  }
  assert.deepEqual(parse("llm:\n  budget: { daily_tokens: 300000 }\n").config.llm.budget, { daily_tokens: 300_000 });
});

Deno.test("every problem of a file is reported at once", () => {
  const found = problems("llm:\n  temperature: 9\n  max_tokens: 0\nlog:\n  format: xml\n");
  assert.equal(found.length, 3);
  assert.match(new ConfigError("f.yaml", found).message, /^Invalid config \(f\.yaml\):\n {2}- llm\.temperature/);
});

Deno.test("beyond loopback needs api_token, and onebot.access_token while OneBot is on", () => {
  const found = problems('daemon:\n  listen_addr: ":8080"\n');
  assert.equal(found.length, 2);
  assert.match(
    found[0]!,
    /^daemon\.api_token: got nothing; .*required because daemon\.listen_addr ":8080" is beyond loopback$/,
  );
  assert.match(found[1]!, /^onebot\.access_token: got nothing; .*onebot\.enabled is true$/);
  const ok = parse('daemon:\n  listen_addr: "0.0.0.0:8080"\nonebot:\n  enabled: false\n', {
    HOMED_API_TOKEN: "0123456789abcdef",
  });
  assert.deepEqual(ok.config.daemon.listen_addr, { host: "0.0.0.0", port: 8080 });
  for (const host of ["127.0.0.1:1", "localhost:1", "[::1]:1", "127.1.2.3:1"]) {
    assert.doesNotThrow(() => parse(`daemon:\n  listen_addr: "${host}"\n`), host);
  }
});

Deno.test("per-person tokens: one owner in all, no shared tokens, the name owner reserved", () => {
  const problems = (text: string) => {
    try {
      parseConfig({ text, location: { path: "/x.yaml", origin: "--config" }, readEnv: () => undefined, cwd: "/" });
      return [];
    } catch (error) {
      return (error as ConfigError).problems;
    }
  };
  const alice = "alice: { token: alice-token-000000, trust: household }";
  assert.deepEqual(problems(`daemon:\n  api_tokens:\n    ${alice}\n`), [
    'daemon.api_tokens: got no owner; allowed: tokens with exactly one owner — set daemon.api_token (the owner\'s) or mark one person trust: "owner"',
  ]);
  assert.deepEqual(
    problems(
      `daemon:\n  api_token: alice-token-000000\n  api_tokens:\n    ${alice}\n    owner: { token: other-token-0000000, trust: owner }\n`,
    ),
    [
      'daemon.api_tokens.owner: got an entry; allowed: other names — "owner" is the holder of daemon.api_token',
      "daemon.api_tokens.alice.token: got the same token as daemon.api_token; allowed: a token of its own",
      "daemon.api_tokens: got 2 owners; allowed: exactly one (daemon.api_token is the owner's)",
    ],
  );
  assert.deepEqual(problems(`daemon:\n  api_token: owner-token-0000000\n  api_tokens:\n    ${alice}\n`), []);
  assert.deepEqual(problems(`daemon:\n  api_tokens:\n    mom: { token: mom-token-00000000, trust: owner }\n`), []);
});

Deno.test("config/homed.example.yaml names every key, with the defaults", async () => {
  const text = await Deno.readTextFile(new URL("../../config/homed.example.yaml", import.meta.url));
  const example = parseConfig({
    text,
    location: { path: "/srv/homed/config/homed.yaml", origin: "--config" },
    readEnv: () => undefined,
    cwd: "/",
  });
  const defaults = parseConfig({
    text: "",
    location: { path: undefined, origin: "embedded defaults" },
    readEnv: () => undefined,
    cwd: "/srv/homed",
  });
  assert.deepEqual(example.config, defaults.config);
  const leaves = (value: unknown, prefix: string): string[] =>
    value !== null && typeof value === "object" && !Array.isArray(value) && prefix !== "io.routes" &&
      prefix !== "daemon.listen_addr" && prefix !== "daemon.api_tokens"
      ? Object.entries(value).flatMap(([key, item]) => leaves(item, prefix ? `${prefix}.${key}` : key))
      : [prefix];
  for (const key of leaves(defaults.config, "")) {
    assert.ok(example.explicitKeys.has(key), `${key} is not in the example`);
  }
});
