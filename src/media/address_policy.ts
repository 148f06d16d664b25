/**
 * Which media URLs homed may fetch. A QQ message or an API call names a URL and homed fetches it from inside the
 * household network, so without rules a stranger's message could make homed read the router's admin page, a cloud
 * metadata endpoint (169.254.169.254) or homed's own API. The rules: only `http:` and `https:`, no credentials, and
 * every address the host stands for must be public — unless the host is listed (`media.allow_hosts`) or is the
 * OneBot implementation that sent the attachment; homed's own listener is refused whatever the lists say.
 *
 * IP literals are classified after WHATWG URL parsing, which is what `fetch` connects to: `http://2130706433/` and
 * `http://0x7f.1/` are 127.0.0.1. A name is resolved here and every answer checked, but `fetch` resolves it again
 * when it connects; a name whose answers change in between (DNS rebinding) is caught only when it answers a private
 * address here.
 *
 * @module
 */

import { type AddressClass, classifyAddress, parseIpv4, parseIpv6 } from "../net/ip_address.ts";
import { escapeControl } from "../text/untrusted.ts";

/** What {@link checkMediaUrl} allows beyond public addresses, and how it resolves names. */
export interface AddressPolicy {
  /** Hosts (exact host, host:port, or "*.example.com") that may be fetched even when they are private/loopback (media.allow_hosts). */
  allowHosts: readonly string[];
  /** The address (host, any port) of the implementation that sent the attachment: its own URLs may be private. */
  trustedHosts: readonly string[];
  /** homed's own listener (host and port): never fetched, whatever the lists say. */
  ownListen: { host: string; port: number };
  /** Resolves a host name to its addresses (Deno.resolveDns A and AAAA in production; injected in tests). */
  resolve(host: string): Promise<string[]>;
}

/** The longest part of a URL a message quotes. */
const URL_SHOWN = 120;

/** A URL for a message: control characters made visible, credentials dropped, at most {@link URL_SHOWN} characters. */
function shownUrl(url: string | URL): string {
  let text: string;
  if (typeof url === "string") {
    text = url;
  } else {
    const copy = new URL(url.href);
    copy.username = "";
    copy.password = "";
    text = copy.href;
  }
  text = escapeControl(text);
  return text.length > URL_SHOWN ? `${text.slice(0, URL_SHOWN - 1)}…` : text;
}

/** homed will not fetch a URL; the message names the URL and why. Callers catch it to tell the sender. */
export class MediaRefused extends Error {
  /** The URL as the message shows it (without credentials, at most about 120 characters). */
  readonly url: string;
  /** Why, in words (the part of the message after the URL). */
  readonly reason: string;

  /**
   * @example
   * ```ts
   * const refused = new MediaRefused("file:///etc/passwd", "the scheme file: is not allowed (only http: and https:)");
   * refused.message; // "Homed will not fetch file:///etc/passwd: the scheme file: is not allowed (only http: and https:)"
   * ```
   */
  constructor(url: string | URL, reason: string) {
    const shown = shownUrl(url);
    super(`Homed will not fetch ${shown}: ${reason}`);
    this.name = "MediaRefused";
    this.url = shown;
    this.reason = reason;
  }
}

/** A host as a URL's `hostname` gives it, brackets off and one trailing dot off, for comparing. */
function bareHost(hostname: string): string {
  const unbracketed = hostname.startsWith("[") && hostname.endsWith("]") ? hostname.slice(1, -1) : hostname;
  return unbracketed.endsWith(".") ? unbracketed.slice(0, -1) : unbracketed;
}

/** Whether a bare host is an IP literal (a URL's hostname is dotted decimal or bracketed IPv6 when it is one). */
function isIpLiteral(host: string): boolean {
  return parseIpv4(host) !== undefined || parseIpv6(host) !== undefined;
}

