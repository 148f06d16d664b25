/**
 * The one schema of `homed.yaml`: every key, its default and what it allows.
 *
 * Keys keep their YAML spelling (snake_case) in the parsed object, so an error names the key exactly as the
 * user wrote it.
 *
 * @module
 */

import { z } from "zod";
import { CRON_FORMS, cronProblem } from "./cron_text.ts";
import { parseListenAddr } from "./listen_addr.ts";
import { peopleSection, personName, qqId, telegramId, weixinId } from "./schema_people.ts";
import { baseUrl, boolean, byteSize, duration, number, path, secret, text } from "./schema_values.ts";

const listenAddr = z.string({ error: 'host:port such as "127.0.0.1:8080" or ":8080"' }).transform(
  (value, ctx) => {
    const parsed = parseListenAddr(value);
    if (!parsed) {
      ctx.addIssue({
        code: "custom",
        message: 'host:port such as "127.0.0.1:8080" or ":8080", port from 0 to 65535',
        input: value,
      });
      return z.NEVER;
    }
    return parsed;
  },
);

/** A host name homed may be reached as (`home.example`, `home.example:8443`, `192.168.1.5:8080`). */
const publicHost = text(
  'a host name or address, optionally with ":port", such as "home.example" or "192.168.1.5:8080"',
  /^(?:\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+)(?::\d{1,5})?$/,
);

/** A host media may be fetched from: a name (`*.` for its subdomains) or an address, optionally with a port. */
const mediaHost = text(
  'a host such as "gchat.qpic.cn", "*.qpic.cn" or "192.168.1.5:3000"',
  /^(?:\[[0-9a-fA-F:.]+\]|(?:\*\.)?[A-Za-z0-9.-]+)(?::\d{1,5})?$/,
);

/** A local device's name: its channel is `<kind>:<name>`. */
const deviceName = text("a device name: 1 to 32 of a-z, 0-9, _ and -", /^[a-z0-9_-]{1,32}$/);

const trustLevel = z.enum(["owner", "household", "guest"], { error: '"owner", "household" or "guest"' });

/** A program and its arguments, as a list (never a shell line: nothing in it is interpreted). */
const commandLine = z.array(text("a program or an argument"), { error: "a list: the program, then its arguments" })
  .min(1, { error: "a list: the program, then its arguments" });

/** A serial port (`devices.serial.<name>`). */
const serialDevice = z.strictObject({
  path: path(),
  baud: number(50, 4_000_000, true).default(115_200),
  // false: each line is a device event (recorded, shown in the next turn); true: a message answered on the port.
  turns: boolean().default(false),
  trust: trustLevel.default("household"),
  delimiter: text('a non-empty text such as "\\n" or ";"').min(1, { error: "a non-empty text" }).max(8, {
    error: "a text of at most 8 characters",
  }).default("\n"),
  max_line_bytes: number(16, 1_048_576, true).default(4_096),
});

/** A GPIO line (`devices.gpio.<name>`). */
const gpioLine = z.strictObject({
  chip: text('a GPIO chip such as "gpiochip0"', /^gpiochip\d{1,3}$/).default("gpiochip0"),
  line: number(0, 1_023, true),
  direction: z.enum(["in", "out"], { error: '"in" or "out"' }),
  edge: z.enum(["rising", "falling", "both"], { error: '"rising", "falling" or "both"' }).default("both"),
  turns: boolean().default(false),
  trust: trustLevel.default("household"),
  debounce: duration(0, 10_000, "0s to 10s").prefault("50ms"),
  active_low: boolean().default(false),
});

/** A Home Assistant domain (`light`) or entity id (`cover.garage`). */
const haName = text("a domain such as light, or an entity id such as cover.garage", /^[a-z0-9_]+(\.[a-z0-9_]+)?$/);

const mcpServerName = text("a server name: 1 to 32 of a-z, A-Z, 0-9, _ and -", /^[A-Za-z0-9_-]{1,32}$/);

