/**
 * A `skill.json` plugin opened: its Lua VM (script inside the plugin's folder, the grants its manifest names, every
 * handler it names defined), its exec tools checked against `plugins.allow_exec` and the allowlist, its native device
 * built; then its tools, each call counted, and its lifetime — a reload retires a replaced plugin, whose VM stays open
 * for the turns that started before it and closes after their last call.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import { isInside } from "../fs/contained.ts";
import type { Device, DeviceContext } from "../io/device.ts";
import { type LuaLimits, LuaVm } from "../lua/vm.ts";
import { untrustedLine } from "../text/untrusted.ts";
import type { Tool, ToolContext } from "../tools/tool.ts";
import type { PluginDevice } from "./plugin_device.ts";
import type { FoundManifest } from "./discovery.ts";
import { runExec } from "./exec_tool.ts";
import type { Manifest } from "./manifest.ts";

/** A manifest plugin as loaded: its VM serves its tools until a reload retires it. */
export interface LoadedPlugin {
  manifest: Manifest;
  dir: string;
  source: string;
  vm: LuaVm | undefined;
  /** Calls running in its VM; a retired VM closes when the last one ends. */
  inFlight: number;
  retired: boolean;
  /** Retired and past the grace a turn in flight may still need it for. */
  graceOver?: boolean;
  /** The device a native factory built (kept across reloads while the plugin stays). */
  native?: Device;
  /** The native factory said homed runs its device already (QQ on through `onebot.enabled`): none was built. */
  nativeServed?: true;
  /** Its own device, made once (a reload that keeps the plugin keeps the device, which is not restarted). */
  device?: PluginDevice;
  /** The started device's context, for the script's `channel.emit`. */
  channel: { context?: DeviceContext | undefined };
}

/** The exec tools' settings: allowed at all, which programs, and each plugin's environment. */
export interface ExecSettings {
  allowed: boolean;
  allowlist: readonly string[];
  env: (plugin: string) => Record<string, string>;
}

/** What opening a plugin needs from the daemon. */
export interface PluginVmOptions {
  logger: Logger;
  /** Limits of the plugins' Lua calls (`lua.*`). */
  luaLimits?: LuaLimits | undefined;
  /** Folder for the plugins' key-value stores. */
  dataDir?: string | undefined;
  /** Device factories compiled into homed, by name. */
  natives?: Readonly<Record<string, NativeFactory>> | undefined;
  exec?: ExecSettings | undefined;
}

/**
 * A device factory compiled into homed, for manifests with `native`: the device, or `undefined` when homed runs that
 * device already from its own config (the plugin then adds its instructions and no device); it throws when it cannot
 * provide one.
 */
export type NativeFactory = () => Device | undefined;

/** A Lua function a manifest names, with what names it (for the error when the script lacks it). */
type Handler = [what: string, fn: string];

function handlersOf(manifest: Manifest): Handler[] {
  const { io } = manifest;
  const handlers = manifest.tools.flatMap((tool): Handler[] =>
    tool.lua === undefined ? [] : [[`tool ${tool.name}`, tool.lua]]
  );
  if (io?.onOutput) handlers.push(["io.on_output", io.onOutput]);
  if (io?.poll) handlers.push(["io.poll", io.poll.lua]);
  return handlers;
}

/** Opens the plugin's script in its own VM, with the grants its manifest names; `undefined` without a script. */
async function openVm(
  manifest: Manifest,
  dir: string,
  channel: LoadedPlugin["channel"],
  options: PluginVmOptions,
): Promise<LuaVm | undefined> {
  if (!manifest.lua) return undefined;
  const real = await Deno.realPath(manifest.lua).catch(() => undefined);
  if (!real) throw new Error(`lua: ${manifest.lua} does not exist`);
  // Inside by its name (the manifest check) is not enough: a link may lead out once resolved.
  if (!isInside(dir, real)) throw new Error(`lua: ${manifest.lua} leads outside the plugin's folder`);
  const { dataDir } = options;
  if (manifest.grants.kv && dataDir) await Deno.mkdir(dataDir, { recursive: true });
  const emit = (type: string, text: string, payload: Record<string, unknown>) => {
    const context = channel.context;
    if (!context) throw new Error("channel.emit: the plugin's device is not started");
    context.emit({
      source: `plugin-${manifest.name}`,
      sender: manifest.name,
      trust: "guest",
      type,
      payload: { ...payload, text },
    });
  };
  const vm = await LuaVm.open({
    name: `${manifest.name}/${real.slice(dir.length + 1)}`,
    source: await Deno.readTextFile(real),
    limits: options.luaLimits ?? { timeMs: 1_000, memoryBytes: 16 * 1024 * 1024 },
    grants: {
      json: true,
      ...(manifest.grants.http.length ? { http: { allowHosts: manifest.grants.http, timeoutMs: 30_000 } } : {}),
      ...(manifest.grants.kv && dataDir ? { kv: { path: `${dataDir}/${manifest.name}.kv.json` } } : {}),
      ...(manifest.io ? { emit } : {}),
    },
    logger: options.logger,
  });
  for (const [what, fn] of handlersOf(manifest)) {
    if (!vm.has(fn)) {
      vm.close();
      throw new Error(`${what}: the script defines no function ${fn}()`);
    }
  }
  return vm;
}

