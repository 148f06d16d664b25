/**
 * `homed doctor`: checks the config, permissions, persona, data dir, listen address, the LLM endpoint and each
 * configured local device, one line each, and says what to fix.
 *
 * @module
 */

import { join } from "node:path";
import { loadPersona } from "../agent/personal.ts";
import { bindHost, connectHost } from "../config/listen_addr.ts";
import { type LoadedConfig, safeEnvReader } from "../config/load.ts";
import { mcpServers } from "../config/mcp_servers.ts";
import { systemClock } from "../clock.ts";
import { log } from "../log/logging.ts";
import { envFilePath } from "../config/env_file.ts";
import { missingPermissions, requiredPermissions } from "../rights/permissions.ts";
import { missingKeyHint } from "../config/missing_key_hint.ts";
import type { CommandLine } from "./command_line.ts";
import { loadCommandConfig } from "./command_config.ts";
import { print } from "./output.ts";
import { probeHomed } from "./homed_probe.ts";
import { checkRunning } from "./doctor_running.ts";
import { kindChecks } from "../devices/kinds.ts";
import type { DoctorCheck } from "../devices/kind.ts";
import { loadIntents } from "../intents/intents_setup.ts";
import { formatBytes, type FreeSpace, freeSpace } from "../fs/free_space.ts";

/** One check's outcome. */
export type Check = DoctorCheck;

/** Each enabled MCP server: started, its tools listed, stopped — or the first error (under a deadline each). */
async function checkMcpServers(loaded: LoadedConfig): Promise<Check[]> {
  let servers;
  try {
    servers = mcpServers(loaded.config, loaded.location.path).filter((server) => server.enabled);
  } catch (error) {
    return [{ ok: false, name: "mcp", detail: (error as Error).message }];
  }
  if (servers.length === 0) return [];
  const { probeServer } = await import("../mcp/mcp_service.ts");
  const readEnv = safeEnvReader(new Set());
  const path = readEnv("PATH");
  const home = readEnv("HOME");
  const checks: Check[] = [];
  let offered = 0;
  for (const server of servers) {
    const probe = await probeServer(server, {
      clock: systemClock,
      logger: log("mcp"),
      baseEnv: { ...(path ? { PATH: path } : {}), ...(home ? { HOME: home } : {}) },
      timeoutMs: 20_000,
    });
    checks.push({ ok: probe.ok, name: `mcp.${server.name}`, detail: probe.detail });
    offered += probe.offered ?? 0;
  }
  if (offered > 0) checks.push(toolRoom(offered, loaded.config.llm.max_tools));
  return checks;
}

/**
 * Whether the MCP servers' tools fit beside homed's own in one request (`llm.max_tools`). Over it homed still answers
 * — each turn offers the ones nearest the message — but the owner should choose with `include`.
 */
export function toolRoom(mcpTools: number, maxTools: number): Check {
  const where = "GET /api/status → agent.tools_left_out names what a turn left out";
  if (mcpTools < maxTools) {
    return {
      ok: true,
      name: "tools",
      detail: `the MCP servers offer ${mcpTools} tools; a request offers at most ${maxTools} (llm.max_tools) with ` +
        `homed's own and the devices' first; ${where}`,
    };
  }
  return {
    ok: false,
    name: "tools",
    detail: `the MCP servers offer ${mcpTools} tools, more than llm.max_tools (${maxTools}) by themselves: each ` +
      `turn leaves out at least ${mcpTools - maxTools + 1} of them (those least related to the message; ${where}); ` +
      `name the ones you want with mcp.servers.<name>.include`,
  };
}