/** One MCP server (`mcp.servers.<name>`): a command (stdio) or a URL (streamable HTTP, legacy SSE accepted). */
export const mcpServer = z.strictObject({
  command: text("a program name or path").min(1, { error: "a program name or path" }).optional(),
  args: z.array(z.string({ error: "a text" }), { error: "a list of arguments" }).default([]),
  env: z.record(text("an environment variable name", /^[A-Za-z_][A-Za-z0-9_]*$/), z.string({ error: "a text" }))
    .default({}),
  cwd: z.string({ error: "a folder (empty: homed's)" }).default(""),
  url: baseUrl.optional(),
  headers: z.record(text("a header name", /^[A-Za-z0-9-]+$/), z.string({ error: "a text" })).default({}),
  trust: z.enum(["anyone", "household", "owner"], { error: '"anyone", "household" or "owner"' }).default("owner"),
  // Per call; agent.tool_timeout when absent.
  timeout: duration(1_000, 1_800_000, "1s to 30m").optional(),
  include: z.array(text("a tool name"), { error: "a list of tool names" }).default([]),
  exclude: z.array(text("a tool name"), { error: "a list of tool names" }).default([]),
  enabled: boolean().default(true),
}).superRefine((server, ctx) => {
  if ((server.command === undefined) === (server.url === undefined)) {
    ctx.addIssue({
      code: "custom",
      path: ["command"],
      message: "either command (a stdio server) or url (an HTTP server), not both and not neither",
      input: server.command,
    });
  }
});

/** What `agent.tool_policy` says of a tool: run it, hold it for the owner's yes, or refuse it. */
const toolDecision = z.enum(["allow", "confirm", "deny"], { error: "allow, confirm or deny" });

/** A web origin allowed to call `/api/*` from a browser. */
const origin = text(
  'an origin such as "https://home.example" or "http://192.168.1.5:8080" (scheme, host, optional port; no path)',
  /^https?:\/\/(?:\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+)(?::\d{1,5})?$/,
);

/** One person's API token and how far homed trusts them. */
const personToken = z.strictObject({
  token: secret(16).refine((value) => value !== "", { error: "a token of at least 16 characters" }),
  trust: z.enum(["owner", "household", "guest"], { error: '"owner", "household" or "guest"' }).default("household"),
});

const channelName = text(
  'a channel name such as "http" or "qq:group:123"',
  /^[A-Za-z0-9_-]+(?::[^\s:]+)*$/,
);

