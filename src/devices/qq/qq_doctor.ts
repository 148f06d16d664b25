/**
 * `homed doctor`'s line about QQ's pictures and voice notes: from which hosts homed may fetch them, and what to add
 * when a OneBot implementation on this machine or the LAN serves them.
 *
 * @module
 */

import type { Config } from "../../config/schema.ts";
import { classifyAddress } from "../../net/ip_address.ts";
import type { DoctorCheck } from "../kind.ts";

/** An `allow_hosts` entry (`host`, `host:port`, `[v6]:port`, `*.domain`) that names this machine or the LAN. */
function localEntry(entry: string): boolean {
  const text = entry.trim().toLowerCase();
  const host = /^\[([^\]]+)\]/.exec(text)?.[1] ?? text.replace(/^\*\./, "").replace(/:\d+$/, "");
  return localHost(host);
}

/** A host on this machine or the LAN: `localhost`, a `.local`/`.lan`/`.home.arpa` name, a non-public IP address. */
function localHost(host: string): boolean {
  if (host === "localhost" || host.endsWith(".localhost")) return true;
  try {
    return classifyAddress(host) !== "public";
  } catch {
    return /\.(?:local|lan|home|internal|home\.arpa)$/.test(host) || !host.includes(".");
  }
}

/**
 * Pictures and voice notes from a OneBot implementation on this machine or the LAN (issue 36): homed fetches them only
 * from hosts its flags grant and its address policy allows. An implementation homed connects to (`forward_url`) is
 * both, on any port of that host; one that connects to homed (reverse WebSocket, the default) is neither until its
 * host is in `media.allow_hosts` — its address is not known before it connects, so the flags cannot follow it. No line
 * when QQ is off or nothing sees or hears (no media are fetched then).
 *
 * @example
 * ```ts
 * import { parseConfig } from "../../config/load.ts";
 *
 * const { config } = parseConfig({
 *   text: "vision: { base_url: 'http://127.0.0.1:11434/v1', model: m }",
 *   location: { path: undefined, origin: "embedded defaults" },
 *   readEnv: () => undefined,
 *   cwd: "/",
 * });
 * checkOnebotMedia(config); // { ok: true, warn: true, name: "qq.media", detail: "… media.allow_hosts …" }
 * ```
 */
export function checkOnebotMedia(config: Config): DoctorCheck | undefined {
  const { onebot, media, vision, speech } = config;
  if (!onebot.enabled || (vision === null && speech.stt === null)) return undefined;
  const name = "qq.media";
  const listed = media.allow_hosts.filter(localEntry);
  const restart = "then restart homed with the flags `homed flags` prints (homed service install under systemd)";
  if (onebot.forward_url !== "") {
    const host = new URL(onebot.forward_url).hostname.replace(/^\[|\]$/g, "");
    if (!localHost(host)) return undefined;
    // The implementation's own address is trusted and granted as spelled; URLs naming it otherwise are not.
    if (host === "localhost" && !listed.some((entry) => /^(?:127\.|\[::1\])/.test(entry.trim()))) {
      return {
        ok: true,
        warn: true,
        name,
        detail: `the OneBot implementation is at localhost (onebot.forward_url): homed fetches its media from ` +
          `localhost on any port, but not from an address such as http://127.0.0.1:6099; if it names its media so, ` +
          `add that host ("127.0.0.1:6099") to media.allow_hosts, ${restart}`,
      };
    }
    return {
      ok: true,
      name,
      detail: `the OneBot implementation at ${host} (onebot.forward_url) serves its media from there: homed may ` +
        `fetch them on any port of ${host}${
          listed.length ? `; media.allow_hosts lists ${listed.join(", ")}` : ""
        }; media from another host of this machine or the LAN need media.allow_hosts`,
    };
  }
  if (listed.length) {
    return {
      ok: true,
      name,
      detail: `media.allow_hosts lists ${listed.join(", ")} for a OneBot implementation that connects to homed and ` +
        "serves its media from this machine or the LAN",
    };
  }
  return {
    ok: true,
    warn: true,
    name,
    detail: "a OneBot implementation that connects to homed (NapCat, Lagrange) and serves its pictures and voice " +
      "notes from this machine or the LAN (http://127.0.0.1:6099/…) can be fetched from only when that host is in " +
      `media.allow_hosts: add it ("127.0.0.1:6099"), ${restart}; media from QQ's servers (media.fetch_hosts) ` +
      "need nothing",
  };
}
