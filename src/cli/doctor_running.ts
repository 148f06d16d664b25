/**
 * `homed doctor` beside a running homed: what the daemon's own status (`GET /api/status`, read with
 * `daemon.api_token`) says needs the owner — a store that cannot write now (a full or read-only disk, an I/O error), a
 * damaged file set aside at start, a job failing or past its deadline, a timer its watchdog had to wake. Nothing is
 * checked when no homed answers at the listen address (the other checks cover a homed that is not running).
 *
 * @module
 */

import type { StatusBody } from "../api/status_body.ts";
import type { LoadedConfig } from "../config/load.ts";
import type { DoctorCheck } from "../devices/kind.ts";
import { faultAdvice } from "../fs/store_health.ts";
import type { JobStatus } from "../service/job.ts";
import type { TimerStatus } from "../timer/timer_status.ts";
import { homedUrl, probeHomed } from "./homed_probe.ts";

/** How long doctor waits for `/api/status`. */
const STATUS_MS = 5_000;

/** The parts of `/api/status` read here, as the daemon writes them (`src/api/status_body.ts`); the rest is ignored. */
interface RunningStatus {
  storage?: Partial<Pick<StatusBody["storage"], "degraded" | "set_aside">>;
  services?: Record<string, { jobs?: Record<string, Partial<JobStatus>>; devices?: Record<string, ChatStatus> }>;
  schedules?: Partial<Pick<TimerStatus, "stalls" | "last_wake">>;
}

/** What a long-polling chat (Telegram, WeChat) says of itself in `/api/status` (`services.io.devices.<name>`). */
interface ChatStatus {
  connected?: boolean;
  connected_since?: string | null;
  last_message_at?: string | null;
  last_error?: string | null;
  session_expired?: boolean;
  session_expired_since?: string | null;
  problem?: string | null;
}

/** The chats whose connection state doctor reports. */
const CHATS = ["telegram", "weixin"];

/**
 * The running homed's findings, one check each: `stores` (FAIL while a store cannot write), `set_aside`, `jobs` and
 * `timer` (warnings), and one line per chat (`telegram`, `weixin`: connected since, last message; a warning when not). Empty when no homed answers; one warning when its status cannot be read.
 *
 * @example
 * ```ts
 * import { loadConfig } from "../config/load.ts";
 *
 * const loaded = await loadConfig({ flag: "/etc/homed/homed.yaml", readEnv: (name) => Deno.env.get(name), cwd: "/" });
 * for (const check of await checkRunning(loaded)) console.log(check.name, check.detail);
 * // stores  usage.db cannot write /var/lib/homed/usage.db since 2026-12-05T02:00:00.000Z: No space left on device …
 * ```
 */
export async function checkRunning(loaded: LoadedConfig, fetcher: typeof fetch = fetch): Promise<DoctorCheck[]> {
  const url = homedUrl(loaded);
  if (url === undefined || !(await probeHomed(url, fetcher)).homed) return [];
  const token = loaded.config.daemon.api_token;
  let status: RunningStatus;
  try {
    const response = await fetcher(`${url}/api/status`, {
      headers: token ? { authorization: `Bearer ${token}` } : {},
      signal: AbortSignal.timeout(STATUS_MS),
    });
    if (!response.ok) {
      await response.body?.cancel();
      const hint = response.status === 401 || response.status === 403
        ? "; doctor reads it with daemon.api_token: is it the running homed's?"
        : "";
      return [warning("running", `homed runs at ${url}, but GET /api/status answered HTTP ${response.status}${hint}`)];
    }
    status = await response.json() as RunningStatus;
  } catch (error) {
    return [warning("running", `homed runs at ${url}, but its status could not be read: ${(error as Error).message}`)];
  }
  return [storesCheck(status), ...setAsideChecks(status), jobsCheck(status), timerCheck(status), ...chatChecks(status)]
    .filter((check): check is DoctorCheck => check !== undefined);
}

const warning = (name: string, detail: string): DoctorCheck => ({ ok: true, warn: true, name, detail });

function storesCheck(status: RunningStatus): DoctorCheck {
  const degraded = status.storage?.degraded ?? [];
  if (!degraded.length) return { ok: true, name: "stores", detail: "every store of the running homed writes" };
  const lines = degraded.map((store) =>
    `${store.store} cannot write ${store.path} since ${store.since}: ${store.error} (${faultAdvice(store.kind)})`
  );
  return {
    ok: false,
    name: "stores",
    detail: `${lines.join("; ")}; homed answers meanwhile and writes again by itself once it can`,
  };
}

function setAsideChecks(status: RunningStatus): DoctorCheck[] {
  return (status.storage?.set_aside ?? []).map((entry) =>
    warning(
      "set_aside",
      `${entry.file} was damaged (${entry.why}) and moved to ${entry.moved_to}; homed started with ${entry.kept}. ` +
        "To get it back: homed restore --latest (the last automatic backup)",
    )
  );
}

function jobsCheck(status: RunningStatus): DoctorCheck | undefined {
  const found: string[] = [];
  for (const service of Object.values(status.services ?? {})) {
    for (const [name, job] of Object.entries(service.jobs ?? {})) {
      if (job.overdue) found.push(`${name} has run past its deadline of ${job.deadline_ms} ms and has not ended`);
      if ((job.consecutive_failures ?? 0) > 0) {
        found.push(`${name} failed ${job.consecutive_failures} times in a row: ${job.last_error ?? "?"}`);
      }
    }
  }
  return found.length ? warning("jobs", `${found.join("; ")} (the log says more)`) : undefined;
}

function timerCheck(status: RunningStatus): DoctorCheck | undefined {
  const stalls = status.schedules?.stalls ?? 0;
  if (stalls <= 0) return undefined;
  return warning(
    "timer",
    `the reminder timer lost its wake-up ${stalls} times and was woken by its watchdog (last wake-up ` +
      `${status.schedules?.last_wake ?? "?"}): reminders may have come late; the log says when`,
  );
}

function chatChecks(status: RunningStatus): DoctorCheck[] {
  const devices = status.services?.io?.devices ?? {};
  return CHATS.flatMap((name) => {
    const chat = devices[name];
    if (!chat) return [];
    const last = `last message ${chat.last_message_at ?? "none yet"}`;
    if (chat.session_expired) {
      return [warning(
        name,
        `the session expired at ${chat.session_expired_since ?? "?"}: messages wait; run homed ${name} login again`,
      )];
    }
    if (!chat.connected) {
      const why = chat.problem ?? chat.last_error ?? "not connected yet";
      return [warning(name, `not connected: ${why}; ${last}`)];
    }
    return [{ ok: true, name, detail: `connected since ${chat.connected_since ?? "?"}; ${last}` }];
  });
}
