/**
 * Plugins in the running daemon, first part: OpenClaw skills. At start (and on `reload()`) the skill roots are scanned,
 * each skill gated, and the result kept as one immutable snapshot: the system message's skills section and the
 * `skill_read` tool read that snapshot, so a reload swaps everything at once (the prompt's skills section is stable
 * between reloads, which keeps the provider's prefix cache). `GET /api/plugins` lists every skill found, eligible or
 * not, with the reasons, its installers (shown, never run) and its warnings.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import { resolve } from "node:path";
import type { Dispatch, PromptContributor, PromptInput, PromptSection } from "../prompt/contributor.ts";
import type { Service } from "../service/service.ts";
import { LuaError } from "../lua/lua_error.ts";
import { type LuaLimits, LuaVm } from "../lua/vm.ts";
import type { ToolRegistry } from "../tools/registry.ts";
import type { Tool, ToolContext } from "../tools/tool.ts";
import { runExec } from "./exec_tool.ts";
import type { Device, DeviceContext } from "../io/device.ts";
import { Capability, type OutputEvent } from "../io/event.ts";
import { type Manifest, ManifestError, readManifest } from "./manifest.ts";
import { PluginDevice, pluginDeviceName } from "../devices/plugin/plugin_device.ts";
import { DEFAULT_LIMITS, discoverSkills, type SkillRoot } from "./discovery.ts";
import { type GateContext, gateSkill } from "./gating.ts";
import type { Skill } from "./skill.ts";
import { skillsPromptBody } from "./skills_prompt.ts";
import { compareText } from "../text/compare_text.ts";
import { untrustedLine } from "../text/untrusted.ts";

/** Options of {@link PluginService}. */
export interface PluginServiceOptions {
  /** Lowest precedence first: `plugins.extra_dirs`, then `paths.plugins`. */
  roots: SkillRoot[];
  gate: GateContext;
  /** `plugins.skills_prompt_chars`. */
  promptChars: number;
  logger: Logger;
  /** Shortens skill locations in the prompt to `~/…`. */
  home?: string | undefined;
  /** Where manifest plugins' tools are registered (as owner `plugin:<name>`) when there is no device table. */
  tools?: ToolRegistry;
  /**
   * The device table (the IOManager): each manifest plugin becomes a {@link PluginDevice} of the `plugins` group, and
   * a reload swaps the group in one serialised change. Without it (and without `tools`), manifests are not loaded.
   */
  devices?: { setDevices(group: string, devices: readonly Device[]): Promise<void> };
  /** Limits of the plugins' Lua calls (`lua.*`). */
  luaLimits?: LuaLimits;
  /** How long a replaced plugin's VM stays open for turns that started before the reload (the turn deadline). */
  retireGraceMs?: number;
  /** Folder for the plugins' key-value stores (`data_dir/plugins`). */
  dataDir?: string;
  /** Reload when files under the roots change (`plugins.watch`), after this quiet time (250 ms, as OpenClaw). */
  watch?: { debounceMs: number };
  /**
   * Device factories compiled into homed, by name (`onebot`), for manifests with `native`; a factory throws when it
   * cannot provide its device (QQ already on through `onebot.enabled`, say). Injected by the daemon.
   */
  natives?: Readonly<Record<string, () => Device>>;
  /** Exec tools: allowed at all (`plugins.allow_exec`), which programs (`plugins.exec_allowlist`), their environment. */
  exec?: { allowed: boolean; allowlist: readonly string[]; env: (plugin: string) => Record<string, string> };
}

/** A manifest plugin as loaded: its VM serves its tools until a reload retires it. */
interface LoadedPlugin {
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
  /** Its own device, made once (a reload that keeps the plugin keeps the device, which is not restarted). */
  device?: PluginDevice;
  /** The started device's context, for the script's `channel.emit`. */
  channel: { context?: DeviceContext | undefined };
}

/** One skill as the snapshot holds it. */
export interface SkillState {
  skill: Skill;
  source: string;
  eligible: boolean;
  reasons: string[];
}

