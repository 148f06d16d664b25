import assert from "node:assert/strict";
import { luaWasmPath } from "../lua/wasm_path.ts";
import { silkWasmPath } from "../audio/silk_wasm_path.ts";
import { parseConfig } from "../config/load.ts";
import { initPermissions, missingPermissions, requiredPermissions, toFlags, unsplittablePaths } from "./permissions.ts";

const loaded = parseConfig({
  text:
    "daemon:\n  data_dir: /var/lib/homed\n  listen_addr: '[::1]:9000'\nllm:\n  base_url: http://10.0.0.5:11434/v1\n  api_key: ${OLLAMA_KEY}\n",
  location: { path: "/etc/homed/homed.yaml", origin: "--config" },
  readEnv: () => undefined,
  cwd: "/",
});

Deno.test("run rights cover exactly the config, persona, templates, knowledge, plugins, data, the Lua wasm, listener and LLM host", () => {
  const rights = requiredPermissions(loaded, "run");
  assert.deepEqual(rights.read, [
    "/etc/homed/homed.yaml",
    "/etc/homed/personal.md",
    "/etc/homed/intents",
    "/etc/homed/knowledge",
    "/etc/homed/plugins",
    "/var/lib/homed",
    luaWasmPath(),
  ]);
  assert.deepEqual(rights.write, ["/etc/homed/knowledge", "/etc/homed/plugins", "/var/lib/homed"]);
  assert.deepEqual(rights.net, ["[::1]:9000", "10.0.0.5:11434"]);
  assert.ok(rights.env.includes("OLLAMA_KEY"));
  const flags = toFlags(rights);
  assert.equal(flags[0], "--no-prompt");
  assert.ok(flags.every((flag) => !/^-A$|allow-all|allow-run|allow-ffi/.test(flag)), flags.join(" "));
  // System information: the data dir's free space (statfs) alone, never all of --allow-sys.
  assert.deepEqual(flags.filter((flag) => flag.includes("allow-sys")), ["--allow-sys=statfs"]);
  assert.deepEqual(requiredPermissions(loaded, "chat").sys, undefined);
});

Deno.test("chat rights are just the config and the daemon's address", () => {
  const rights = requiredPermissions(loaded, "chat");
  assert.deepEqual(rights.read, ["/etc/homed/homed.yaml"]);
  assert.deepEqual(rights.write, []);
  assert.deepEqual(rights.net, ["[::1]:9000"]);
});

Deno.test("missing rights are named one by one", () => {
  const missing = missingPermissions({
    read: ["/tmp", "/"],
    write: ["/tmp", "/proc/nowhere"],
    net: ["127.0.0.1:8080", "192.0.2.1:1"],
    env: ["CI", "NOT_GRANTED_X"],
  });
  // The test task grants /tmp (read and write), loopback and CI, and nothing else asked for here.
  assert.deepEqual(missing, [
    "read access to /",
    "write access to /proc/nowhere",
    "net access to 192.0.2.1:1",
    "env access to NOT_GRANTED_X",
  ]);
});

Deno.test("paths that break the deno task splice are found", () => {
  assert.deepEqual(unsplittablePaths({ read: ["/a b", "/ok"], write: ["/c,d"], net: [], env: [] }), ["/a b", "/c,d"]);
});

Deno.test("the daemon and the benchmark run with the same V8 flags", async () => {
  const { DAEMON_V8_FLAGS, commandFlags } = await import("./command_flags.ts");
  assert.equal(commandFlags(loaded, "run").at(-1), DAEMON_V8_FLAGS);
  assert.ok(!commandFlags(loaded, "chat").includes(DAEMON_V8_FLAGS));
  const tasks = JSON.parse(await Deno.readTextFile(new URL("../../deno.json", import.meta.url))).tasks;
  assert.ok(tasks["bench:turn"].includes(DAEMON_V8_FLAGS), tasks["bench:turn"]);
});

Deno.test("deno task start gives the daemon its environment (DAEMON_ENV), as the supervisor and the unit do", async () => {
  const { DAEMON_ENV } = await import("./command_flags.ts");
  const tasks = JSON.parse(await Deno.readTextFile(new URL("../../deno.json", import.meta.url))).tasks;
  const assignments = Object.entries(DAEMON_ENV).map(([name, value]) => `${name}=${value} `).join("");
  assert.equal(assignments, "MALLOC_ARENA_MAX=2 MALLOC_MMAP_THRESHOLD_=131072 ");
  assert.ok(tasks.start.startsWith(`${assignments}deno run `), tasks.start);
});

