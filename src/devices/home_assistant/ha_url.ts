/**
 * Home Assistant's URL as homed uses it: the WebSocket URL made from the base URL the owner configures, and the URL
 * with its credentials taken out for status and logs. Pure functions apart from the connection, so they are read and
 * tested without a socket.
 *
 * @module
 */

/**
 * The WebSocket URL for HA's base URL: `http` becomes `ws`, `https` `wss`, and `/api/websocket` is appended to the
 * path (a reverse proxy's prefix kept); a `ws(s)://` URL is taken as it is. Throws a `TypeError` naming
 * `smart_home.home_assistant.url` for anything else.
 *
 * @example
 * ```ts
 * websocketUrl("http://homeassistant.local:8123"); // "ws://homeassistant.local:8123/api/websocket"
 * websocketUrl("https://example.org/ha/"); // "wss://example.org/ha/api/websocket"
 * ```
 */
export function websocketUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new TypeError(
      `smart_home.home_assistant.url: ${JSON.stringify(url)} is not a URL; use http://<host>:8123 or https://…`,
    );
  }
  const scheme = { "http:": "ws:", "https:": "wss:", "ws:": "ws:", "wss:": "wss:" }[parsed.protocol];
  if (!scheme) {
    throw new TypeError(
      `smart_home.home_assistant.url: ${JSON.stringify(url)} is not an http(s):// or ws(s):// URL`,
    );
  }
  const keep = parsed.protocol === "ws:" || parsed.protocol === "wss:";
  const path = keep ? parsed.pathname : `${parsed.pathname.replace(/\/+$/, "")}/api/websocket`;
  return `${scheme}//${parsed.host}${path}${keep ? parsed.search : ""}`;
}

/**
 * The URL with any user name and password taken out, for status and logs.
 *
 * @example
 * ```ts
 * shownUrl("http://me:secret@ha.local:8123/"); // "http://ha.local:8123/"
 * ```
 */
export function shownUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.username = "";
    parsed.password = "";
    return parsed.toString();
  } catch {
    return url;
  }
}
