/**
 * homed as `deno task start` runs it, but in a mount namespace of its own whose `/etc/resolv.conf` names a loopback
 * name server — so a test can resolve host names through the system resolver, with the flags `homed flags` computes
 * from that very file, without a packet leaving the machine and without touching the real `/etc/resolv.conf`.
 *
 * `unshare --mount --propagation private` gives the child a private copy of the mount table; the bind mount over
 * `/etc/resolv.conf` lives in it alone and goes away with the process. Needs root (CAP_SYS_ADMIN): under `CI=true`
 * (`.ci/run` is root) the tests always run; elsewhere they are ignored with the reason printed.
 *
 * @module
 */

import { join } from "node:path";
import { FakeDns } from "./fake_dns.ts";
import { childEnv, type HomedProcess, homedReady, REPO, type Workspace } from "./homed_process.ts";
import { outsideNeed, programRuns } from "./outside_tool.ts";

/** The loopback address the name server listens on; resolv.conf has no port, so it is 53. */
export const NAME_SERVER = "127.0.0.1";

/** A private mount namespace and UDP port 53 on loopback: probed once. */
export const resolverNamespace = await outsideNeed(
  "a private mount namespace (unshare --mount) and UDP port 53 on 127.0.0.1",
  async () => {
    const why = await programRuns("unshare", ["--mount", "--propagation", "private", "true"]);
    if (why) return `${why} (needs root and CAP_SYS_ADMIN)`;
    try {
      await (await FakeDns.start({}, { hostname: NAME_SERVER, port: 53 })).close();
    } catch (error) {
      return `cannot listen on ${NAME_SERVER}:53 (needs root, and the port free): ${(error as Error).message}`;
    }
    return undefined;
  },
);

/** A homed in its own mount namespace; `flags` are the ones `src/flags.ts` computed in there. */
export interface NamespacedHomed extends HomedProcess {
  flags: string[];
}

/**
 * Starts homed for `ws` in a mount namespace whose `/etc/resolv.conf` is `nameserver 127.0.0.1`: the flags come from
 * `src/flags.ts run` inside the namespace (as `deno task start` splices them), then `deno run <flags> src/main.ts
 * run`; `env` joins the workspace's. Waits for `/healthz`.
 *
 * @example
 * ```ts
 * import { workspace } from "./homed_process.ts";
 *
 * const ws = await workspace({ llm: { base_url: "http://127.0.0.1:9/v1", api_key: "sk-test-0123456789" } });
 * const homed = await startHomedWithLoopbackResolver(ws);
 * homed.flags; // […, "--allow-net=127.0.0.1:…,127.0.0.1:53", …] when the config fetches media from host names
 * await homed.stop();
 * ```
 */
export async function startHomedWithLoopbackResolver(
  ws: Workspace,
  env: Record<string, string> = {},
  options: { nameServerAfterFlags?: string } = {},
): Promise<NamespacedHomed> {
  const resolvConf = join(ws.dir, "resolv.conf");
  await Deno.writeTextFile(resolvConf, `nameserver ${NAME_SERVER}\n`);
  // A resolv.conf that changes after the flags were computed (DHCP, a VPN): homed starts on the flags it was given.
  const changed = join(ws.dir, "resolv.conf.changed");
  if (options.nameServerAfterFlags) {
    await Deno.writeTextFile(changed, `nameserver ${options.nameServerAfterFlags}\n`);
  }
  // $1 the resolv.conf, $2 Deno, $3 the changed one. `$flags` is unquoted on purpose: split into words as `deno task
  // start` does.
  const script = [
    'mount --bind "$1" /etc/resolv.conf || exit 97',
    'flags=$("$2" run --no-prompt --allow-read --allow-env src/flags.ts run) || exit 98',
    'echo "homed flags: $flags" >&2',
    'if [ -f "$3" ]; then mount --bind "$3" /etc/resolv.conf || exit 96; fi',
    'exec "$2" run $flags src/main.ts run',
  ].join("\n");
  const child = new Deno.Command("unshare", {
    args: [
      "--mount",
      "--propagation",
      "private",
      "sh",
      "-c",
      script,
      "homed-in-namespace",
      resolvConf,
      Deno.execPath(),
      changed,
    ],
    cwd: REPO,
    // PATH: for sh to find mount; the rest as every homed's.
    env: childEnv({
      PATH: Deno.env.get("PATH") ?? "/usr/sbin:/usr/bin:/sbin:/bin",
      ...ws.env,
      ...env,
    }),
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  // `unshare` and `sh` exec: the child is homed's own process.
  const homed = await homedReady(child, ws, "homed (in its mount namespace)");
  const flags = /^homed flags: (.*)$/m.exec(homed.stderr())?.[1]?.split(/\s+/).filter(Boolean) ?? [];
  return { ...homed, flags };
}