Deno.test("init rights are the config's folder and the persona, and running Deno for doctor; nothing more", () => {
  assert.deepEqual(initPermissions("/etc/homed/homed.yaml", "/srv/homed"), {
    read: ["/etc/homed", "/srv/homed/personal.md"],
    write: ["/etc/homed", "/srv/homed/personal.md"],
    net: [],
    env: ["HOMED_CONFIG", "LOG_TOKENS", "LOG_STREAM"],
    run: [Deno.execPath()],
  });
});

Deno.test("a OneBot forward URL's host joins the daemon's net rights", () => {
  const forward = parseConfig({
    text: "onebot:\n  forward_url: ws://127.0.0.1:3001/\n",
    location: { path: "/etc/homed/homed.yaml", origin: "--config" },
    readEnv: () => undefined,
    cwd: "/",
  });
  assert.deepEqual(requiredPermissions(forward, "run").net, [
    "127.0.0.1:8080",
    "api.deepseek.com:443",
    "127.0.0.1:3001",
  ]);
  const secure = parseConfig({
    text: "onebot:\n  forward_url: wss://qq.example/ws\n  enabled: false\n",
    location: { path: "/etc/homed/homed.yaml", origin: "--config" },
    readEnv: () => undefined,
    cwd: "/",
  });
  assert.deepEqual(requiredPermissions(secure, "run").net, ["127.0.0.1:8080", "api.deepseek.com:443"], "not when off");
});

Deno.test("llm.fallbacks: each one's host joins the net rights and a lua one's adapter the read rights, in homed flags too", async () => {
  const chain = parseConfig({
    text: [
      "llm:",
      "  fallbacks:",
      "    - { model: llama3, base_url: 'http://127.0.0.1:11434/v1' }",
      "    - { provider: lua, adapter: adapters/claude.lua, model: claude, base_url: 'https://api.anthropic.com' }",
      "    - { provider: lua, adapter: 'builtin:ollama', model: qwen3, base_url: 'http://192.168.1.9:11434' }",
      "",
    ].join("\n"),
    location: { path: "/etc/homed/homed.yaml", origin: "--config" },
    readEnv: () => undefined,
    cwd: "/",
  });
  const rights = requiredPermissions(chain, "run");
  assert.deepEqual(rights.net, [
    "127.0.0.1:8080",
    "api.deepseek.com:443",
    "127.0.0.1:11434",
    "api.anthropic.com:443",
    "192.168.1.9:11434",
  ]);
  assert.ok(rights.read.includes("/etc/homed/adapters/claude.lua"), rights.read.join(" "));
  assert.ok(!rights.read.some((path) => path.includes("builtin:")), "an embedded adapter is no file");
  const { commandFlags } = await import("./command_flags.ts");
  const flags = commandFlags(chain, "run");
  const net = flags.find((flag) => flag.startsWith("--allow-net="))!;
  assert.equal(
    net,
    "--allow-net=127.0.0.1:8080,api.deepseek.com:443,127.0.0.1:11434,api.anthropic.com:443,192.168.1.9:11434",
  );
  assert.ok(flags.find((flag) => flag.startsWith("--allow-read="))!.includes("/etc/homed/adapters/claude.lua"));
});

Deno.test("exec tools: --allow-run names exactly the allowlisted programs, only with plugins.allow_exec", () => {
  const parse = (plugins: string) =>
    parseConfig({
      text: `plugins:\n${plugins}`,
      location: { path: "/etc/homed/homed.yaml", origin: "--config" },
      readEnv: () => undefined,
      cwd: "/",
    });
  const on = requiredPermissions(parse("  allow_exec: true\n  exec_allowlist: [curl, /usr/bin/jq]\n"), "run");
  assert.deepEqual(on.run, ["curl", "/usr/bin/jq"]);
  assert.ok(toFlags(on).includes("--allow-run=curl,/usr/bin/jq"));
  for (const text of ["  allow_exec: false\n  exec_allowlist: [curl]\n", "  allow_exec: true\n"]) {
    const rights = requiredPermissions(parse(text), "run");
    assert.equal(rights.run, undefined, text);
    assert.ok(!toFlags(rights).some((flag) => flag.startsWith("--allow-run")), text);
  }
  assert.equal(requiredPermissions(parse("  allow_exec: true\n  exec_allowlist: [curl]\n"), "doctor").run, undefined);
});

