/**
 * MQTT.js (`npm:mqtt`) as homed runs it: loaded so it needs no environment rights, and connected over a TCP or TLS
 * socket homed builds itself.
 *
 * Why the loader: homed runs with a narrow `--allow-env` list, and MQTT.js's dependencies read the environment when
 * they load — `debug` enumerates every variable (`Object.keys(process.env)`, looking for `DEBUG_*`, which needs the
 * right to read *all* of them) and reads `DEBUG`; `readable-stream` reads `READABLE_STREAM`. Under Deno each of those
 * throws `NotCapable` and the import fails. {@link loadMqtt} imports MQTT.js once, with `process.env` standing in
 * for a view that answers reads of variables homed may not read with `undefined`, drops writes to them, and lists
 * none (listing needs `--allow-env` for all), then puts the real one back; variables homed may read pass through.
 *
 * Why the own socket: `mqtt.connect()` loads the WebSocket transport (`ws`, which reads `WS_NO_BUFFER_UTIL` and
 * `WS_NO_UTF_8_VALIDATE` when it loads, after the import) and reads `MQTTJS_SOCKS_PROXY` on every connect. A client
 * built with {@link newMqttClient} goes to `mqtt://` (TCP) or `mqtts://` (TLS) brokers directly and reads nothing.
 * Owning the socket is also what lets homed bound incoming messages before MQTT.js buffers them
 * (`broker_socket.ts`): MQTT 3.1.1 has no way to tell the broker a size limit.
 *
 * Import MQTT.js only through here: a static `import … from "mqtt"` anywhere in homed loads it first, without the
 * stand-in, and fails (type-only imports are fine).
 *
 * @module
 */

import process from "node:process";
import type { IClientOptions, MqttClient } from "mqtt";
import { BrokerSocket, type InboundLimit } from "./broker_socket.ts";

/** The MQTT.js module. */
export type MqttModule = typeof import("mqtt");

let loading: Promise<MqttModule> | undefined;

/** Whether this process may read the variable `name` (asked without a prompt). */
function mayRead(name: string): boolean {
  return Deno.permissions.querySync({ name: "env", variable: name }).state === "granted";
}

/**
 * MQTT.js, imported once per process without needing any `--allow-env` right (see the module doc).
 *
 * @example
 * ```ts
 * const mqtt = await loadMqtt();
 * typeof mqtt.MqttClient; // "function"
 * ```
 */
export function loadMqtt(): Promise<MqttModule> {
  loading ??= importQuietly().catch((error) => {
    loading = undefined;
    throw error;
  });
  return loading;
}

async function importQuietly(): Promise<MqttModule> {
  if (Deno.permissions.querySync({ name: "env" }).state === "granted") return await import("mqtt");
  const original = process.env;
  const descriptor = Object.getOwnPropertyDescriptor(process, "env");
  // The target is a plain object, not the real view: a proxy's `ownKeys` is checked against its target's own keys,
  // and asking Deno's `process.env` for those is exactly the enumeration that needs every right.
  const view = new Proxy({} as Record<string, string | undefined>, {
    get: (_, key) => (typeof key !== "string" || mayRead(key) ? Reflect.get(original, key) : undefined),
    has: (_, key) => (typeof key !== "string" || mayRead(key) ? Reflect.has(original, key) : false),
    // `debug` also deletes `DEBUG` when it finds no namespaces: a write homed has no right to is dropped.
    set: (_, key, value) => (typeof key !== "string" || mayRead(key) ? Reflect.set(original, key, value) : true),
    deleteProperty: (
      _,
      key,
    ) => (typeof key !== "string" || mayRead(key) ? Reflect.deleteProperty(original, key) : true),
    // Only --allow-env for everything may list the variables; short of that the list is empty.
    ownKeys: () => [],
    getOwnPropertyDescriptor: (_, key) => {
      if (typeof key !== "string" || !mayRead(key)) return undefined;
      const value = Reflect.get(original, key);
      return value === undefined ? undefined : { value, writable: true, enumerable: true, configurable: true };
    },
  });
  Object.defineProperty(process, "env", { value: view, configurable: true, writable: true, enumerable: true });
  try {
    return await import("mqtt");
  } finally {
    if (descriptor) Object.defineProperty(process, "env", descriptor);
    else Object.defineProperty(process, "env", { value: original, configurable: true, writable: true });
  }
}