/** An address in one spelling (IPv6 compressed, lower case), so equal addresses compare equal. */
function canonicalAddress(ip: string): string {
  if (parseIpv4(ip)) return ip;
  try {
    return bareHost(new URL(`http://[${ip.replace(/%.*$/, "")}]/`).hostname);
  } catch {
    return ip.toLowerCase();
  }
}

/** One host pattern of the lists: a host (normalized as a URL would), maybe a port, maybe a `*.` wildcard. */
interface HostPattern {
  host: string;
  port: number | undefined;
  wildcard: boolean;
}

function parseHostPattern(entry: string, list: string): HostPattern {
  const text = entry.trim().toLowerCase();
  const wildcard = text.startsWith("*.");
  const rest = wildcard ? text.slice(2) : text;
  let host = rest;
  let port: string | undefined;
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(rest);
  const withPort = /^([^:]+):(\d+)$/.exec(rest);
  if (bracketed) [host, port] = [bracketed[1] ?? "", bracketed[2]];
  else if (withPort) [host, port] = [withPort[1] ?? "", withPort[2]];
  const invalid = () =>
    new TypeError(`The ${list} entry "${escapeControl(entry)}" is not a host, host:port or *.domain`);
  if (!/^[^/?#@\s\\]+$/.test(host)) throw invalid();
  let normalized: string;
  try {
    normalized = bareHost(new URL(`http://${host.includes(":") ? `[${host}]` : host}/`).hostname);
  } catch {
    throw invalid();
  }
  const portNumber = port === undefined ? undefined : Number(port);
  if (normalized === "" || (portNumber !== undefined && portNumber > 65_535)) throw invalid();
  if (wildcard && isIpLiteral(normalized)) throw invalid();
  return { host: normalized, port: portNumber, wildcard };
}

function matchesPattern(pattern: HostPattern, host: string, port: number, anyPort: boolean): boolean {
  if (!anyPort && pattern.port !== undefined && pattern.port !== port) return false;
  return pattern.wildcard ? host.endsWith(`.${pattern.host}`) : host === pattern.host;
}

/** `localhost` and its subdomains are the machine itself by definition (RFC 6761); no resolver is asked. */
function isLocalhostName(host: string): boolean {
  return host === "localhost" || host.endsWith(".localhost");
}

const ALLOW_HINT = "list the host in media.allow_hosts to allow it";

/** "a loopback", "an unspecified"… for a sentence. */
function article(kind: AddressClass): string {
  return /^[aeiou]/.test(kind) ? `an ${kind}` : `a ${kind}`;
}

/**
 * Checks a media URL against the policy and returns it parsed; a {@link MediaRefused} naming the URL and the reason
 * when homed must not fetch it. `fetchBounded` calls this on the first URL and on every redirect.
 *
 * @example
 * ```ts
 * const policy: AddressPolicy = {
 *   allowHosts: ["nas.lan:5000"],
 *   trustedHosts: ["127.0.0.1"],
 *   ownListen: { host: "127.0.0.1", port: 8123 },
 *   resolve: resolveWithDns,
 * };
 * await checkMediaUrl("http://127.0.0.1:3000/image/abc.png", policy); // URL: the OneBot implementation's own file
 * await checkMediaUrl("http://169.254.169.254/latest/meta-data/", policy).catch((error) => {
 *   if (error instanceof MediaRefused) console.log(error.message); // "… 169.254.169.254 is a link-local address …"
 * });
 * ```
 */
export async function checkMediaUrl(raw: string, policy: AddressPolicy): Promise<URL> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new MediaRefused(raw, "it is not a valid absolute URL");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new MediaRefused(url, `the scheme ${escapeControl(url.protocol)} is not allowed (only http: and https:)`);
  }
  if (url.username !== "" || url.password !== "") {
    throw new MediaRefused(url, "a user name or password in the URL is not allowed");
  }
  const host = bareHost(url.hostname);
  const port = url.port === "" ? (url.protocol === "https:" ? 443 : 80) : Number(url.port);
  const allowed =
    policy.allowHosts.some((entry) =>
      matchesPattern(parseHostPattern(entry, "media.allow_hosts"), host, port, false)
    ) ||
    policy.trustedHosts.some((entry) => matchesPattern(parseHostPattern(entry, "trusted host"), host, port, true));
  const own = policy.ownListen;
  const onOwnPort = port === own.port;

  let addresses: string[];
  if (isIpLiteral(host)) {
    addresses = [canonicalAddress(host)];
  } else if (isLocalhostName(host)) {
    addresses = ["127.0.0.1"];
  } else if (allowed && !onOwnPort) {
    return url; // a listed name may stand for anything, so asking the resolver would change nothing
  } else {
    try {
      addresses = await policy.resolve(host);
    } catch (error) {
      throw new MediaRefused(url, `the host name ${host} could not be resolved${resolveFailure(error)}`);
    }
    if (addresses.length === 0) throw new MediaRefused(url, `the host name ${host} resolved to no address`);
  }

  const classes = addresses.map((address): [string, AddressClass | undefined] => {
    try {
      return [canonicalAddress(address), classifyAddress(address)];
    } catch {
      return [address, undefined];
    }
  });
  const odd = classes.find(([, kind]) => kind === undefined);
  if (odd) {
    throw new MediaRefused(url, `${host} resolved to "${escapeControl(odd[0])}", which is not an IP address`);
  }

  if (onOwnPort) {
    const ownHost = canonicalAddress(bareHost(own.host.toLowerCase()));
    const itself = host === ownHost || classes.some(([address, kind]) => kind !== "public" || address === ownHost);
    if (itself) {
      throw new MediaRefused(
        url,
        `port ${own.port} on ${host} is homed's own listener (${own.host}:${own.port}); homed never fetches from itself`,
      );
    }
  }
  if (allowed) return url;

  for (const [address, kind] of classes) {
    if (kind === "public") continue;
    const what = `${article(kind ?? "reserved")} address`;
    const reason = isLocalhostName(host)
      ? `${host} is a loopback name; ${ALLOW_HINT}`
      : address === host
      ? `${host} is ${what}; ${ALLOW_HINT}`
      : `${host} resolves to ${address}, ${what}; ${ALLOW_HINT}`;
    throw new MediaRefused(url, reason);
  }
  return url;
}

