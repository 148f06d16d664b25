/**
 * IP addresses read and classified (public, loopback, private, link-local…), the way WHATWG URL parsing and resolvers
 * write them: the media address policy refuses what is not public, and `homed doctor` tells a LAN host from a
 * public one.
 *
 * @module
 */

import { escapeControl } from "../text/untrusted.ts";

/** The class of an IP address; everything but `public` is refused unless the host is allowed. */
export type AddressClass = "public" | "loopback" | "private" | "link-local" | "unspecified" | "multicast" | "reserved";

/** The four octets of a dotted-decimal IPv4 address (no leading zeros, as URLs and resolvers write it). */
export function parseIpv4(text: string): [number, number, number, number] | undefined {
  const match = /^(0|[1-9]\d{0,2})\.(0|[1-9]\d{0,2})\.(0|[1-9]\d{0,2})\.(0|[1-9]\d{0,2})$/.exec(text);
  if (!match) return undefined;
  const octets = match.slice(1).map(Number);
  if (octets.some((octet) => octet > 255)) return undefined;
  return octets as [number, number, number, number];
}

/** The eight 16-bit groups of an IPv6 address (brackets and a zone id allowed, an embedded IPv4 tail too). */
export function parseIpv6(text: string): number[] | undefined {
  let body = text.startsWith("[") && text.endsWith("]") ? text.slice(1, -1) : text;
  const zone = body.indexOf("%");
  if (zone >= 0) body = body.slice(0, zone);
  if (!/^[0-9a-fA-F:.]+$/.test(body) || !body.includes(":")) return undefined;
  if (body.includes(".")) {
    const cut = body.lastIndexOf(":");
    const v4 = parseIpv4(body.slice(cut + 1));
    if (!v4) return undefined;
    body = `${body.slice(0, cut + 1)}${((v4[0] << 8) | v4[1]).toString(16)}:${((v4[2] << 8) | v4[3]).toString(16)}`;
  }
  const halves = body.split("::");
  if (halves.length > 2) return undefined;
  const groupsOf = (part: string | undefined) => (part ? part.split(":") : []);
  const head = groupsOf(halves[0]);
  const tail = groupsOf(halves[1]);
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined;
  const groups = [...head, ...Array<string>(halves.length === 1 ? 0 : missing).fill("0"), ...tail];
  if (groups.some((group) => !/^[0-9a-fA-F]{1,4}$/.test(group))) return undefined;
  return groups.map((group) => parseInt(group, 16));
}

function classifyIpv4([a, b, c]: readonly [number, number, number, number], text: string): AddressClass {
  if (text === "0.0.0.0") return "unspecified";
  if (a === 0) return "reserved"; // "this network": some systems connect it to the host itself
  if (a === 127) return "loopback";
  if (a === 10 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168)) return "private";
  if (a === 100 && b >= 64 && b <= 127) return "private"; // carrier-grade NAT, shared address space
  if (a === 169 && b === 254) return "link-local"; // cloud metadata lives here
  if (a >= 224 && a <= 239) return "multicast";
  if (a >= 240) return "reserved"; // 255.255.255.255 broadcast included
  if (a === 192 && b === 0 && (c === 0 || c === 2)) return "reserved"; // protocol assignments, documentation
  if (a === 192 && b === 88 && c === 99) return "reserved"; // the old 6to4 relay anycast
  if (a === 198 && (b === 18 || b === 19)) return "reserved"; // benchmarking
  if ((a === 198 && b === 51 && c === 100) || (a === 203 && b === 0 && c === 113)) return "reserved"; // documentation
  return "public";
}

/** An IPv4 address from two 16-bit groups, for the IPv6 forms that embed one. */
function embeddedIpv4(high: number, low: number): AddressClass {
  const octets: [number, number, number, number] = [high >> 8, high & 0xff, low >> 8, low & 0xff];
  return classifyIpv4(octets, octets.join("."));
}

function classifyIpv6(g: readonly number[]): AddressClass {
  const [g0 = 0, g1 = 0, g2 = 0, g3 = 0, g4 = 0, g5 = 0, g6 = 0, g7 = 0] = g;
  const zeroTo = (end: number) => g.slice(0, end).every((group) => group === 0);
  if (zeroTo(8)) return "unspecified";
  if (zeroTo(7) && g7 === 1) return "loopback";
  if (zeroTo(5) && g5 === 0xffff) return embeddedIpv4(g6, g7); // IPv4-mapped ::ffff:a.b.c.d
  if (zeroTo(6)) return embeddedIpv4(g6, g7); // IPv4-compatible ::a.b.c.d (deprecated, still routed by some)
  if (zeroTo(4) && g4 === 0xffff && g5 === 0) return embeddedIpv4(g6, g7); // IPv4-translated ::ffff:0:a.b.c.d
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) return embeddedIpv4(g6, g7);
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 1) return "reserved"; // local-use NAT64
  if ((g0 & 0xfe00) === 0xfc00) return "private"; // unique local
  if ((g0 & 0xffc0) === 0xfe80) return "link-local";
  if ((g0 & 0xffc0) === 0xfec0) return "private"; // the old site-local
  if ((g0 & 0xff00) === 0xff00) return "multicast";
  if (g0 === 0x2002) return embeddedIpv4(g1, g2); // 6to4 carries an IPv4 address
  if (g0 === 0x2001 && g1 < 0x200) return "reserved"; // protocol assignments: Teredo, benchmarking, ORCHID
  if (g0 === 0x2001 && g1 === 0xdb8) return "reserved"; // documentation
  if (g0 === 0x3fff && g1 <= 0x0fff) return "reserved"; // documentation (RFC 9637)
  if (g0 === 0x100 && g1 === 0 && g2 === 0 && g3 === 0) return "reserved"; // discard
  if ((g0 & 0xe000) !== 0x2000) return "reserved"; // outside global unicast 2000::/3
  return "public";
}

/**
 * The class of an IP address (IPv4 dotted decimal, or IPv6 with or without brackets). IPv4-mapped, IPv4-compatible,
 * NAT64 and 6to4 IPv6 addresses take the class of the IPv4 address they carry. A TypeError for anything that is not
 * an IP address.
 *
 * @example
 * ```ts
 * classifyAddress("169.254.169.254"); // "link-local"
 * classifyAddress("::ffff:127.0.0.1"); // "loopback"
 * classifyAddress("64:ff9b::c0a8:101"); // "private" (NAT64 of 192.168.1.1)
 * classifyAddress("93.184.215.14"); // "public"
 * ```
 */
export function classifyAddress(ip: string): AddressClass {
  const v4 = parseIpv4(ip);
  if (v4) return classifyIpv4(v4, ip);
  const v6 = parseIpv6(ip);
  if (v6) return classifyIpv6(v6);
  throw new TypeError(`The address "${escapeControl(ip)}" is not an IPv4 or IPv6 address`);
}