/** A broker's address as homed connects to it. */
export interface BrokerAddress {
  /** `mqtt` (TCP) or `mqtts` (TLS). */
  protocol: "mqtt" | "mqtts";
  host: string;
  port: number;
  /** From the URL's user part, when it has one (the `username` setting wins). */
  username: string;
  /** From the URL's user part, when it has one (the `password` setting wins). Never shown. */
  password: string;
  /** The URL without any password, for status and messages. */
  display: string;
}

/**
 * Reads a broker URL (`mqtt://host[:1883]` or `mqtts://host[:8883]`, optionally with `user:password@`); a TypeError
 * naming `setting` and the URL (its password masked) otherwise.
 *
 * @example
 * ```ts
 * const address = parseBrokerUrl("mqtt://homed:secret@192.168.1.5", "smart_home.mqtt.url");
 * address.port; // 1883
 * address.display; // "mqtt://homed@192.168.1.5:1883"
 * ```
 */
export function parseBrokerUrl(url: string, setting: string): BrokerAddress {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new TypeError(`${setting}: ${JSON.stringify(maskPassword(url))} is not a URL; use mqtt://host:1883`);
  }
  const scheme = parsed.protocol.replace(/:$/, "");
  const protocol = scheme === "mqtt" || scheme === "tcp"
    ? "mqtt"
    : scheme === "mqtts" || scheme === "ssl"
    ? "mqtts"
    : undefined;
  const shown = JSON.stringify(maskPassword(url));
  if (!protocol) {
    throw new TypeError(
      `${setting}: ${shown} uses ${scheme}://; homed connects to mqtt:// (TCP, port 1883) or mqtts:// (TLS, port 8883)`,
    );
  }
  if (!parsed.hostname) throw new TypeError(`${setting}: ${shown} names no host; use mqtt://host:1883`);
  if ((parsed.pathname !== "" && parsed.pathname !== "/") || parsed.search || parsed.hash) {
    throw new TypeError(`${setting}: ${shown} has a path or query; an MQTT broker URL is only mqtt://host:port`);
  }
  const port = parsed.port ? Number(parsed.port) : protocol === "mqtt" ? 1883 : 8883;
  // URL keeps IPv6 hosts in brackets; sockets want them bare.
  const host = parsed.hostname.replace(/^\[(.*)\]$/, "$1");
  const username = decodeURIComponent(parsed.username);
  const user = parsed.username ? `${parsed.username}@` : "";
  return {
    protocol,
    host,
    port,
    username,
    password: decodeURIComponent(parsed.password),
    display: `${protocol}://${user}${parsed.hostname}:${port}`,
  };
}

/** `url` with the password of its user part replaced by `***` (for messages about a URL that did not parse). */
function maskPassword(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/[^/@:]*):[^/@]*@/i, "$1:***@");
}

/**
 * A not-yet-connected MQTT.js client for `address`, over a connection homed opens itself (a {@link BrokerSocket}:
 * TCP, or TLS checked against the roots Deno trusts with the host as server name); call `connect()` on it. `options`
 * are MQTT.js's, but `manualConnect` is always set, `log` is silenced (MQTT.js's debug log prints whole packets) and
 * `writeCache` is off.
 * With `inbound`, a message whose payload is over its limit never reaches MQTT.js.
 *
 * @example
 * ```ts
 * const client = await newMqttClient(parseBrokerUrl("mqtt://127.0.0.1:1883", "url"), { clientId: "homed-test" }, {
 *   maxPayloadBytes: 262_144,
 *   onDropped: (dropped) => console.log(`dropped ${dropped.payloadBytes} bytes on ${dropped.topic}`),
 * });
 * client.on("connect", () => client.end());
 * client.connect();
 * ```
 */
export async function newMqttClient(
  address: BrokerAddress,
  options: IClientOptions,
  inbound?: InboundLimit,
): Promise<MqttClient> {
  const { MqttClient } = await loadMqtt();
  const connect = () =>
    address.protocol === "mqtts"
      ? Deno.connectTls({ hostname: address.host, port: address.port })
      : Deno.connect({ hostname: address.host, port: address.port });
  const streamBuilder = () => new BrokerSocket(connect, inbound);
  // writeCache off: otherwise mqtt-packet makes 65,536 two-byte Buffers on the first packet — ≈ 7 MB of JS heap for
  // ever (a soak's heap snapshot) to save an allocation per number written, which a household's rate never needs.
  return new MqttClient(streamBuilder, { ...options, manualConnect: true, log: () => {}, writeCache: false });
}
