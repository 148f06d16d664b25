/**
 * Plugins in the running daemon: the `plugins` service, composed of its parts. At start (and on `reload()`) the skill
 * roots are scanned once — skills and `skill.json` manifests in the same walk (`discovery.ts`) — each skill gated, and
 * the result kept as one immutable snapshot (`skill_catalogue.ts`): the system message's skills section, the slash
 * commands (`slash_commands.ts`) and the `skill_read` tool (`plugin_tools.ts`, with `plgreload`) read that snapshot,
 * so a reload swaps everything at once (the prompt's skills section is stable between reloads, which keeps the
 * provider's prefix cache). The manifests become `PluginDevice`s of the device table (`manifest_loading.ts`,
 * `plugin_vm.ts`, `device_swap.ts`); `watch.ts` reloads when the folders change. `GET /api/plugins` lists every
 * plugin found, eligible or not, with the reasons, its installers (shown, never run) and its warnings (`inspection.ts`).
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import type { Dispatch, PromptContributor, PromptInput, PromptSection } from "../prompt/contributor.ts";
import type { Service } from "../service/service.ts";
import type { LuaLimits } from "../lua/vm.ts";
import type { Tool } from "../tools/tool.ts";
import type { Device, DeviceGroup } from "../io/device.ts";
import type { SkillRoot } from "./discovery.ts";
import type { GateContext } from "./gating.ts";
import { pluginList } from "./inspection.ts";
import { ManifestPlugins } from "./manifest_loading.ts";
import type { NativeFactory } from "./plugin_vm.ts";
import { plgreloadTool, skillReadTool } from "./plugin_tools.ts";
import { EMPTY_SNAPSHOT, scanCatalogue, type SkillSnapshot } from "./skill_catalogue.ts";
import { commandDispatch, commandReference, skillCommand } from "./slash_commands.ts";
import { RootWatch } from "./watch.ts";

export type { SkillState } from "./skill_catalogue.ts";

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
  /**
   * The device table (the IOManager): each manifest plugin becomes a `PluginDevice` of the `plugins` group (its tools
   * registered by the IOManager, as owner `device:plugin-<name>`), and a reload swaps the group in one serialised
   * change. Without it, manifests are not loaded.
   */
  devices?: { setDevices(group: DeviceGroup, devices: readonly Device[]): Promise<void> };
  /** Limits of the plugins' Lua calls (`lua.*`). */
  luaLimits?: LuaLimits;
  /** How long a replaced plugin's VM stays open for turns that started before the reload (the turn deadline). */
  retireGraceMs?: number;
  /** Folder for the plugins' key-value stores (`data_dir/plugins`). */
  dataDir?: string;
  /** Reload when files under the roots change (`plugins.watch`), after this quiet time (250 ms, as OpenClaw). */
  watch?: { debounceMs: number };
  /**
   * Device factories compiled into homed, by name (`onebot`), for manifests with `native`; a factory gives no device
   * when homed runs it already (QQ on through `onebot.enabled`) and throws when it cannot provide one. Injected by the
   * daemon.
   */
  natives?: Readonly<Record<string, NativeFactory>>;
  /** Exec tools: allowed at all (`plugins.allow_exec`), which programs (`plugins.exec_allowlist`), their environment. */
  exec?: { allowed: boolean; allowlist: readonly string[]; env: (plugin: string) => Record<string, string> };
}

/** The `plugins` service. */
export class PluginService implements Service, PromptContributor {
  readonly name = "plugins";
  #options: PluginServiceOptions;
  #snapshot: SkillSnapshot = EMPTY_SNAPSHOT;
  #reloading: Promise<SkillSnapshot> | undefined;
  #reloads = 0;
  #manifests: ManifestPlugins;
  #watch: RootWatch | undefined;

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
    this.#manifests = new ManifestPlugins(options);
    if (options.watch) {
      this.#watch = new RootWatch(options.roots, options.watch.debounceMs, () => this.reload(), options.logger);
    }
  }

  async start(): Promise<void> {
    await this.reload();
    this.#watch?.start();
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

  async #scan(): Promise<SkillSnapshot> {
    const manifests = this.#manifests;
    const snapshot = await scanCatalogue({
      ...this.#options,
      loadManifests: manifests.enabled ? (found, eligible) => manifests.load(found, eligible) : undefined,
    }, this.#snapshot);
    this.#snapshot = snapshot;
    this.#reloads++;
    return snapshot;
  }

  /** A plugin root created (or removed) since the watch began: watch again, and reload. */
  async heartbeat(): Promise<void> {
    if (this.#watch?.rewatch()) await this.reload();
  }

  /** The skills section of the system message (after the persona). */
  system(): PromptSection | undefined {
    const body = this.#snapshot.prompt;
    return body ? { title: "Skills (mandatory)", body } : undefined;
  }

  /** `/name args` of a skill with `command-dispatch: tool`: its tool, called directly. */
  dispatch(input: PromptInput): Dispatch | undefined {
    return commandDispatch(skillCommand(input.text, this.#snapshot.skills));
  }

  /** `/name args` of any other user-invocable skill: the turn is told which skill the user asked for. */
  reference(input: PromptInput): PromptSection | undefined {
    return commandReference(skillCommand(input.text, this.#snapshot.skills));
  }

  /** Every plugin found — skills and manifests — for `GET /api/plugins`. */
  list(): Array<Record<string, unknown>> {
    return pluginList(this.#snapshot.skills, this.#manifests.loaded, this.#manifests.errors);
  }

  /** What the last scan skipped, for `GET /api/plugins`. */
  problems(): string[] {
    return [...this.#snapshot.problems];
  }

  /** The tools: `skill_read`, and `plgreload` (owner only). */
  tools(): Tool[] {
    return [plgreloadTool(() => this.reload()), skillReadTool(() => this.#snapshot.skills)];
  }

  async stop(): Promise<void> {
    this.#watch?.stop();
    await this.#reloading?.catch(() => {});
    this.#manifests.stop();
  }

  status(): Record<string, unknown> {
    const skills = this.#snapshot.skills;
    return {
      skills: skills.length,
      eligible: skills.filter((state) => state.eligible).length,
      problems: this.#snapshot.problems.length,
      manifests: this.#manifests.loaded.size,
      reloads: this.#reloads,
    };
  }
}