/** Whether `zone` is an IANA time zone this runtime knows. */
export function validTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** LLM prices per million tokens (`llm.prices`, a fallback's `prices`). */
const llmPrices = z.strictObject({
  input: number(0, 1_000_000, false),
  input_cache_hit: number(0, 1_000_000, false),
  output: number(0, 1_000_000, false),
  currency: text("a currency code such as CNY or USD", /^[A-Za-z]{3}$/).default("CNY"),
});

/** One of `llm.fallbacks`: what it leaves out comes from the primary's `llm.*` (`src/config/llm_providers.ts`). */
const llmFallback = z.strictObject({
  provider: z.enum(["openai", "lua"], { error: '"openai" (chat completions) or "lua" (an adapter script)' })
    .default("openai"),
  model: text("a non-empty model name").min(1, { error: "a non-empty model name" }),
  base_url: baseUrl,
  // Empty: no Authorization header (a local server needs none).
  api_key: z.string({ error: "a string (empty means none is sent)" }).default(""),
  adapter: z.string({ error: "the path of a Lua adapter script or builtin:<name> (empty: none)" }).default(""),
  name: text("a label: 1 to 64 characters on one line", /^[^\n\r]{1,64}$/).optional(),
  temperature: number(0, 2, false).optional(),
  max_tokens: number(1, 1_000_000, true).optional(),
  thinking: z.union([boolean(), z.literal("omit")], { error: 'true, false or "omit"' }).optional(),
  timeout: duration(1_000, 1_800_000, "1s to 30m").optional(),
  max_retries: number(0, 10, true).optional(),
  prices: llmPrices.optional(),
});

/** The schema; parsing fills in every default, so `{}` is a complete config. */
export const configSchema = z.strictObject({
  daemon: z.strictObject({
    listen_addr: listenAddr.prefault("127.0.0.1:8080"),
    // Schedules without a time zone of their own run in this one; empty: the system's (looked up when first needed —
    // a named zone is checked at start, which loads Intl's time-zone data).
    timezone: z.string({ error: "an IANA time zone such as Asia/Shanghai (empty: the system's)" }).refine(
      (zone) => zone === "" || validTimeZone(zone),
      { error: "an IANA time zone such as Asia/Shanghai (empty: the system's)" },
    ).default(""),
    data_dir: path().default("./data"),
    heartbeat_interval: duration(1_000, 3_600_000, "1s to 1h").prefault("15s"),
    // Warn the owner (at most once a day, on their channel) when the data dir's disk has less free than this.
    low_disk: byteSize("never warn").prefault("500MB"),
    api_token: secret(16).default(""),
    api_tokens: z.record(personName, personToken).default({}),
    public_hosts: z.array(publicHost, { error: "a list of host names" }).default([]),
    allowed_origins: z.array(origin, { error: "a list of origins" }).default([]),
    max_body_bytes: number(1_024, 16 * 1024 * 1024, true).default(262_144),
    shutdown_grace: duration(1_000, 300_000, "1s to 5m").prefault("10s"),
    // true: the OpenAI-compatible door, GET /v1/models and POST /v1/chat/completions (behind the API tokens).
    openai_api: boolean().default(false),
  }).prefault({}),
  llm: z.strictObject({
    model: text("a non-empty model name").min(1, { error: "a non-empty model name" }).default(
      "deepseek-v4-flash",
    ),
    base_url: baseUrl.default("https://api.deepseek.com/v1"),
    api_key: z.string({ error: "a string (empty means not set)" }).default(""),
    temperature: number(0, 2, false).default(0.7),
    max_tokens: number(1, 1_000_000, true).default(4096),
    thinking: z.union([boolean(), z.literal("omit")], { error: 'true, false or "omit"' }).default(false),
    timeout: duration(1_000, 1_800_000, "1s to 30m").prefault("30s"),
    turn_timeout: duration(1_000, 3_600_000, "1s to 1h").prefault("90s"),
    max_retries: number(0, 10, true).default(2),
    // Most tools one request may offer: DeepSeek and OpenAI take at most 128. Over it a turn offers homed's own and
    // the devices' tools and the plugin and MCP tools nearest the message; status names what was left out.
    max_tools: number(1, 1024, true).default(128),
    provider: z.enum(["openai", "lua"], { error: '"openai" (chat completions) or "lua" (an adapter script)' })
      .default("openai"),
    adapter: z.string({ error: "the path of a Lua adapter script (empty: none)" }).default(""),
    // Per million tokens, for the console's cost figures (none: costs are not estimated).
    prices: llmPrices.optional(),
    // Providers tried in order when the primary (the keys above) cannot answer: down, or over llm.budget.
    fallbacks: z.array(llmFallback, { error: "a list of providers, each with model and base_url" }).default([]),
    // How often a provider that failed is tried again in the background (its breaker is open until one succeeds).
    probe_interval: duration(1_000, 3_600_000, "1s to 1h").prefault("30s"),
    // Spending caps of the primary per local day and month (daemon.timezone): money in llm.prices' currency, and
    // total tokens. Over one, the fallbacks answer until the period turns.
    budget: z.strictObject({
      daily: number(0, 1_000_000_000, false).optional(),
      monthly: number(0, 1_000_000_000, false).optional(),
      daily_tokens: number(1, 1_000_000_000_000, true).optional(),
      monthly_tokens: number(1, 1_000_000_000_000, true).optional(),
    }).optional(),
  }).prefault({}),
  lua: z.strictObject({
    time_limit: duration(10, 60_000, "10ms to 1m").prefault("1s"),
    memory_limit: number(1_048_576, 1_073_741_824, true).default(16_777_216),
  }).prefault({}),
  // Each member of the household once, with their addresses on every chat: one person across channels (issue 40).
  people: peopleSection,
  onebot: z.strictObject({
    enabled: boolean().default(true),
    path: text('a URL path starting with "/"', /^\/[A-Za-z0-9/_.-]*$/).default("/onebot/v11/ws"),
    access_token: secret(16).default(""),
    owner: qqId.or(z.literal("")).default(""),
    allow_users: z.array(qqId, { error: "a list of QQ numbers" }).default([]),
    allow_groups: z.array(qqId, { error: "a list of QQ group numbers" }).default([]),
    approve_friends: z.array(qqId, { error: "a list of QQ numbers" }).default([]),
    group_prefix: z.string({ error: "a text (empty: only @-mentions and replies address the butler)" }).max(32, {
      error: "a text of at most 32 characters",
    }).default(""),
    forward_url: z.string({ error: "a ws:// or wss:// URL" }).refine((value) => {
      if (value === "") return true;
      try {
        const url = new URL(value);
        return url.protocol === "ws:" || url.protocol === "wss:";
      } catch {
        return false;
      }
    }, { error: "empty, or a ws:// or wss:// URL of an implementation's forward WebSocket" }).default(""),
    action_timeout: duration(1_000, 300_000, "1s to 5m").prefault("30s"),
    split_at: number(100, 10_000, true).default(1_500),
    min_send_interval: duration(0, 60_000, "0s to 1m").prefault("1s"),
    queue_limit: number(1, 10_000, true).default(100),
    max_frame_bytes: number(4_096, 64 * 1024 * 1024, true).default(1_048_576),
  }).prefault({}),
  // Personal WeChat through Tencent's iLink bot API (issue 40): private chats only; the token comes from
  // `homed weixin login` (kept in the data dir, 0600) unless set here.
  weixin: z.strictObject({
    token: z.string({ error: "the bot token homed weixin login keeps, or empty" }).default(""),
    base_url: baseUrl.default("https://ilinkai.weixin.qq.com"),
    cdn_url: baseUrl.default("https://novac2c.cdn.weixin.qq.com/c2c"),
    owner: weixinId(true).default(""),
    allow_users: z.array(weixinId(false), { error: "a list of WeChat user ids (…@im.wechat)" }).default([]),
    // The service truncates or refuses longer texts (reported from 2,000 characters on).
    split_at: number(100, 2_000, true).default(2_000),
    // About three sends within a second throttle the bot for a long time.
    min_send_interval: duration(500, 60_000, "500ms to 1m").prefault("1s"),
    poll_timeout: duration(1_000, 120_000, "1s to 2m").prefault("35s"),
    queue_limit: number(1, 10_000, true).default(100),
  }).nullable().default(null),
  // Telegram through the Bot API (long polling: no public address needed).
  telegram: z.strictObject({
    // Checked for its shape only (<bot id>:<secret>): Telegram decides the rest, and doctor asks it.
    token: text(
      "a bot token from @BotFather: <bot id>:<secret>, such as 123456789:AA…",
      /^\d{1,20}:[A-Za-z0-9_-]{1,200}$/,
    ),
    api_url: baseUrl.default("https://api.telegram.org"),
    owner: telegramId(true).default(""),
    allow_users: z.array(telegramId(false), { error: "a list of Telegram user ids (digits)" }).default([]),
    allow_groups: z.array(telegramId(false), { error: "a list of Telegram group ids (digits, beginning with -)" })
      .default([]),
    split_at: number(100, 4_096, true).default(4_096),
    min_send_interval: duration(0, 60_000, "0s to 1m").prefault("1s"),
    poll_timeout: duration(1_000, 120_000, "1s to 2m").prefault("30s"),
    queue_limit: number(1, 10_000, true).default(100),
  }).nullable().default(null),
  vision: z.strictObject({
    base_url: baseUrl,
    model: text("a non-empty model name").min(1, { error: "a non-empty model name" }),
    api_key: z.string({ error: "a string (empty means not set)" }).default(""),
    // true: with a main model that reads image parts, the image goes to it (that turn only) instead of a description.
    direct: boolean().default(false),
    timeout: duration(1_000, 600_000, "1s to 10m").prefault("60s"),
    max_tokens: number(16, 8_192, true).default(400),
  }).nullable().default(null),
  speech: z.strictObject({
    stt: z.strictObject({
      base_url: baseUrl,
      model: text("a non-empty model name").min(1, { error: "a non-empty model name" }),
      api_key: z.string({ error: "a string (empty means not set)" }).default(""),
      language: text('empty (the server detects it) or an ISO-639-1 code such as "zh"', /^([a-z]{2})?$/).default(""),
      timeout: duration(1_000, 600_000, "1s to 10m").prefault("60s"),
    }).nullable().default(null),
    tts: z.strictObject({
      base_url: baseUrl,
      model: text("a non-empty model name").min(1, { error: "a non-empty model name" }),
      voice: text("a non-empty voice name").min(1, { error: "a non-empty voice name" }),
      api_key: z.string({ error: "a string (empty means not set)" }).default(""),
      timeout: duration(1_000, 600_000, "1s to 10m").prefault("60s"),
    }).nullable().default(null),
    reply_with_voice: z.enum(["never", "when_spoken_to", "always"], {
      error: '"never", "when_spoken_to" or "always"',
    }).default("when_spoken_to"),
  }).prefault({}),
  media: z.strictObject({
    max_image_bytes: number(1_024, 100 * 1024 * 1024, true).default(10 * 1024 * 1024),
    max_audio_bytes: number(1_024, 100 * 1024 * 1024, true).default(10 * 1024 * 1024),
    // A guest's attachments are fetched within this smaller budget (each).
    guest_max_bytes: number(1_024, 100 * 1024 * 1024, true).default(2 * 1024 * 1024),
    fetch_timeout: duration(1_000, 300_000, "1s to 5m").prefault("20s"),
    // Hosts media is fetched from (QQ's media servers): what `homed flags` grants net access to.
    fetch_hosts: z.array(mediaHost, { error: "a list of host names" }).default([
      "*.qpic.cn",
      "*.qq.com",
      "*.qq.com.cn",
    ]),
    // Private or loopback hosts that may be fetched anyway (an implementation's own media server on the LAN).
    allow_hosts: z.array(mediaHost, { error: "a list of host names" }).default([]),
    cache_bytes: number(1_048_576, 2 ** 40, true).default(256 * 1024 * 1024),
  }).prefault({}),
  devices: z.strictObject({
    serial: z.record(deviceName, serialDevice).default({}),
    gpio: z.record(deviceName, gpioLine).default({}),
    microphone: z.strictObject({
      command: commandLine.default(["arecord", "-q", "-f", "S16_LE", "-r", "16000", "-c", "1", "-t", "raw"]),
      // The capture command's format: signed 16-bit little-endian mono at this rate.
      sample_rate: number(8_000, 48_000, true).default(16_000),
      trust: trustLevel.default("household"),
      // A transcript must start with one of these to be a message (case and punctuation ignored); empty: every one.
      wake_words: z.array(text("a non-empty word").min(1, { error: "a non-empty word" }), {
        error: "a list of words",
      }).default([]),
      // Voice activity: a frame louder than this RMS (0–32767) is speech.
      threshold: number(1, 32_767, true).default(600),
      min_speech: duration(50, 10_000, "50ms to 10s").prefault("300ms"),
      end_silence: duration(100, 10_000, "100ms to 10s").prefault("800ms"),
      max_utterance: duration(1_000, 120_000, "1s to 2m").prefault("15s"),
    }).nullable().default(null),
    speaker: z.strictObject({
      command: commandLine.default(["aplay", "-q"]),
      timeout: duration(1_000, 600_000, "1s to 10m").prefault("2m"),
    }).nullable().default(null),
    camera: z.strictObject({
      command: commandLine.default([
        "ffmpeg",
        "-loglevel",
        "error",
        "-f",
        "v4l2",
        "-i",
        "/dev/video0",
        "-frames:v",
        "1",
        "-f",
        "image2",
        "-",
      ]),
      timeout: duration(1_000, 120_000, "1s to 2m").prefault("10s"),
    }).nullable().default(null),
  }).prefault({}),
  smart_home: z.strictObject({
    home_assistant: z.strictObject({
      url: baseUrl,
      token: secret(16).refine((value) => value !== "", {
        error: "a long-lived access token (at least 16 characters)",
      }),
      domains: z.array(haName, { error: "a list of domains" }).default([
        "light",
        "switch",
        "climate",
        "cover",
        "media_player",
      ]),
      // Services on these domains or entities wait for the owner's yes (one of 是, yes, 确认, or /confirm <id>).
      confirm: z.array(haName, { error: "a list of domains or entity ids" }).default([
        "lock",
        "alarm_control_panel",
        "cover.garage",
      ]),
      subscribe: z.array(text("an entity id or a pattern such as binary_sensor.*door*"), {
        error: "a list of entity ids or patterns",
      }).default([]),
      // Entities whose changes start a turn (a rule: "the front door opened"), answered where io.routes sends ha:<id>.
      turns: z.array(text("an entity id or a pattern such as binary_sensor.*door*"), {
        error: "a list of entity ids or patterns",
      }).default([]),
      confirm_timeout: duration(10_000, 3_600_000, "10s to 1h").prefault("2m"),
    }).nullable().default(null),
    mqtt: z.strictObject({
      url: text("an mqtt:// or mqtts:// URL", /^mqtts?:\/\/[^\s/]+(:\d+)?\/?$/),
      username: z.string({ error: "a text" }).default(""),
      password: z.string({ error: "a text" }).default(""),
      subscribe: z.array(text("an MQTT topic filter such as home/+/motion"), { error: "a list of topic filters" })
        .default([]),
      publish: z.array(text("an MQTT topic filter such as home/+/set"), { error: "a list of topic filters" })
        .default([]),
      // Longer incoming messages are dropped unread (src/devices/mqtt/broker_socket.ts); 1 KiB to 64 MiB.
      max_payload_bytes: number(1_024, 64 * 1024 * 1024, true).default(262_144),
    }).nullable().default(null),
  }).prefault({}),
  mcp: z.strictObject({
    servers: z.record(mcpServerName, mcpServer).default({}),
    // A Claude-Desktop style file ({"mcpServers": {…}}) whose servers join these (a server named here wins).
    import: z.string({ error: "the path of an mcp.json file (empty: none)" }).default(""),
    // true: homed is an MCP server too, at /mcp on its listener (streamable HTTP, behind the API tokens).
    serve_http: boolean().default(false),
  }).prefault({}),
  io: z.strictObject({
    routes: z.record(
      text('an input source or prefix such as "http" or "qq:group:"', /^[A-Za-z0-9_-]+(?::[^\s:]*)*$/),
      channelName,
    ).default({}),
    send_timeout: duration(1_000, 600_000, "1s to 10m").prefault("30s"),
    max_waiting_per_sender: number(1, 10_000, true).default(50),
  }).prefault({}),
  agent: z.strictObject({
    max_tool_rounds: number(1, 50, true).default(10),
    // Everyday house commands understood without a model (src/intents/): prefer — locally even when a model is up (no
    // tokens, milliseconds); fallback — only when no model answers; off — never.
    local_intents: z.enum(["prefer", "fallback", "off"], { error: '"prefer", "fallback" or "off"' }).default(
      "fallback",
    ),
    tool_timeout: duration(1_000, 1_800_000, "1s to 30m").prefault("30s"),
    // Per tool name pattern (* matches any run of characters), for everyone or per trust: allow, confirm (the owner's
    // yes first) or deny (not even offered to the model). The first pattern that matches decides.
    tool_policy: z.record(
      text("a tool name or pattern: 1 to 64 of a-z, A-Z, 0-9, _, - and *", /^[A-Za-z0-9_*-]{1,64}$/),
      z.union([
        toolDecision,
        z.strictObject({ owner: toolDecision, household: toolDecision, guest: toolDecision })
          .partial(),
      ], { error: "allow, confirm or deny, or { owner?, household?, guest? } with those" }),
    ).default({}),
  }).prefault({}),
  memory: z.strictObject({
    context_size: number(4, 1_000, true).default(30),
    context_tokens: number(2_000, 2_000_000, true).default(48_000),
    cold_after: duration(60_000, 365 * 86_400_000, "1m to 365d").prefault("72h"),
    distill_interval: duration(60_000, 7 * 86_400_000, "1m to 7d").prefault("30m"),
  }).prefault({}),
  plugins: z.strictObject({
    extra_dirs: z.array(path(), { error: "a list of folders" }).default([]),
    entries: z.record(
      text("a skill's name or skillKey", /^[A-Za-z0-9_.-]{1,64}$/),
      z.strictObject({
        enabled: boolean().optional(),
        env: z.record(text("an environment variable name", /^[A-Za-z_][A-Za-z0-9_]*$/), z.string({ error: "a text" }))
          .optional(),
        apiKey: z.string({ error: "a text" }).optional(),
      }),
    ).default({}),
    allow_exec: boolean().default(false),
    exec_allowlist: z.array(
      text("a program name or an absolute path", /^(\/[^\0,]+|[\w.+-]+)$/),
      { error: "a list of program names or absolute paths" },
    ).default([]),
    skills_prompt_chars: number(1_000, 200_000, true).default(18_000),
    watch: boolean().default(true),
  }).prefault({}),
  tracker: z.strictObject({
    // The overlay the deployed tree is mounted from, as /proc/mounts shows it (which Deno cannot read without -A).
    overlay: z.strictObject({
      mount: path(),
      upper: path(),
      lower: z.array(path(), { error: "a list of folders, top-most first" }).min(1, {
        error: "a list of at least one lower folder",
      }),
    }).nullable().default(null),
  }).prefault({}),
  backup: z.strictObject({
    // The most `homed restore` unpacks, all members together (bytes); null: 4 × what the parts hold now, at least 1 GiB.
    max_restore_bytes: number(1_048_576, 2 ** 50, true).nullable().default(null),
    // Automatic backups while homed runs: a 5-field cron in daemon.timezone; "" turns them off.
    schedule: z.string({ error: `${CRON_FORMS}, or "" (off)` }).transform((line, ctx) => {
      const problem = line.trim() === "" ? undefined : cronProblem(line);
      if (problem) ctx.addIssue({ code: "custom", message: `${CRON_FORMS}, or "" (off): ${problem}`, input: line });
      return line.trim();
    }).default("30 3 * * *"),
    // Where automatic backups go; "": <data_dir>/backups. Better another disk.
    dir: z.string({ error: "a folder (empty: <data_dir>/backups)" }).default(""),
    // Retention: the newest archive of each of the last `daily` days and of the last `weekly` ISO weeks.
    keep: z.strictObject({
      daily: number(1, 366, true).default(7),
      weekly: number(0, 520, true).default(4),
    }).prefault({}),
  }).prefault({}),
  paths: z.strictObject({
    personal: path().default("./personal.md"),
    knowledge: path().default("./knowledge"),
    plugins: path().default("./plugins"),
    // The household's own sentence templates (*.yaml), added to the embedded ones; a missing folder is no error.
    intents: path().default("./intents"),
  }).prefault({}),
  log: z.strictObject({
    level: z.enum(["debug", "info", "warning", "error"], {
      error: '"debug", "info", "warning" or "error"',
    }).default("info"),
    format: z.enum(["text", "json"], { error: '"text" or "json"' }).default("text"),
  }).prefault({}),
});

/** A validated config, with every default filled in, durations in milliseconds and paths as written. */
export type Config = z.output<typeof configSchema>;