async function checkLlm(loaded: LoadedConfig, fetcher: typeof fetch): Promise<Check> {
  const { llm } = loaded.config;
  if (llm.api_key === "") return { ok: false, name: "llm", detail: missingKeyHint(loaded) };
  const url = `${llm.base_url.replace(/\/+$/, "")}/models`;
  try {
    const response = await fetcher(url, {
      headers: { authorization: `Bearer ${llm.api_key}` },
      signal: AbortSignal.timeout(Math.min(llm.timeout, 15_000)),
    });
    const text = await response.text();
    if (response.status === 401 || response.status === 403) {
      return {
        ok: false,
        name: "llm",
        detail: `${llm.base_url} refused the API key (HTTP ${response.status}); check llm.api_key`,
      };
    }
    if (!response.ok) {
      return { ok: false, name: "llm", detail: `${url} answered HTTP ${response.status}: ${text.slice(0, 200)}` };
    }
    let listed: string[] = [];
    try {
      listed = (JSON.parse(text).data ?? []).map((model: { id?: unknown }) => String(model.id));
    } catch { /* some servers answer /models with something else; reachability is what counts */ }
    const note = listed.length && !listed.includes(llm.model)
      ? `; note: model "${llm.model}" is not in its list (${listed.slice(0, 5).join(", ")})`
      : "";
    return { ok: true, name: "llm", detail: `${llm.base_url} reachable, key accepted${note}` };
  } catch (error) {
    return { ok: false, name: "llm", detail: `cannot reach ${url}: ${(error as Error).message}` };
  }
}

/** The sentence templates homed answers without a model: the embedded ones and the household's `paths.intents`. */
async function checkIntents(loaded: LoadedConfig): Promise<Check> {
  const { intents } = loaded.config.paths;
  const mode = loaded.config.agent.local_intents;
  try {
    const matcher = await loadIntents(intents);
    return {
      ok: true,
      name: "intents",
      detail: `${matcher.counts.templates} sentence templates (${matcher.counts.languages.join(", ")}), ` +
        `agent.local_intents: ${mode}${mode === "off" ? " (commands need the model)" : ""}`,
    };
  } catch (error) {
    return { ok: false, name: "intents", detail: `${(error as Error).message}; fix the file, then restart homed` };
  }
}

/**
 * The listen address: free, or held — by a homed that answers (running already), or by another program, which is a
 * problem (homed could not start there), named with what answered `GET /healthz`.
 */
export async function checkListen(loaded: LoadedConfig, fetcher: typeof fetch = fetch): Promise<Check> {
  const addr = loaded.config.daemon.listen_addr;
  const where = `${bindHost(addr)}:${addr.port}`;
  try {
    const listener = Deno.listen({ hostname: bindHost(addr), port: addr.port });
    listener.close();
    return { ok: true, name: "listen", detail: `${where} is free` };
  } catch (error) {
    if (!(error instanceof Deno.errors.AddrInUse)) {
      return { ok: false, name: "listen", detail: `cannot listen on ${where}: ${(error as Error).message}` };
    }
  }
  const found = await probeHomed(`http://${connectHost(addr)}:${addr.port}`, fetcher);
  if (found.homed) {
    return { ok: true, name: "listen", detail: `${where} is held by homed, which answers there (it is running)` };
  }
  return {
    ok: false,
    name: "listen",
    detail: `${where} is held by another program (${found.why}); homed cannot start there: stop that program or ` +
      "set daemon.listen_addr to a free port",
  };
}

/**
 * The data dir's free space: fine above `daemon.low_disk`, a finding below it (homed's writes fail on a full disk),
 * and a warning when it cannot be read.
 *
 * @example
 * ```ts
 * diskCheck("/var/lib/homed", 500 * 1024 ** 2, { free_bytes: 12 * 1024 ** 3, total_bytes: 32 * 1024 ** 3 });
 * // { ok: true, name: "disk", detail: "/var/lib/homed: 12 GB free of 32 GB (warns below 500 MB: daemon.low_disk)" }
 * ```
 */
export function diskCheck(dataDir: string, lowBelow: number, space: FreeSpace): Check {
  if ("unknown" in space) return { ok: true, warn: true, name: "disk", detail: space.unknown };
  const free = `${dataDir}: ${formatBytes(space.free_bytes)} free of ${formatBytes(space.total_bytes)}`;
  if (lowBelow === 0) return { ok: true, name: "disk", detail: `${free} (daemon.low_disk: 0, never warns)` };
  if (space.free_bytes < lowBelow) {
    return {
      ok: false,
      name: "disk",
      detail: `${free}, below daemon.low_disk (${formatBytes(lowBelow)}): homed cannot save anything once it is ` +
        "full; delete files you do not need or move backup.dir to another disk",
    };
  }
  return { ok: true, name: "disk", detail: `${free} (warns below ${formatBytes(lowBelow)}: daemon.low_disk)` };
}

