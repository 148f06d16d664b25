/**
 * `host:port` of a URL as Deno's `--allow-net` takes it, with the scheme's default port when the URL names none.
 *
 * @module
 */

/** The default port of each scheme homed dials; any other scheme counts as 80. */
const DEFAULT_PORTS: Readonly<Record<string, string>> = {
  "https:": "443",
  "wss:": "443",
  "mqtt:": "1883",
  "mqtts:": "8883",
};

/**
 * `host:port` of `url` (https/wss 443, mqtt 1883, mqtts 8883, else 80).
 *
 * @example
 * ```ts
 * hostPort("https://api.deepseek.com/v1"); // "api.deepseek.com:443"
 * hostPort("mqtt://broker.local"); // "broker.local:1883"
 * hostPort("http://[::1]:8123"); // "[::1]:8123"
 * ```
 */
export function hostPort(url: string): string {
  const scheme = /^[a-z][a-z0-9+.-]*:/i.exec(url)?.[0].toLowerCase() ?? "";
  const parsed = new URL(url);
  // MQTT's schemes are not special to WHATWG URL: its host is read as http's, normalised as a connection sees it.
  const host = scheme.startsWith("mqtt") ? new URL(url.replace(/^mqtts?:/i, "http:")).hostname : parsed.hostname;
  return `${host}:${parsed.port || DEFAULT_PORTS[scheme] || "80"}`;
}
