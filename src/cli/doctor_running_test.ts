import assert from "node:assert/strict";
import { parseConfig } from "../config/load.ts";
import { checkRunning } from "./doctor_running.ts";

const TOKEN = "doctor-test-token-0123456789";

const loadedAt = (port: number, token = TOKEN) =>
  parseConfig({
    text: `daemon: { listen_addr: "127.0.0.1:${port}", api_token: "${token}" }`,
    location: { path: "/etc/homed/homed.yaml", origin: "--config" },
    readEnv: () => undefined,
    cwd: "/",
  });

/** A homed as doctor sees it: `/healthz`, and `/api/status` for the owner's token only. */
function homedAnswering(status: Record<string, unknown>) {
  return Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (request) => {
    const path = new URL(request.url).pathname;
    if (path === "/healthz") return Response.json({ ok: true });
    if (request.headers.get("authorization") !== `Bearer ${TOKEN}`) {
      return Response.json({ error: { code: "unauthorized", message: "wrong token" } }, { status: 401 });
    }
    return path === "/api/status" ? Response.json(status) : new Response("not found", { status: 404 });
  });
}

Deno.test("doctor beside a running homed: a store that cannot write fails, naming it and what to do; the rest warn", async () => {
  const server = homedAnswering({
    storage: {
      degraded: [{
        store: "memory journal",
        path: "/var/lib/homed/memory/journal.jsonl",
        kind: "disk_full",
        error: "No space left on device (os error 28)",
        since: "2026-12-05T02:00:00.000Z",
      }],
      set_aside: [{
        file: "/var/lib/homed/routes.json",
        moved_to: "/var/lib/homed/routes.json.damaged-2026-12-05T01:00:00.000Z",
        why: "Unexpected end of JSON input",
        kept: "no remembered routes",
      }],
    },
    services: {
      memory: { jobs: { "memory.distill": { overdue: true, deadline_ms: 3_600_000, consecutive_failures: 0 } } },
      knowledge: { jobs: { "knowledge.heartbeat": { consecutive_failures: 0 } } },
    },
    schedules: { stalls: 1, last_wake: "2026-12-05T03:00:00.000Z" },
  });
  try {
    assert.deepEqual(await checkRunning(loadedAt(server.addr.port)), [
      {
        ok: false,
        name: "stores",
        detail: "memory journal cannot write /var/lib/homed/memory/journal.jsonl since 2026-12-05T02:00:00.000Z: No " +
          "space left on device (os error 28) (the disk is full: delete files that are not needed (or move " +
          "backup.dir to another disk)); homed answers meanwhile and writes again by itself once it can",
      },
      {
        ok: true,
        warn: true,
        name: "set_aside",
        detail: "/var/lib/homed/routes.json was damaged (Unexpected end of JSON input) and moved to " +
          "/var/lib/homed/routes.json.damaged-2026-12-05T01:00:00.000Z; homed started with no remembered routes. To " +
          "get it back: homed restore --latest (the last automatic backup)",
      },
      {
        ok: true,
        warn: true,
        name: "jobs",
        detail: "memory.distill has run past its deadline of 3600000 ms and has not ended (the log says more)",
      },
      {
        ok: true,
        warn: true,
        name: "timer",
        detail: "the reminder timer lost its wake-up 1 times and was woken by its watchdog (last wake-up " +
          "2026-12-05T03:00:00.000Z): reminders may have come late; the log says when",
      },
    ]);
  } finally {
    await server.shutdown();
  }
});

Deno.test("doctor beside a healthy homed says every store writes; a refused token is named; no homed, no check", async () => {
  const server = homedAnswering({ storage: { degraded: [], set_aside: [] }, schedules: { stalls: 0 } });
  try {
    assert.deepEqual(await checkRunning(loadedAt(server.addr.port)), [
      { ok: true, name: "stores", detail: "every store of the running homed writes" },
    ]);
    assert.deepEqual(await checkRunning(loadedAt(server.addr.port, "another-token-0123456789")), [{
      ok: true,
      warn: true,
      name: "running",
      detail: `homed runs at http://127.0.0.1:${server.addr.port}, but GET /api/status answered HTTP 401; doctor ` +
        "reads it with daemon.api_token: is it the running homed's?",
    }]);
  } finally {
    await server.shutdown();
  }
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  assert.deepEqual(await checkRunning(loadedAt(port)), []);
});

Deno.test("doctor beside a running homed: each chat's connection — connected since, the last message; an expired or unreachable one warns", async () => {
  const server = homedAnswering({
    storage: { degraded: [], set_aside: [] },
    services: {
      io: {
        devices: {
          telegram: {
            connected: true,
            connected_since: "2026-12-05T01:00:00.000Z",
            last_message_at: "2026-12-05T07:59:00.000Z",
          },
          weixin: {
            connected: false,
            session_expired: true,
            session_expired_since: "2026-12-05T06:00:00.000Z",
            last_message_at: null,
          },
          qq: { bots: [] },
        },
      },
    },
  });
  try {
    const checks = await checkRunning(loadedAt(server.addr.port));
    assert.deepEqual(checks.filter((check) => check.name === "telegram" || check.name === "weixin"), [
      {
        ok: true,
        name: "telegram",
        detail: "connected since 2026-12-05T01:00:00.000Z; last message 2026-12-05T07:59:00.000Z",
      },
      {
        ok: true,
        warn: true,
        name: "weixin",
        detail: "the session expired at 2026-12-05T06:00:00.000Z: messages wait; run homed weixin login again",
      },
    ]);
  } finally {
    await server.shutdown();
  }
  const down = homedAnswering({
    services: {
      io: { devices: { telegram: { connected: false, last_error: "Telegram refuses telegram.token (401)" } } },
    },
  });
  try {
    const [telegram] = (await checkRunning(loadedAt(down.addr.port))).filter((check) => check.name === "telegram");
    assert.deepEqual(telegram, {
      ok: true,
      warn: true,
      name: "telegram",
      detail: "not connected: Telegram refuses telegram.token (401); last message none yet",
    });
  } finally {
    await down.shutdown();
  }
});