/** `homed.env` beside the config: fine when absent; a finding when others may read the secrets in it. */
async function checkSecretsFile(loaded: LoadedConfig): Promise<Check | undefined> {
  const path = envFilePath(loaded.location.path);
  let mode: number;
  try {
    mode = ((await Deno.stat(path)).mode ?? 0) & 0o777;
  } catch {
    return undefined;
  }
  return mode & 0o077
    ? {
      ok: false,
      name: "secrets",
      detail: `${path} has mode ${mode.toString(8)}: others can read the keys in it; run chmod 600 ${path}`,
    }
    : { ok: true, name: "secrets", detail: `${path} is readable by its owner only (${mode.toString(8)})` };
}

/**
 * Runs every check.
 *
 * @example
 * ```ts
 * import { loadConfig } from "../config/load.ts";
 *
 * const loaded = await loadConfig({ flag: "/etc/homed/homed.yaml", readEnv: (name) => Deno.env.get(name), cwd: "/" });
 * for (const check of await runDoctor(loaded)) console.log(check.ok ? "ok" : "FAIL", check.name, check.detail);
 * ```
 */
export async function runDoctor(loaded: LoadedConfig, fetcher: typeof fetch = fetch): Promise<Check[]> {
  const checks: Check[] = [{
    ok: true,
    name: "config",
    detail: `${loaded.location.path ?? "embedded defaults"} (${loaded.location.origin}) is valid`,
  }];
  const missing = missingPermissions(requiredPermissions(loaded, "run"));
  checks.push(
    missing.length
      ? { ok: false, name: "permissions", detail: `missing ${missing.join("; ")}; run with the flags of: homed flags` }
      : { ok: true, name: "permissions", detail: "every right the daemon needs is granted" },
  );
  try {
    const persona = await loadPersona({
      path: loaded.config.paths.personal,
      explicit: loaded.explicitKeys.has("paths.personal"),
    });
    checks.push({ ok: true, name: "persona", detail: `${persona.source}, ${persona.text.length} characters` });
  } catch (error) {
    checks.push({ ok: false, name: "persona", detail: (error as Error).message });
  }
  const dataDir = loaded.config.daemon.data_dir;
  try {
    await Deno.mkdir(dataDir, { recursive: true });
    const probe = join(dataDir, `.doctor-${crypto.randomUUID()}`);
    await Deno.writeTextFile(probe, "");
    await Deno.remove(probe);
    checks.push({ ok: true, name: "data_dir", detail: `${dataDir} is writable` });
  } catch (error) {
    checks.push({ ok: false, name: "data_dir", detail: `${dataDir} is not writable: ${(error as Error).message}` });
  }
  checks.push(diskCheck(dataDir, loaded.config.daemon.low_disk, freeSpace(dataDir)));
  const secrets = await checkSecretsFile(loaded);
  if (secrets) checks.push(secrets);
  checks.push(await checkListen(loaded, fetcher));
  checks.push(...await checkRunning(loaded, fetcher));
  checks.push(await checkLlm(loaded, fetcher));
  checks.push(await checkIntents(loaded));
  checks.push(...await kindChecks(loaded.config));
  checks.push(...await checkMcpServers(loaded));
  return checks;
}

/**
 * `homed doctor`: prints each check, one line each, and exits 0 only when every one passed.
 *
 * @example
 * ```ts
 * import { parseCommandLine } from "./command_line.ts";
 *
 * await doctorCli(parseCommandLine(["doctor", "--config", "/etc/homed/homed.yaml"]));
 * ```
 */
export async function doctorCli(line: CommandLine): Promise<void> {
  const { loaded } = await loadCommandConfig(line.options.config, line.layout);
  const checks = await runDoctor(loaded);
  for (const check of checks) {
    print(`${check.ok ? check.warn ? "warn" : "ok  " : "FAIL"} ${check.name.padEnd(12)} ${check.detail}\n`);
  }
  return Deno.exit(checks.every((check) => check.ok) ? 0 : 1);
}