/** Why the manifest's exec tools may not run, or `undefined` when they may. */
function execRefusal(manifest: Manifest, exec: ExecSettings | undefined): string | undefined {
  for (const tool of manifest.tools) {
    const program = tool.exec?.argv[0];
    if (program === undefined) continue;
    let refusal: string | undefined;
    if (!exec?.allowed) refusal = "exec tools are off (plugins.allow_exec: false)";
    else if (!exec.allowlist.includes(program)) refusal = `${program} is not in plugins.exec_allowlist`;
    else if (Deno.permissions.querySync({ name: "run", command: program }).state !== "granted") {
      refusal = `homed may not run ${program}; restart it with the flags \`homed flags\` prints`;
    }
    if (refusal) return `tool ${tool.name}: ${refusal}`;
  }
  return undefined;
}

/**
 * Opens a found plugin: its VM, its exec tools checked, its native device (the one `previous` built when the factory
 * is the same, so a reload does not restart it). Throws, with nothing left open, when any of it cannot be used.
 *
 * @example
 * ```ts
 * import { getLogger } from "@logtape/logtape";
 * import type { FoundManifest } from "./discovery.ts";
 *
 * declare const found: FoundManifest;
 * const plugin = await openPlugin(found, undefined, { logger: getLogger(["homed", "plugins"]) });
 * plugin.vm?.close();
 * ```
 */
export async function openPlugin(
  { manifest, dir, source }: FoundManifest,
  previous: LoadedPlugin | undefined,
  options: PluginVmOptions,
): Promise<LoadedPlugin> {
  const channel: LoadedPlugin["channel"] = {};
  const vm = await openVm(manifest, dir, channel, options);
  const refusal = execRefusal(manifest, options.exec);
  if (refusal) {
    vm?.close();
    throw new Error(refusal);
  }
  let native: Device | undefined;
  let served = false;
  if (manifest.native !== undefined) {
    const factory = options.natives?.[manifest.native];
    if (!factory) {
      vm?.close();
      const known = Object.keys(options.natives ?? {}).join(", ") || "none";
      throw new Error(`native: the factory ${JSON.stringify(manifest.native)} is unknown (known: ${known})`);
    }
    try {
      native = previous?.manifest.native === manifest.native && previous.native ? previous.native : factory();
      served = native === undefined;
    } catch (error) {
      vm?.close();
      throw new Error(`native ${manifest.native}: ${(error as Error).message}`);
    }
  }
  return {
    manifest,
    dir,
    source,
    vm,
    inFlight: 0,
    retired: false,
    channel,
    ...(native ? { native } : {}),
    ...(served ? { nativeServed: true as const } : {}),
  };
}

/**
 * Calls into a plugin's VM, counted so a retired VM closes only after its last call. A failure of the script stays
 * the `LuaError` the VM threw, with its kind (`runtime`, `time_limit`, `memory_limit`) and a message that says
 * which (`stopped after 1000 ms (lua.time_limit)`), so a caller — and the tool result the model reads — can tell a
 * limit from a script error.
 *
 * @example
 * ```ts
 * import { LuaError } from "../lua/lua_error.ts";
 *
 * declare const plugin: LoadedPlugin;
 * try {
 *   await callLua(plugin, "room_temperature", JSON.stringify({ room: "hall" })); // what the function returned
 * } catch (error) {
 *   if (error instanceof LuaError && error.kind === "time_limit") console.log("the script ran too long");
 *   else throw error;
 * }
 * ```
 */