Deno.test("seeing and hearing add exactly their servers, QQ's media hosts, the listed ones and the SILK codec", () => {
  const seeing = parseConfig({
    text: [
      "vision: { base_url: 'http://127.0.0.1:11434/v1', model: 'qwen2.5vl:7b' }",
      "speech:",
      "  stt: { base_url: 'http://10.0.0.7:8000/v1', model: whisper-1 }",
      "  tts: { base_url: 'https://tts.example/v1', model: kokoro, voice: zf_xiaobei }",
      "media: { allow_hosts: ['192.168.1.5:3000'] }",
      "onebot: { forward_url: 'ws://192.168.1.5:3001' }",
      "",
    ].join("\n"),
    location: { path: "/etc/homed/homed.yaml", origin: "--config" },
    readEnv: () => undefined,
    cwd: "/",
  });
  const rights = requiredPermissions(seeing, "run", { resolvConf: "nameserver 127.0.0.53\n" });
  assert.deepEqual(rights.net, [
    "127.0.0.1:8080",
    "api.deepseek.com:443",
    "192.168.1.5:3001",
    "127.0.0.1:11434",
    "10.0.0.7:8000",
    "tts.example:443",
    "*.qpic.cn",
    "*.qq.com",
    "*.qq.com.cn",
    "192.168.1.5:3000",
    "192.168.1.5",
    "127.0.0.53:53",
  ]);
  assert.ok(rights.read.includes(silkWasmPath()), "the SILK codec's wasm");
  assert.ok(!requiredPermissions(loaded, "run").read.includes(silkWasmPath()), "not without speech");
  const deaf = parseConfig({
    text: "vision: { base_url: 'http://127.0.0.1:11434/v1', model: m }\nonebot: { enabled: false }\n",
    location: { path: "/etc/homed/homed.yaml", origin: "--config" },
    readEnv: () => undefined,
    cwd: "/",
  });
  assert.deepEqual(requiredPermissions(deaf, "run").net, ["127.0.0.1:8080", "api.deepseek.com:443", "127.0.0.1:11434"]);
  // No chat that receives media by URL (Telegram hands over bytes): output_send still fetches from media.allow_hosts.
  const telegramOnly = parseConfig({
    text: [
      "onebot: { enabled: false }",
      "telegram: { token: '123456789:AAabcdefghijklmnopqrstuvwxyz0123456', api_url: 'http://127.0.0.1:8081' }",
      "media: { allow_hosts: ['127.0.0.1:9000', 'pictures.home.example'] }",
      "",
    ].join("\n"),
    location: { path: "/etc/homed/homed.yaml", origin: "--config" },
    readEnv: () => undefined,
    cwd: "/",
  });
  assert.deepEqual(requiredPermissions(telegramOnly, "run", { resolvConf: "nameserver 127.0.0.53\n" }).net, [
    "127.0.0.1:8080",
    "api.deepseek.com:443",
    "127.0.0.1:8081",
    "127.0.0.1:9000",
    "pictures.home.example",
    "127.0.0.53:53",
  ]);
});

Deno.test("local devices: --allow-run names exactly their programs, for the daemon and doctor only; none without devices", () => {
  const withDevices = parseConfig({
    text: [
      "devices:",
      "  serial: { sensors: { path: /dev/ttyUSB0 } }",
      "  gpio: { bell: { line: 17, direction: in } }",
      "  microphone: {}",
      '  speaker: { command: [/usr/bin/pw-play, "-"] }',
      "  camera: {}",
      "",
    ].join("\n"),
    location: { path: "/etc/homed/homed.yaml", origin: "--config" },
    readEnv: () => undefined,
    cwd: "/",
  });
  const programs = ["stty", "dd", "gpioget", "gpioset", "gpiomon", "arecord", "/usr/bin/pw-play", "ffmpeg"];
  assert.deepEqual(requiredPermissions(withDevices, "run").run, programs);
  assert.deepEqual(requiredPermissions(withDevices, "doctor").run, programs);
  assert.equal(requiredPermissions(withDevices, "chat").run, undefined);
  const flags = toFlags(requiredPermissions(withDevices, "run"));
  assert.ok(flags.includes(`--allow-run=${programs.join(",")}`), flags.join(" "));
  assert.ok(!flags.some((flag) => flag.startsWith("--allow-ffi")), "no FFI: the serial port goes through stty and dd");
  assert.ok(!flags.join(" ").includes("/dev/ttyUSB0"), "no file right for the port: Deno opens nothing under /dev");
  assert.equal(requiredPermissions(loaded, "run").run, undefined, "no devices, no --allow-run");
});