/**
 * Why a lookup failed, for a refusal. Deno's own words for a missing right advise "run again with the --allow-net
 * flag", which is wrong for homed: its flags come from `homed flags`, which grants the name servers of
 * /etc/resolv.conf when QQ media come from host names (`Deno.resolveDns` is checked against those, not the name).
 */
function resolveFailure(error: unknown): string {
  if (!(error instanceof Error)) return "";
  if (!(error instanceof Deno.errors.NotCapable)) return `: ${escapeControl(error.message)}`;
  const right = escapeControl(/net access to "[^"]*"/.exec(error.message)?.[0] ?? error.message);
  return `: homed may not ask the name server (${right}); the flags homed flags computes grant the name servers ` +
    "/etc/resolv.conf lists when QQ media come from host names (media.fetch_hosts): restart homed with them if " +
    "that file changed";
}

/**
 * The production resolver: the host's A and AAAA records through `Deno.resolveDns`, the system's resolver (it reads
 * /etc/hosts and /etc/resolv.conf). Deno checks net access to each name server it asks (`ip:53`), not to the name:
 * `homed flags` grants them (`config/name_servers.ts`). It rejects only when neither kind of record could be had.
 *
 * @example
 * ```ts
 * await resolveWithDns("example.com"); // ["93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"]
 * ```
 */
export async function resolveWithDns(host: string): Promise<string[]> {
  const [v4, v6] = await Promise.allSettled([Deno.resolveDns(host, "A"), Deno.resolveDns(host, "AAAA")]);
  const addresses = [
    ...(v4.status === "fulfilled" ? v4.value : []),
    ...(v6.status === "fulfilled" ? v6.value : []),
  ];
  if (addresses.length === 0 && v4.status === "rejected") throw v4.reason;
  return addresses;
}
