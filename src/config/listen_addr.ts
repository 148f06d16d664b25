/**
 * The daemon's `host:port` listen address and whether it stays on loopback.
 *
 * @module
 */

/** A parsed listen address. `host` is empty for "every interface" (the seed's `:8080`). */
export interface ListenAddr {
  host: string;
  port: number;
}

/**
 * Parses `host:port`, `[v6]:port` or `:port`; `undefined` when malformed.
 *
 * @example
 * ```ts
 * parseListenAddr("127.0.0.1:8080"); // { host: "127.0.0.1", port: 8080 }
 * parseListenAddr(":8080"); // { host: "", port: 8080 }
 * ```
 */
export function parseListenAddr(text: string): ListenAddr | undefined {
  const match = /^(?:\[([0-9a-fA-F:.]+)\]|([A-Za-z0-9.-]*)):(\d{1,5})$/.exec(text.trim());
  if (!match) return undefined;
  const port = Number(match[3]);
  if (port > 65_535) return undefined;
  return { host: match[1] ?? match[2] ?? "", port };
}

/**
 * True when the address only accepts connections from this machine.
 *
 * @example
 * ```ts
 * isLoopback("127.0.0.1"); // true
 * isLoopback("0.0.0.0"); // false
 * ```
 */
export function isLoopback(host: string): boolean {
  return host === "localhost" || host === "::1" || /^127(?:\.\d{1,3}){3}$/.test(host);
}

/** The host to bind: the empty host means every interface. */
export function bindHost(addr: ListenAddr): string {
  return addr.host === "" ? "0.0.0.0" : addr.host;
}

/** The host to connect to when talking to the daemon from this machine. */
export function connectHost(addr: ListenAddr): string {
  const host = addr.host === "" || addr.host === "0.0.0.0" ? "127.0.0.1" : addr.host === "::" ? "::1" : addr.host;
  return host.includes(":") ? `[${host}]` : host;
}