Deno.test("MCP servers: --allow-run names each stdio server's command, --allow-net each remote one's host; off is off", () => {
  const withServers = parseConfig({
    text: [
      "mcp:",
      "  servers:",
      "    files: { command: npx, args: [-y, '@modelcontextprotocol/server-filesystem', /srv/share] }",
      "    ha: { url: 'http://homeassistant.local:8123/api/mcp' }",
      "    old: { command: /opt/old-server, enabled: false }",
      "",
    ].join("\n"),
    location: { path: "/etc/homed/homed.yaml", origin: "--config" },
    readEnv: () => undefined,
    cwd: "/",
  });
  const rights = requiredPermissions(withServers, "run");
  assert.deepEqual(rights.run, ["npx"]);
  assert.ok(rights.net.includes("homeassistant.local:8123"), rights.net.join(","));
  assert.equal(requiredPermissions(withServers, "chat").run, undefined);
  assert.ok(!requiredPermissions(withServers, "chat").net.includes("homeassistant.local:8123"));
});

Deno.test("QQ media from host names: the name servers Deno.resolveDns asks (ip:53) and /etc/resolv.conf; only then", () => {
  const parse = (text: string) =>
    parseConfig({
      text: `vision: { base_url: 'http://127.0.0.1:11434/v1', model: m }\n${text}`,
      location: { path: "/etc/homed/homed.yaml", origin: "--config" },
      readEnv: () => undefined,
      cwd: "/",
    });
  const resolvConf = "# written by NetworkManager\nsearch lan\nnameserver 192.168.1.1\nnameserver fe80::1%eth0\n";
  const qq = parse("");
  const run = requiredPermissions(qq, "run", { resolvConf });
  assert.deepEqual(run.net.slice(-2), ["192.168.1.1:53", "[fe80::1]:53"], run.net.join(","));
  assert.ok(run.read.includes("/etc/resolv.conf"), "the daemon's own rights check reads it again");
  assert.ok(requiredPermissions(qq, "doctor", { resolvConf }).net.includes("192.168.1.1:53"));
  // The supervisor and `homed service install` compute the daemon's flags, so they read it too.
  assert.ok(requiredPermissions(qq, "supervise", { resolvConf }).read.includes("/etc/resolv.conf"));
  assert.ok(requiredPermissions(qq, "service", { resolvConf }).read.includes("/etc/resolv.conf"));
  assert.ok(!requiredPermissions(qq, "chat", { resolvConf }).read.includes("/etc/resolv.conf"));

  // No host name to fetch media from (addresses only), QQ off, or nothing that sees: no name server, no resolv.conf.
  for (
    const text of [
      "media: { fetch_hosts: [], allow_hosts: ['192.168.1.5:3000'] }\n",
      "onebot: { enabled: false }\n",
    ]
  ) {
    const rights = requiredPermissions(parse(text), "run", { resolvConf });
    assert.ok(!rights.net.some((host) => host.endsWith(":53")), `${text}: ${rights.net.join(",")}`);
    assert.ok(!rights.read.includes("/etc/resolv.conf"), text);
    assert.ok(!requiredPermissions(parse(text), "supervise", { resolvConf }).read.includes("/etc/resolv.conf"));
  }
  const blind = requiredPermissions(loaded, "run", { resolvConf });
  assert.ok(!blind.net.some((host) => host.endsWith(":53")), "no vision or speech: homed fetches no media");
});

Deno.test("automatic backups: the daemon writes backup.dir on another disk, restore reads it (--latest); off is off", () => {
  const load = (backup: string) =>
    parseConfig({
      text: `daemon:\n  data_dir: /var/lib/homed\nbackup:\n${backup}`,
      location: { path: "/etc/homed/homed.yaml", origin: "--config" },
      readEnv: () => undefined,
      cwd: "/",
    });
  const usb = load("  dir: /mnt/usb/homed\n");
  assert.ok(requiredPermissions(usb, "run").write.includes("/mnt/usb/homed"));
  assert.ok(requiredPermissions(usb, "run").read.includes("/mnt/usb/homed"));
  assert.ok(requiredPermissions(usb, "restore").read.includes("/mnt/usb/homed"));
  assert.ok(!requiredPermissions(usb, "restore").write.includes("/mnt/usb/homed"), "restore only reads the archives");
  const off = load("  dir: /mnt/usb/homed\n  schedule: ''\n");
  assert.ok(!requiredPermissions(off, "run").write.includes("/mnt/usb/homed"));
  // The default, <data_dir>/backups, is inside the data dir's rights already.
  assert.ok(
    !requiredPermissions(load("  keep: { daily: 2 }\n"), "run").write.some((path) => path.endsWith("/backups")),
  );
});