export async function callLua(plugin: LoadedPlugin, fn: string, ...args: string[]): Promise<unknown> {
  plugin.inFlight++;
  try {
    return await plugin.vm!.call(fn, ...args);
  } finally {
    plugin.inFlight--;
    if (plugin.graceOver && plugin.inFlight === 0) plugin.vm?.close();
  }
}

/**
 * The plugin's tools as its device offers them: a Lua function or a program each.
 *
 * @example
 * ```ts
 * declare const plugin: LoadedPlugin;
 * const exec = { allowed: true, allowlist: ["curl"], env: () => ({ PATH: "/usr/bin:/bin" }) };
 * pluginTools(plugin, exec).map((tool) => tool.name); // as its manifest names them
 * ```
 */
export function pluginTools(plugin: LoadedPlugin, exec: ExecSettings | undefined): Tool[] {
  return plugin.manifest.tools.map((spec) => ({
    name: spec.name,
    // The plugin's words in the tool list the model reads: one line, markers escaped, as message text.
    description: untrustedLine(spec.description),
    parameters: spec.parameters,
    allow: spec.allow,
    ...(spec.timeoutMs === undefined ? {} : { timeoutMs: spec.timeoutMs }),
    execute: async (args: Record<string, unknown>, context: ToolContext) => {
      // An exec tool is loaded only when openPlugin found exec allowed, so its settings are there.
      if (spec.exec) return await runExec(spec.exec, args, exec!.env(plugin.manifest.name), context.signal);
      const result = await callLua(plugin, spec.lua!, JSON.stringify(args));
      return result === undefined || result === null ? "" : String(result);
    },
  }));
}

/** Replaced and removed plugins, each waiting for its grace to pass and its last call to end before its VM closes. */
export class PluginRetirement {
  #graceMs: number;
  #retiring = new Map<ReturnType<typeof setTimeout>, LoadedPlugin>();

  /**
   * @example
   * ```ts
   * const retirement = new PluginRetirement(120_000); // the turn deadline, and some
   * ```
   */
  constructor(graceMs: number) {
    this.#graceMs = graceMs;
  }

  /**
   * A plugin replaced or removed: its VM closes once no call of a turn in flight uses it.
   *
   * @example
   * ```ts
   * declare const retirement: PluginRetirement;
   * declare const replaced: LoadedPlugin;
   * retirement.retire(replaced);
   * ```
   */
  retire(plugin: LoadedPlugin): void {
    if (plugin.retired) return;
    plugin.retired = true;
    // A turn that started before the reload keeps its view of the tools until it ends: the old VM stays open for
    // the turn's longest life, and past that until its last call returns.
    const timer = setTimeout(() => {
      this.#retiring.delete(timer);
      plugin.graceOver = true;
      if (plugin.inFlight === 0) plugin.vm?.close();
    }, this.#graceMs);
    Deno.unrefTimer(timer);
    this.#retiring.set(timer, plugin);
  }

  /**
   * Retires the plugins of `current` that `next` no longer holds (removed, or replaced by a new version).
   *
   * @example
   * ```ts
   * declare const retirement: PluginRetirement;
   * declare const loaded: Map<string, LoadedPlugin>;
   * retirement.retireReplaced(loaded, new Map()); // every loaded plugin retires
   * ```
   */
  retireReplaced(current: ReadonlyMap<string, LoadedPlugin>, next: ReadonlyMap<string, LoadedPlugin>): void {
    for (const [name, previous] of current) if (next.get(name) !== previous) this.retire(previous);
  }

  /**
   * Shutting down: every retiring VM closes now.
   *
   * @example
   * ```ts
   * declare const retirement: PluginRetirement;
   * retirement.closeAll();
   * ```
   */
  closeAll(): void {
    for (const [timer, plugin] of this.#retiring) {
      clearTimeout(timer);
      plugin.vm?.close();
    }
    this.#retiring.clear();
  }
}

/** One reload's change of the loaded plugins, as the device swap (`device_swap.ts`) carries it out. */
export interface PluginSwap {
  /** The plugins loaded now: the device table serves them. */
  current: ReadonlyMap<string, LoadedPlugin>;
  /** The set to load; the swap leaves in it what it really loaded (a refused plugin keeps its previous one). */
  next: Map<string, LoadedPlugin>;
  problems: string[];
  /** Each plugin's errors, by name, for `GET /api/plugins`. */
  errors: Map<string, string[]>;
  retirement: PluginRetirement;
}
