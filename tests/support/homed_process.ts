/**
 * Starts a real homed process the way `deno task start` does: the flags come from `src/flags.ts` run against the
 * same config (named by HOMED_CONFIG), then `deno run <flags> src/main.ts run`. Config and data dir live in a
 * temp folder outside the repo.
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { stringify } from "yaml";

/** The repository root. */
export const REPO = fileURLToPath(new URL("../../", import.meta.url));
const decoder = new TextDecoder();

/**
 * What a child Deno keeps of this shell's environment: where Deno's cache is (`DENO_DIR`; `HOME` and
 * `XDG_CACHE_HOME` for the default one), which certificates it trusts and how it reaches a registry, the way the
 * user's shell does. Never secrets (`DENO_AUTH_TOKENS`, `NPM_TOKEN`, API keys): those reach a child only when a test
 * passes them itself. The test task's `--allow-env` lists exactly these names.
 */
export const PASSED_TO_CHILDREN = [
  "DENO_DIR",
  "HOME",
  "XDG_CACHE_HOME",
  "DENO_CERT",
  "DENO_TLS_CA_STORE",
  "NODE_EXTRA_CA_CERTS",
  "SSL_CERT_FILE",
  "SSL_CERT_DIR",
  "HTTP_PROXY",
  "HTTPS_PROXY",
  "NO_PROXY",
  "http_proxy",
  "https_proxy",
  "no_proxy",
  "NPM_CONFIG_REGISTRY",
] as const;

/**
 * The environment of a child Deno that tests start: the {@link PASSED_TO_CHILDREN} variables this process has,
 * `NO_COLOR` and `DENO_NO_UPDATE_CHECK`, then `env` (the test's own, which wins).
 *
 * @example
 * ```ts
 * const env = childEnv({ HOMED_CONFIG: "/tmp/h.yaml" });
 * // the kept variables this process has, then NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1", HOMED_CONFIG: "/tmp/h.yaml"
 * await new Deno.Command(Deno.execPath(), { args: ["--version"], env, clearEnv: true }).output();
 * ```
 */
export function childEnv(env: Record<string, string> = {}): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const name of PASSED_TO_CHILDREN) {
    const value = Deno.env.get(name);
    if (value !== undefined) kept[name] = value;
  }
  // No update check: the child Deno would look up its download host, traffic that must not leave the machine.
  return { ...kept, NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1", ...env };
}

/** Picks a free loopback port. */
export function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