interface Snapshot {
  skills: SkillState[];
  problems: string[];
  prompt: string | undefined;
  loadedAt: number;
}

/** The first of each key. */
function uniqueBy<T>(items: readonly T[], key: (item: T) => string): T[] {
  const seen = new Set<string>();
  const out: T[] = [];
  for (const item of items) {
    const k = key(item);
    if (seen.has(k)) continue;
    seen.add(k);
    out.push(item);
  }
  return out;
}

/** Largest file `skill_read` returns. */
const MAX_READ_BYTES = DEFAULT_LIMITS.maxSkillFileBytes;

/** The `plugins` service. */
export class PluginService implements Service, PromptContributor {
  readonly name = "plugins";
  #options: PluginServiceOptions;
  #snapshot: Snapshot = { skills: [], problems: [], prompt: undefined, loadedAt: 0 };
  #reloading: Promise<Snapshot> | undefined;
  #reloads = 0;
  #plugins = new Map<string, LoadedPlugin>();
  #retiring = new Map<ReturnType<typeof setTimeout>, LoadedPlugin>();
  #watcher: Deno.FsWatcher | undefined;
  /** The roots the watcher covers; a root created later is noticed on the heartbeat. */
  #watched: string[] = [];
  #debounce: ReturnType<typeof setTimeout> | undefined;
  #pluginErrors = new Map<string, string[]>();

  /**
   * @example
   * ```ts
   * import { getLogger } from "@logtape/logtape";
   *
   * const plugins = new PluginService({
   *   roots: [{ dir: "/srv/homed/plugins", source: "paths.plugins" }],
   *   gate: {
   *     os: "linux",
   *     path: ["/usr/bin", "/bin"],
   *     env: (name) => Deno.env.get(name),
   *     entry: () => undefined,
   *     config: () => false,
   *   },
   *   promptChars: 18_000,
   *   logger: getLogger(["homed", "plugins"]),
   * });
   * await plugins.start(); // the daemon starts it through its ServiceHost
   * ```
   */
  constructor(options: PluginServiceOptions) {
    this.#options = options;
  }

