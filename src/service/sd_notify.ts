/**
 * systemd's readiness protocol (`sd_notify`): when `NOTIFY_SOCKET` names a socket (a `Type=notify` unit, directly or
 * through `homed supervise`, whose daemon inherits it), homed sends `READY=1` once it listens and `STOPPING=1` when it
 * begins to stop. Unix datagrams need Deno's `--unstable-net`; `homed flags` adds it, with net rights for exactly the
 * notify socket and homed's own sending socket in the data dir, only when `NOTIFY_SOCKET` is set.
 *
 * @module
 */

import { join } from "node:path";
import { deadline, systemClock } from "../clock.ts";

/** The notify socket from the environment when it is a file path (abstract `@…` sockets are not supported). */
export function notifySocket(readEnv: (name: string) => string | undefined): string | undefined {
  const socket = readEnv("NOTIFY_SOCKET");
  return socket && socket.startsWith("/") ? socket : undefined;
}

/** The socket homed binds to send from: one per data dir. */
export function notifyClientPath(dataDir: string): string {
  return join(dataDir, ".sd-notify.sock");
}

/**
 * Sends one notification (`READY=1`, `STOPPING=1`, `STATUS=…` lines); resolves to why it could not, or `undefined`.
 * Never throws: readiness is a courtesy to the service manager, never a reason to fail.
 *
 * @example
 * ```ts
 * const socket = notifySocket((name) => Deno.env.get(name)); // set by systemd for Type=notify
 * if (socket) {
 *   const client = notifyClientPath("/var/lib/homed"); // in daemon.data_dir
 *   const why = await sdNotify("READY=1\nSTATUS=Listening on http://127.0.0.1:8080", { socket, client });
 *   if (why) console.warn(`sd_notify failed: ${why}`);
 * }
 * ```
 */
export async function sdNotify(
  state: string,
  options: { socket: string; client: string },
): Promise<string | undefined> {
  const net = Deno as unknown as {
    listenDatagram?: (options: { transport: "unixpacket"; path: string }) => {
      send(data: Uint8Array, address: { transport: "unixpacket"; path: string }): Promise<number>;
      close(): void;
    };
  };
  if (typeof net.listenDatagram !== "function") return "unix datagrams need --unstable-net (homed flags adds it)";
  await Deno.remove(options.client).catch(() => {});
  try {
    const conn = net.listenDatagram({ transport: "unixpacket", path: options.client });
    try {
      const sent = conn.send(new TextEncoder().encode(state), { transport: "unixpacket", path: options.socket });
      const limit = deadline(systemClock, 2_000);
      try {
        if ((await limit.race(sent)).late) throw new Error("timed out after 2 s");
      } finally {
        limit.cancel();
      }
    } finally {
      conn.close();
    }
    return undefined;
  } catch (error) {
    return (error as Error).message;
  } finally {
    await Deno.remove(options.client).catch(() => {});
  }
}
