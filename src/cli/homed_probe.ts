/**
 * Whether a homed answers at the config's listen address: `GET /healthz` answered `200 {"ok": true}` (what homed's API
 * answers, `src/api/app.ts`). Commands that must not run beside the daemon (restore, service uninstall) and doctor's
 * look at a port already held ask it.
 *
 * @module
 */

import { connectHost } from "../config/listen_addr.ts";
import type { LoadedConfig } from "../config/load.ts";

/** What {@link probeHomed} found at an address. */
export type HomedProbe =
  /** A homed answered. */
  | { homed: true; url: string }
  /** Nothing that is homed: `why` says what answered instead, or why nothing did. */
  | { homed: false; url: string; why: string };

/** How long a probe waits for the answer. */
const PROBE_MS = 2_000;

/**
 * Asks `GET <url>/healthz` whether a homed is there.
 *
 * @example
 * ```ts
 * const found = await probeHomed("http://127.0.0.1:8080");
 * if (!found.homed) console.log(`not homed: ${found.why}`);
 * ```
 */
export async function probeHomed(url: string, fetcher: typeof fetch = fetch): Promise<HomedProbe> {
  let response: Response;
  try {
    response = await fetcher(`${url}/healthz`, { signal: AbortSignal.timeout(PROBE_MS), redirect: "manual" });
  } catch (error) {
    const message = error instanceof Deno.errors.NotCapable
      ? `homed may not ask it: ${/net access to "[^"]*"/.exec(error.message)?.[0] ?? error.message}`
      : error instanceof DOMException && error.name === "TimeoutError"
      ? `nothing answered GET /healthz within ${PROBE_MS / 1000} s`
      : `GET /healthz failed: ${(error as Error).message}`;
    return { homed: false, url, why: message };
  }
  const text = await response.text().catch(() => "");
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  const isHomed = response.status === 200 && typeof body === "object" && body !== null &&
    (body as Record<string, unknown>).ok === true && Object.keys(body).length === 1;
  if (isHomed) return { homed: true, url };
  const shown = text.replace(/\s+/g, " ").trim().slice(0, 80);
  return {
    homed: false,
    url,
    why: `GET /healthz answered HTTP ${response.status}${shown ? ` ${JSON.stringify(shown)}` : ""}, not homed's ` +
      `{"ok":true}`,
  };
}

/**
 * The URL homed would answer on for `loaded` (its listen address as a client reaches it); none for port 0.
 *
 * @example
 * ```ts
 * import { loadConfig } from "../config/load.ts";
 *
 * const loaded = await loadConfig({ flag: "/etc/homed/homed.yaml", readEnv: (name) => Deno.env.get(name), cwd: "/" });
 * homedUrl(loaded); // "http://127.0.0.1:8080"
 * ```
 */
export function homedUrl(loaded: LoadedConfig): string | undefined {
  const listen = loaded.config.daemon.listen_addr;
  return listen.port === 0 ? undefined : `http://${connectHost(listen)}:${listen.port}`;
}

/**
 * Whether a homed answers at `loaded`'s listen address now: its URL, or `undefined`.
 *
 * @example
 * ```ts
 * import { loadConfig } from "../config/load.ts";
 *
 * const loaded = await loadConfig({ flag: "/etc/homed/homed.yaml", readEnv: (name) => Deno.env.get(name), cwd: "/" });
 * const running = await runningHomed(loaded); // "http://127.0.0.1:8080" while homed runs
 * ```
 */
export async function runningHomed(loaded: LoadedConfig): Promise<string | undefined> {
  const url = homedUrl(loaded);
  if (url === undefined) return undefined;
  const found = await probeHomed(url);
  return found.homed ? url : undefined;
}