  async start(): Promise<void> {
    await this.reload();
    if (this.#options.watch) this.#watch(this.#options.watch.debounceMs);
  }

  /** The roots that exist now. */
  #existingRoots(): string[] {
    return this.#options.roots.flatMap((root) => {
      try {
        return Deno.statSync(root.dir).isDirectory ? [root.dir] : [];
      } catch {
        return [];
      }
    });
  }

  /** Reloads after files under the roots changed and then stayed quiet for `debounceMs`. */
  #watch(debounceMs: number): void {
    const roots = this.#existingRoots();
    this.#watched = roots;
    if (!roots.length) return;
    const watcher = Deno.watchFs(roots, { recursive: true });
    this.#watcher = watcher;
    (async () => {
      for await (const event of watcher) {
        if (event.kind === "access") continue;
        clearTimeout(this.#debounce);
        this.#debounce = setTimeout(() => {
          this.#debounce = undefined;
          this.reload().catch((error) => this.#options.logger.error("Plugins: reload failed: {error}", { error }));
        }, debounceMs);
      }
    })().catch((error) => this.#options.logger.warning("Plugins: the file watch stopped: {error}", { error }));
  }

  /**
   * Scans and gates again and swaps the snapshot in one step; concurrent calls share one scan.
   *
   * @example
   * ```ts
   * declare const plugins: PluginService;
   * const { skills, eligible, problems } = await plugins.reload(); // counts, and one line per problem
   * ```
   */
  reload(): Promise<{ skills: number; eligible: number; problems: string[] }> {
    this.#reloading ??= this.#scan().finally(() => (this.#reloading = undefined));
    return this.#reloading.then((snapshot) => ({
      skills: snapshot.skills.length,
      eligible: snapshot.skills.filter((state) => state.eligible).length,
      problems: snapshot.problems,
    }));
  }

  async #scan(): Promise<Snapshot> {
    const { gate, logger } = this.#options;
    const openclaw = await this.#openclawPlugins();
    const { skills, problems, failed } = await discoverSkills([...openclaw.roots, ...this.#options.roots]);
    problems.unshift(...openclaw.problems);
    const states: SkillState[] = skills.map(({ skill, source }) => ({ skill, source, ...gateSkill(skill, gate) }));
    // A skill whose new version cannot be read keeps serving in the version it had.
    for (const { dir, problem } of failed) {
      const previous = this.#snapshot.skills.find((state) => state.skill.dir === dir);
      if (!previous || states.some((state) => state.skill.name === previous.skill.name)) continue;
      states.push(previous);
      problems.push(`${previous.skill.name}: its new version cannot be used (${problem}); the previous version stays`);
    }
    states.sort((a, b) => compareText(a.skill.name, b.skill.name));
    if (this.#options.tools || this.#options.devices) {
      const skillsOnly = states.filter((state) => state.eligible).map((state) => state.skill);
      problems.push(...await this.#loadManifests(skillsOnly));
    }
    const eligible = states.filter((state) => state.eligible).map((state) => state.skill);
    const snapshot: Snapshot = {
      skills: states,
      problems,
      prompt: skillsPromptBody(eligible, { budget: this.#options.promptChars, home: this.#options.home }),
      loadedAt: Date.now(),
    };
    this.#snapshot = snapshot;
    this.#reloads++;
    for (const problem of problems) logger.warning("Plugins: {problem}", { problem });
    logger.info("Plugins: {eligible} of {count} skills offered ({names})", {
      eligible: eligible.length,
      count: states.length,
      names: eligible.map((skill) => skill.name).join(", ") || "none",
    });
    return snapshot;
  }

  /**
   * OpenClaw plugin folders (`openclaw.plugin.json`): their `skills[]` folders are read as skill roots, below every
   * other root; their code cannot run in homed, and saying so is part of the report.
   */
  async #openclawPlugins(): Promise<{ roots: SkillRoot[]; problems: string[] }> {
    const roots: SkillRoot[] = [];
    const problems: string[] = [];
    for (const root of this.#options.roots) {
      const names: string[] = [];
      try {
        for await (const entry of Deno.readDir(root.dir)) if (entry.isDirectory) names.push(entry.name);
      } catch {
        continue;
      }
      for (const name of names.sort()) {
        const dir = resolve(root.dir, name);
        let manifest: { id?: unknown; skills?: unknown };
        try {
          manifest = JSON.parse(await Deno.readTextFile(`${dir}/openclaw.plugin.json`));
        } catch (error) {
          if (!(error instanceof Deno.errors.NotFound)) {
            problems.push(`${dir}/openclaw.plugin.json: not readable JSON (${(error as Error).message})`);
          }
          continue;
        }
        const id = typeof manifest.id === "string" ? manifest.id : name;
        const skills = Array.isArray(manifest.skills) ? manifest.skills.filter((s) => typeof s === "string") : [];
        for (const skillDir of skills as string[]) {
          const target = resolve(dir, skillDir);
          if (!target.startsWith(`${dir}/`)) {
            problems.push(
              `${dir}/openclaw.plugin.json: skills entry ${JSON.stringify(skillDir)} leads outside the plugin`,
            );
            continue;
          }
          roots.push({ dir: target, source: `openclaw plugin ${id}` });
        }
        problems.push(
          `${id} (${dir}): an OpenClaw plugin; its code (JavaScript/TypeScript) cannot run in homed — ` +
            `${
              skills.length
                ? `only its ${skills.length} skill folder(s) are read`
                : "it declares no skills[], so nothing of it is used"
            }`,
        );
      }
    }
    return { roots, problems };
  }

  /** Finds `skill.json` folders, loads each (VM, tools) and swaps their tools in; a broken one keeps its old version. */
  async #loadManifests(skills: readonly Skill[]): Promise<string[]> {
    const problems: string[] = [];
    const found = new Map<string, { manifest: Manifest; dir: string; source: string }>();
    this.#pluginErrors.clear();
    for (const root of this.#options.roots) {
      let rootReal: string;
      try {
        rootReal = await Deno.realPath(root.dir);
      } catch {
        continue;
      }
      const entries: string[] = [];
      try {
        for await (const entry of Deno.readDir(rootReal)) {
          if (!entry.name.startsWith(".") && entry.name !== "node_modules") entries.push(entry.name);
        }
      } catch { /* unreadable root: nothing */ }
      for (const name of entries.sort()) {
        const path = `${rootReal}/${name}/skill.json`;
        let text: string;
        try {
          const real = await Deno.realPath(path);
          if (!real.startsWith(`${rootReal}/${name}/`)) {
            problems.push(`${path}: skipped, it leads outside ${root.dir}`);
            continue;
          }
          text = await Deno.readTextFile(real);
        } catch {
          continue; // no manifest here
        }
        try {
          const manifest = readManifest(text, `${rootReal}/${name}`, path);
          found.set(manifest.name, { manifest, dir: `${rootReal}/${name}`, source: root.source });
        } catch (error) {
          if (!(error instanceof ManifestError)) throw error;
          problems.push(error.message);
          this.#pluginErrors.set(name, error.problems);
        }
      }
    }
    const next = new Map<string, LoadedPlugin>();
    for (const [name, { manifest, dir, source }] of found) {
      try {
        next.set(name, await this.#openPlugin(manifest, dir, source));
      } catch (error) {
        const message = (error as Error).message;
        const previous = this.#plugins.get(name);
        problems.push(`${name}: ${message}${previous ? "; the previous version stays" : ""}`);
        this.#pluginErrors.set(name, [message]);
        if (previous) next.set(name, previous);
      }
    }
    // Plugins whose manifest broke keep their previous version.
    for (const [name, previous] of this.#plugins) {
      if (!next.has(name) && this.#pluginErrors.has(name)) next.set(name, previous);
    }
    if (this.#options.devices) await this.#swapDevices(next, problems, skills);
    else this.#swapTools(next, problems);
    this.#plugins = next;
    return problems;
  }

  /** Registry path: each plugin's tools swapped as owner `plugin:<name>`. */
  #swapTools(next: Map<string, LoadedPlugin>, problems: string[]): void {
    const registry = this.#options.tools!;
    for (const [name, plugin] of next) {
      if (this.#plugins.get(name) === plugin) continue;
      try {
        registry.replaceOwner(`plugin:${name}`, this.#toolsOf(plugin));
      } catch (error) {
        problems.push(`${name}: ${(error as Error).message}`);
        this.#pluginErrors.set(name, [(error as Error).message]);
        this.#retire(plugin);
        const previous = this.#plugins.get(name);
        if (previous) next.set(name, previous);
        else next.delete(name);
      }
    }
    this.#retireReplaced(next);
    for (const name of this.#plugins.keys()) if (!next.has(name)) registry.replaceOwner(`plugin:${name}`, []);
  }

  /**
   * Device path: the whole `plugins` group in one change of the device table. If the new set is refused (a tool name
   * another device has, say), only the plugins the table refuses are left out: starting from the versions it accepted
   * last time, each new version is tried in turn (in name order, so a plugin already loaded keeps a tool name a
   * newcomer also wants); a refused one keeps its previous version, or is not loaded, and is named under problems. If
   * even the previous set is refused, the table stays as it was.
   */
  async #swapDevices(next: Map<string, LoadedPlugin>, problems: string[], skills: readonly Skill[]): Promise<void> {
    // A pure SKILL.md plugin is a device too (no tools of its own, no output): the channel list shows what is installed.
    const skillDevice = (skill: Skill) => new PluginDevice(skill.name, skill.description, [], { capabilities: 0 });
    const devices = (set: Map<string, LoadedPlugin>) => [
      ...[...set.values()].flatMap((plugin) => [
        ...(plugin.native ? [plugin.native] : []),
        ...(plugin.manifest.tools.length || plugin.manifest.io || !plugin.native ? [this.#deviceOf(plugin)] : []),
      ]),
      ...uniqueBy(skills.filter((skill) => !set.has(skill.name)), (skill) => pluginDeviceName(skill.name))
        .map(skillDevice),
    ];
    const setDevices = (set: Map<string, LoadedPlugin>) => this.#options.devices!.setDevices("plugins", devices(set));
    try {
      await setDevices(next);
    } catch (error) {
      const accepted = new Map<string, LoadedPlugin>();
      for (const name of next.keys()) {
        const previous = this.#plugins.get(name);
        if (previous) accepted.set(name, previous);
      }
      try {
        await setDevices(accepted);
      } catch (again) {
        problems.push(
          `plugins: the new set of plugin devices was refused (${(error as Error).message}), and so was the ` +
            `previous set (${(again as Error).message}); the plugin devices stay as they were`,
        );
        for (const plugin of next.values()) if (![...this.#plugins.values()].includes(plugin)) this.#retire(plugin);
        next.clear();
        for (const [name, plugin] of this.#plugins) next.set(name, plugin);
        return;
      }
      for (const name of [...next.keys()].sort(compareText)) {
        const plugin = next.get(name)!;
        const previous = accepted.get(name);
        if (previous === plugin) continue;
        const trial = new Map(accepted).set(name, plugin);
        try {
          await setDevices(trial);
          accepted.set(name, plugin);
        } catch (refusal) {
          const reason = (refusal as Error).message;
          problems.push(
            previous
              ? `${name}: the device table refused its new version (${reason}); the previous version stays`
              : `${name}: not loaded: the device table refused it (${reason})`,
          );
          this.#pluginErrors.set(name, [reason]);
          this.#retire(plugin);
        }
      }
      for (const name of [...next.keys()]) {
        const kept = accepted.get(name);
        if (kept) next.set(name, kept);
        else next.delete(name);
      }
    }
    this.#retireReplaced(next);
  }

  /** Calls into a plugin's VM, counted so a retired VM closes only after its last call; Lua errors as plain errors. */
  async #callLua(plugin: LoadedPlugin, fn: string, ...args: string[]): Promise<unknown> {
    plugin.inFlight++;
    try {
      return await plugin.vm!.call(fn, ...args);
    } catch (error) {
      if (error instanceof LuaError) throw new Error(error.message);
      throw error;
    } finally {
      plugin.inFlight--;
      if (plugin.graceOver && plugin.inFlight === 0) plugin.vm?.close();
    }
  }

  /** The plugin's own device, made once: tools, and the channel its manifest declares. */
  #deviceOf(plugin: LoadedPlugin): PluginDevice {
    if (plugin.device) return plugin.device;
    const { manifest } = plugin;
    const call = async (fn: string, ...args: string[]) => void await this.#callLua(plugin, fn, ...args);
    const io = manifest.io;
    const capabilities = (io?.capabilities ?? []).reduce(
      (mask, name) => mask | Capability[(name.charAt(0).toUpperCase() + name.slice(1)) as keyof typeof Capability],
      0,
    );
    plugin.device = new PluginDevice(manifest.name, manifest.description, this.#toolsOf(plugin), {
      capabilities,
      ...(io?.onOutput ? { onOutput: (event: OutputEvent) => call(io.onOutput!, JSON.stringify(event)) } : {}),
      ...(io?.poll ? { poll: { run: () => call(io.poll!.lua), everyMs: io.poll.everyMs } } : {}),
      onStart: (context) => (plugin.channel.context = context),
      onStop: () => (plugin.channel.context = undefined),
    });
    return plugin.device;
  }

  /** Retires the loaded plugins the new set no longer holds. */
  #retireReplaced(next: Map<string, LoadedPlugin>): void {
    for (const [name, previous] of this.#plugins) if (next.get(name) !== previous) this.#retire(previous);
  }

  async #openPlugin(manifest: Manifest, dir: string, source: string): Promise<LoadedPlugin> {
    let vm: LuaVm | undefined;
    const channel: LoadedPlugin["channel"] = {};
    if (manifest.lua) {
      const real = await Deno.realPath(manifest.lua).catch(() => undefined);
      if (!real) throw new Error(`lua: ${manifest.lua} does not exist`);
      if (!real.startsWith(`${dir}/`)) throw new Error(`lua: ${manifest.lua} leads outside the plugin's folder`);
      const dataDir = this.#options.dataDir;
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
      vm = await LuaVm.open({
        name: `${manifest.name}/${real.slice(dir.length + 1)}`,
        source: await Deno.readTextFile(real),
        limits: this.#options.luaLimits ?? { timeMs: 1_000, memoryBytes: 16 * 1024 * 1024 },
        grants: {
          json: true,
          ...(manifest.grants.http.length ? { http: { allowHosts: manifest.grants.http, timeoutMs: 30_000 } } : {}),
          ...(manifest.grants.kv && dataDir ? { kv: { path: `${dataDir}/${manifest.name}.kv.json` } } : {}),
          ...(manifest.io ? { emit } : {}),
        },
        logger: this.#options.logger,
      });
      const needed = [
        ...manifest.tools.flatMap((tool) => tool.lua === undefined ? [] : [[`tool ${tool.name}`, tool.lua]]),
        ...(manifest.io?.onOutput ? [["io.on_output", manifest.io.onOutput]] : []),
        ...(manifest.io?.poll ? [["io.poll", manifest.io.poll.lua]] : []),
      ];
      for (const [what, fn] of needed) {
        if (!vm.has(fn!)) {
          vm.close();
          throw new Error(`${what}: the script defines no function ${fn}()`);
        }
      }
    }
    for (const tool of manifest.tools) {
      const program = tool.exec?.argv[0];
      if (program === undefined) continue;
      const exec = this.#options.exec;
      let refusal: string | undefined;
      if (!exec?.allowed) refusal = "exec tools are off (plugins.allow_exec: false)";
      else if (!exec.allowlist.includes(program)) refusal = `${program} is not in plugins.exec_allowlist`;
      else if (Deno.permissions.querySync({ name: "run", command: program }).state !== "granted") {
        refusal = `homed may not run ${program}; restart it with the flags \`homed flags\` prints`;
      }
      if (refusal) {
        vm?.close();
        throw new Error(`tool ${tool.name}: ${refusal}`);
      }
    }
    let native: Device | undefined;
    if (manifest.native !== undefined) {
      const factory = this.#options.natives?.[manifest.native];
      if (!factory) {
        vm?.close();
        const known = Object.keys(this.#options.natives ?? {}).join(", ") || "none";
        throw new Error(`native: the factory ${JSON.stringify(manifest.native)} is unknown (known: ${known})`);
      }
      const previous = this.#plugins.get(manifest.name);
      try {
        native = previous?.manifest.native === manifest.native && previous.native ? previous.native : factory();
      } catch (error) {
        vm?.close();
        throw new Error(`native ${manifest.native}: ${(error as Error).message}`);
      }
    }
    return { manifest, dir, source, vm, inFlight: 0, retired: false, channel, ...(native ? { native } : {}) };
  }

  #toolsOf(plugin: LoadedPlugin): Tool[] {
    return plugin.manifest.tools.map((spec) => ({
      name: spec.name,
      // The plugin's words in the tool list the model reads: one line, markers escaped, as message text.
      description: untrustedLine(spec.description),
      parameters: spec.parameters,
      allow: spec.allow,
      ...(spec.timeoutMs === undefined ? {} : { timeoutMs: spec.timeoutMs }),
      execute: async (args: Record<string, unknown>, context: ToolContext) => {
        if (spec.exec) {
          return await runExec(spec.exec, args, this.#options.exec!.env(plugin.manifest.name), context.signal);
        }
        const result = await this.#callLua(plugin, spec.lua!, JSON.stringify(args));
        return result === undefined || result === null ? "" : String(result);
      },
    }));
  }

  /** A plugin replaced or removed: its VM closes once no call of a turn in flight uses it. */
  #retire(plugin: LoadedPlugin): void {
    if (plugin.retired) return;
    plugin.retired = true;
    // A turn that started before the reload keeps its view of the tools until it ends: the old VM stays open for
    // the turn's longest life, and past that until its last call returns.
    const timer = setTimeout(() => {
      this.#retiring.delete(timer);
      plugin.graceOver = true;
      if (plugin.inFlight === 0) plugin.vm?.close();
    }, this.#options.retireGraceMs ?? 120_000);
    Deno.unrefTimer(timer);
    this.#retiring.set(timer, plugin);
  }

  /** A plugin root created (or removed) since the watch began: watch again, and reload. */
  async heartbeat(): Promise<void> {
    if (!this.#options.watch) return;
    const roots = this.#existingRoots();
    if (roots.join("\n") === this.#watched.join("\n")) return;
    this.#watcher?.close();
    this.#watch(this.#options.watch.debounceMs);
    await this.reload();
  }

  /** The skills section of the system message (after the persona). */
  system(): PromptSection | undefined {
    const body = this.#snapshot.prompt;
    return body ? { title: "Skills (mandatory)", body } : undefined;
  }

  /** `/name args` of a user-invocable skill: which skill, and the raw arguments. */
  #command(text: string): { state: SkillState; args: string } | undefined {
    const match = /^\/([a-z0-9][a-z0-9_-]{0,63})(?:\s+([\s\S]*))?$/i.exec(text.trim());
    if (!match) return undefined;
    const wanted = match[1]!.toLowerCase().replaceAll("_", "-");
    const state = this.#snapshot.skills.find((candidate) =>
      candidate.eligible && candidate.skill.userInvocable && candidate.skill.name.toLowerCase() === wanted
    );
    return state ? { state, args: (match[2] ?? "").trim() } : undefined;
  }

  /** `/name args` of a skill with `command-dispatch: tool`: its tool, called directly. */
  dispatch(input: PromptInput): Dispatch | undefined {
    const command = this.#command(input.text);
    const tool = command?.state.skill.commandTool;
    if (!command || !tool) return undefined;
    return {
      tool,
      args: { command: command.args, commandName: command.state.skill.name, skillName: command.state.skill.name },
    };
  }

  /** `/name args` of any other user-invocable skill: the turn is told which skill the user asked for. */
  reference(input: PromptInput): PromptSection | undefined {
    const command = this.#command(input.text);
    if (!command || command.state.skill.commandTool) return undefined;
    const { name } = command.state.skill;
    return {
      title: "Skill invoked by the user",
      body: `The user typed /${name}${command.args ? ` with the arguments: ${command.args}` : ""}. ` +
        `Read the skill with skill_read (name "${name}") and follow it.`,
    };
  }

  /** Every plugin found — skills and manifests — for `GET /api/plugins`. */
  list(): Array<Record<string, unknown>> {
    const manifests = [...this.#plugins.values()].map(({ manifest, source, dir }) => ({
      name: manifest.name,
      source,
      kind: manifest.native ? "native" : "manifest",
      path: `${dir}/skill.json`,
      description: manifest.description,
      version: manifest.version,
      eligible: true,
      reasons: [
        manifest.native
          ? `its device comes from the ${manifest.native} factory`
          : `${manifest.tools.length} tools from ${manifest.lua ? "Lua" : "no script"}`,
      ],
      tools: manifest.tools.map((tool) => tool.name),
      commands: [],
      install: [],
      errors: this.#pluginErrors.get(manifest.name) ?? [],
    }));
    const failed = [...this.#pluginErrors].filter(([name]) => !this.#plugins.has(name)).map(([name, errors]) => ({
      name,
      source: "",
      kind: "manifest",
      eligible: false,
      reasons: ["its skill.json cannot be used"],
      tools: [],
      commands: [],
      install: [],
      errors,
    }));
    const skills = this.#snapshot.skills.map(({ skill, source, eligible, reasons }) => ({
      name: skill.name,
      source,
      kind: "skill",
      path: skill.file,
      description: skill.description,
      eligible,
      reasons,
      tools: [],
      commands: skill.userInvocable ? [`/${skill.name}`] : [],
      install: skill.install,
      errors: skill.warnings,
    }));
    return [...skills, ...manifests, ...failed];
  }

  /** What the last scan skipped, for `GET /api/plugins`. */
  problems(): string[] {
    return [...this.#snapshot.problems];
  }

  /** The tools: `skill_read`, and `plgreload` (owner only). */
  tools(): Tool[] {
    return [{
      name: "plgreload",
      description:
        "Reload the plugins (skills) from their folders: new, changed and removed ones take effect from the next message. Only when the owner asks.",
      parameters: { type: "object", properties: {}, additionalProperties: false },
      allow: "owner",
      execute: async () => {
        const report = await this.reload();
        return `Reloaded: ${report.eligible} of ${report.skills} skills offered` +
          (report.problems.length ? `; problems: ${report.problems.join("; ")}` : "");
      },
    }, {
      name: "skill_read",
      description:
        "Read an available skill's instructions (its SKILL.md, with {baseDir} filled in) or, with path, a file of the skill's folder it refers to (references/x.md). Only skills listed in <available_skills>.",
      parameters: {
        type: "object",
        properties: {
          name: { type: "string", minLength: 1, maxLength: 64 },
          path: { type: "string", minLength: 1, maxLength: 300, description: "A file inside the skill's folder" },
        },
        required: ["name"],
        additionalProperties: false,
      },
      allow: "household",
      execute: (args) => this.#read(args.name as string, args.path as string | undefined),
    }];
  }

  async #read(name: string, path: string | undefined): Promise<string> {
    const eligible = this.#snapshot.skills.filter((state) => state.eligible);
    const state = eligible.find((candidate) => candidate.skill.name === name);
    if (!state) {
      throw new Error(
        `no available skill is named ${JSON.stringify(name)}; available: ${
          eligible.map((s) => s.skill.name).join(", ") || "none"
        }`,
      );
    }
    const { skill } = state;
    if (path === undefined || path === "SKILL.md") return skill.body.replaceAll("{baseDir}", skill.dir);
    // Outside by its name, or through a symlink once resolved: refused either way.
    const outside = new Error(`path ${JSON.stringify(path)} is outside the folder of the skill ${name}`);
    if (!resolve(skill.dir, path).startsWith(`${skill.dir}/`)) throw outside;
    let real: string;
    try {
      real = await Deno.realPath(resolve(skill.dir, path));
    } catch {
      throw new Error(`the skill ${name} has no file ${JSON.stringify(path)}`);
    }
    if (!real.startsWith(`${skill.dir}/`)) throw outside;
    const info = await Deno.stat(real);
    if (!info.isFile) throw new Error(`${JSON.stringify(path)} in the skill ${name} is not a file`);
    if (info.size > MAX_READ_BYTES) {
      throw new Error(
        `${JSON.stringify(path)} in the skill ${name} has ${info.size} bytes (at most ${MAX_READ_BYTES})`,
      );
    }
    const bytes = await Deno.readFile(real);
    if (bytes.includes(0)) throw new Error(`${JSON.stringify(path)} in the skill ${name} is not a text file`);
    return new TextDecoder().decode(bytes).replaceAll("{baseDir}", skill.dir);
  }

  async stop(): Promise<void> {
    this.#watcher?.close();
    clearTimeout(this.#debounce);
    await this.#reloading?.catch(() => {});
    for (const [timer, plugin] of this.#retiring) {
      clearTimeout(timer);
      plugin.vm?.close();
    }
    this.#retiring.clear();
    for (const plugin of this.#plugins.values()) plugin.vm?.close();
  }

  status(): Record<string, unknown> {
    const skills = this.#snapshot.skills;
    return {
      skills: skills.length,
      eligible: skills.filter((state) => state.eligible).length,
      problems: this.#snapshot.problems.length,
      manifests: this.#plugins.size,
      reloads: this.#reloads,
    };
  }
}