/** Runs a deno command to completion. */
export async function deno(
  args: string[],
  options: { env?: Record<string, string>; cwd?: string; stdin?: string } = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const child = new Deno.Command(Deno.execPath(), {
    args,
    cwd: options.cwd ?? REPO,
    env: childEnv(options.env),
    clearEnv: true,
    stdin: options.stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  if (options.stdin !== undefined) {
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(options.stdin));
    await writer.close();
  }
  const output = await child.output();
  return { code: output.code, stdout: decoder.decode(output.stdout), stderr: decoder.decode(output.stderr) };
}

/** The flags `deno task <mode>` would splice in for this environment. */
export async function taskFlags(
  mode: "run" | "chat" | "doctor" | "supervise" | "service" | "tracker" | "weixin",
  env: Record<string, string>,
): Promise<string[]> {
  const result = await deno(["run", "--no-prompt", "--allow-read", "--allow-env", "src/flags.ts", mode], { env });
  assert.equal(result.code, 0, result.stderr);
  return result.stdout.trim().split(/\s+/).filter(Boolean);
}

/** Whether a homed answers `GET <url>/healthz` with 200 now. */
export async function healthy(url: string): Promise<boolean> {
  try {
    const response = await fetch(`${url}/healthz`);
    await response.body?.cancel();
    return response.ok;
  } catch {
    return false;
  }
}

/**
 * Starts `deno <args>` as homed would run: a clean environment ({@link childEnv}: Deno's cache, certificate and proxy
 * settings, then `env`), no stdin or stdout, stderr piped for the test to read.
 *
 * @example
 * ```ts
 * const ws = await workspace({ llm: { base_url: "http://127.0.0.1:9/v1", api_key: "sk-test-0123456789" } });
 * const flags = await taskFlags("supervise", ws.env);
 * const child = spawnDeno(["run", ...flags, "src/main.ts", "supervise"], { env: ws.env });
 * ```
 */
export function spawnDeno(args: string[], options: { env: Record<string, string>; cwd?: string }): Deno.ChildProcess {
  return new Deno.Command(Deno.execPath(), {
    args,
    cwd: options.cwd ?? REPO,
    env: childEnv(options.env),
    clearEnv: true,
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
}

/** A temp folder with a config in it. */
export interface Workspace {
  dir: string;
  configPath: string;
  env: Record<string, string>;
  /** The port of `daemon.listen_addr`. */
  port: number;
}

/**
 * Writes `config` (merged over loopback defaults on `port`) into a new temp folder.
 *
 * @example
 * ```ts
 * import { FakeLlm } from "./fake_llm.ts";
 *
 * const fake = FakeLlm.start();
 * const ws = await workspace({ llm: { base_url: fake.baseUrl, api_key: "sk-test-0123456789" } });
 * ws.env; // { HOMED_CONFIG: `${ws.dir}/homed.yaml` }
 * ```
 */
export async function workspace(
  config: Record<string, unknown>,
  env: Record<string, string> = {},
): Promise<Workspace> {
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-test-" });
  const configPath = join(dir, "homed.yaml");
  const daemon = { listen_addr: `127.0.0.1:${freePort()}`, ...(config.daemon as Record<string, unknown> ?? {}) };
  const port = Number(String(daemon.listen_addr).split(":").at(-1));
  await Deno.writeTextFile(configPath, stringify({ ...config, daemon }));
  return { dir, configPath, env: { HOMED_CONFIG: configPath, ...env }, port };
}

/** A running homed. */
export interface HomedProcess {
  url: string;
  /** The daemon's process id (for a benchmark reading its resident memory). */
  pid: number;
  workspace: Workspace;
  /** Everything it wrote to stderr so far. */
  stderr(): string;
  /**
   * Sends SIGTERM (or `signal`: SIGKILL for a crash) and returns the exit code; removes the workspace unless `keep`
   * (to start it again).
   */
  stop(options?: { keep?: boolean; signal?: Deno.Signal }): Promise<number>;
}

/**
 * Starts homed in `ws` and waits until `/healthz` answers.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 *
 * const ws = await workspace({ llm: { base_url: "http://127.0.0.1:9/v1", api_key: "sk-test-0123456789" } });
 * const homed = await startHomed(ws);
 * try {
 *   assert.ok(await healthy(homed.url));
 * } finally {
 *   assert.equal(await homed.stop(), 0, homed.stderr());
 * }
 * ```
 */
export async function startHomed(ws: Workspace): Promise<HomedProcess> {
  const flags = await taskFlags("run", ws.env);
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", ...flags, "src/main.ts", "run"],
    cwd: REPO,
    env: childEnv(ws.env),
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  return await homedReady(child, ws, "homed");
}

/**
 * A started homed (`child`, its output piped) once `/healthz` answers on the workspace's port; its stderr is kept.
 * Throws with that stderr, naming `what`, when it exits first or does not answer within 20 s (it is killed then).
 *
 * @example
 * ```ts
 * declare const ws: Workspace;
 * const child = new Deno.Command(Deno.execPath(), { args: ["run", "src/main.ts", "run"], stdout: "piped", stderr: "piped" })
 *   .spawn();
 * const homed = await homedReady(child, ws, "homed");
 * ```
 */
export async function homedReady(child: Deno.ChildProcess, ws: Workspace, what: string): Promise<HomedProcess> {
  let stderr = "";
  const drainErr = (async () => {
    for await (const chunk of child.stderr) stderr += decoder.decode(chunk);
  })();
  const drainOut = child.stdout.pipeTo(new WritableStream());
  const url = `http://127.0.0.1:${ws.port}`;
  let exited: Deno.CommandStatus | undefined;
  const status = child.status.then((s) => exited = s);
  let ready = false;
  for (let attempt = 0; attempt < 400 && !exited && !ready; attempt++) {
    try {
      const response = await fetch(`${url}/healthz`);
      await response.body?.cancel();
      ready = response.ok;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  if (!ready) {
    if (!exited) child.kill("SIGKILL");
    await Promise.all([status, drainErr, drainOut]);
    throw new Error(
      exited
        ? `${what} exited with code ${exited.code} before it was ready:\n${stderr}`
        : `${what} did not answer ${url}/healthz within 20 s:\n${stderr}`,
    );
  }
  return {
    url,
    pid: child.pid,
    workspace: ws,
    stderr: () => stderr,
    async stop(options = {}) {
      if (!exited) child.kill(options.signal ?? "SIGTERM");
      const { code } = await status;
      await Promise.all([drainErr, drainOut]);
      if (!options.keep) await Deno.remove(ws.dir, { recursive: true }).catch(() => {});
      return code;
    },
  };
}

/**
 * POSTs JSON and returns status and parsed body.
 *
 * @example
 * ```ts
 * declare const homed: HomedProcess;
 *
 * const { status, body } = await postJson(`${homed.url}/api/chat`, { text: "hi" });
 * ```
 */
export async function postJson(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
}

/**
 * Chats with a running homed as the person `token` names and returns the JSON body, asserting a 200.
 *
 * @example
 * ```ts
 * declare const homed: HomedProcess;
 * const body = await chatAs(homed, "alice-token-0123456789", "Is the heating on?");
 * body.reply; // the butler's answer
 * ```
 */
export async function chatAs(homed: HomedProcess, token: string, text: string): Promise<Record<string, unknown>> {
  const response = await fetch(`${homed.url}/api/chat`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    body: JSON.stringify({ text }),
  });
  const body = await response.json();
  assert.equal(response.status, 200, JSON.stringify(body));
  return body;
}
