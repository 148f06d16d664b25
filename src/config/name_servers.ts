/**
 * The right `Deno.resolveDns` needs. Deno checks it against the name servers it will ask, not the name asked: net
 * access to each `nameserver` of `/etc/resolv.conf` as `ip:53` ("Requires net access to "127.0.0.53:53"") — even
 * for a name `/etc/hosts` answers. A right for the name itself (`*.qpic.cn`) lets `fetch` connect, never resolve.
 * Deno's resolver (hickory) reads `/etc/resolv.conf` on every lookup and takes every `nameserver` line, an IPv6
 * zone dropped; the port is always 53, which resolv.conf cannot change.
 *
 * @module
 */

/** Where the system resolver's name servers are listed (hickory's fixed path on Unix). */
export const RESOLV_CONF = "/etc/resolv.conf";

/** A dotted-decimal IPv4 address, each octet 0–255. */
const IPV4 = /^(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/;

/** An IPv6 address in its canonical spelling (lower case, compressed), or undefined when `text` is not one. */
function canonicalIpv6(text: string): string | undefined {
  if (!/^[0-9a-fA-F:.]+$/.test(text) || !text.includes(":")) return undefined;
  try {
    return new URL(`http://[${text}]/`).hostname.slice(1, -1);
  } catch {
    return undefined;
  }
}

/**
 * The `--allow-net` rights `Deno.resolveDns` needs under a resolv.conf's text: `ip:53` for each `nameserver` line,
 * IPv6 in brackets without its zone, in order, once each. Lines that are not an IP address are left out (the resolver
 * fails on them anyway).
 *
 * @example
 * ```ts
 * nameServerRights("search lan\nnameserver 127.0.0.53\nnameserver fe80::1%eth0\n");
 * // ["127.0.0.53:53", "[fe80::1]:53"]
 * ```
 */
export function nameServerRights(resolvConf: string): string[] {
  const rights: string[] = [];
  for (const line of resolvConf.split("\n")) {
    const [keyword, value] = line.trim().split(/\s+/);
    if (keyword !== "nameserver" || value === undefined) continue;
    const address = value.replace(/%.*$/, "");
    const v6 = IPV4.test(address) ? undefined : canonicalIpv6(address);
    const right = IPV4.test(address) ? `${address}:53` : v6 ? `[${v6}]:53` : undefined;
    if (right && !rights.includes(right)) rights.push(right);
  }
  return rights;
}

/**
 * The text of the resolver's configuration, or "" when it cannot be read — missing, or no read right: the daemon's
 * rights then lack both the name servers and a read right it has not got, and its start-up check names the latter.
 *
 * @example
 * ```ts
 * nameServerRights(readResolvConf()); // ["127.0.0.53:53"] under systemd-resolved
 * ```
 */
export function readResolvConf(path: string = RESOLV_CONF): string {
  try {
    return Deno.readTextFileSync(path);
  } catch {
    return "";
  }
}
