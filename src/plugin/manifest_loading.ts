/**
 * The `skill.json` plugins loaded: each reload opens the manifests the discovery walk found, keeps a plugin's previous
 * version when its new one cannot be opened or its manifest broke, and swaps the set in through the device table (the
 * `plugins` group of the IOManager), retiring what it replaced. Each plugin's errors are kept for `GET /api/plugins`.
 *
 * @module
 */

import { type DeviceTable, swapDevices } from "./device_swap.ts";
import type { FoundManifests } from "./discovery.ts";
import { type LoadedPlugin, openPlugin, PluginRetirement, type PluginSwap, type PluginVmOptions } from "./plugin_vm.ts";
import type { Skill } from "./skill.ts";

/** Where the loaded plugins go, and how they are opened and retired. */
export interface ManifestPluginsOptions extends PluginVmOptions {
  /** The device table: the plugins become the `plugins` group. Without it, manifests are not loaded. */
  devices?: DeviceTable | undefined;
  /** How long a replaced plugin's VM stays open for turns that started before the reload. */
  retireGraceMs?: number | undefined;
}

/** The manifest plugins of the running daemon. */
export class ManifestPlugins {
  #options: ManifestPluginsOptions;
  #plugins = new Map<string, LoadedPlugin>();
  #errors = new Map<string, string[]>();
  #retirement: PluginRetirement;

  /**
   * @example
   * ```ts
   * import { getLogger } from "@logtape/logtape";
   * import type { IOManager } from "../io/io_manager.ts";
   *
   * declare const io: IOManager;
   * const manifests = new ManifestPlugins({ devices: io, logger: getLogger(["homed", "plugins"]) });
   * ```
   */
  constructor(options: ManifestPluginsOptions) {
    this.#options = options;
    this.#retirement = new PluginRetirement(options.retireGraceMs ?? 120_000);
  }

  /** Whether there is anywhere to load plugins to (a device table). */
  get enabled(): boolean {
    return this.#options.devices !== undefined;
  }

  /** The plugins loaded, by name. */
  get loaded(): ReadonlyMap<string, LoadedPlugin> {
    return this.#plugins;
  }

  /** Each plugin's errors of the last reload, by name (a manifest that cannot be used, by its folder's name). */
  get errors(): ReadonlyMap<string, readonly string[]> {
    return this.#errors;
  }

  /**
   * Opens the manifests found and swaps them in; `skills` are the eligible skills, which get devices of their own.
   * Returns the problems, after those of the walk that found the manifests.
   *
   * @example
   * ```ts
   * import type { FoundManifests } from "./discovery.ts";
   *
   * declare const manifests: ManifestPlugins;
   * declare const found: FoundManifests;
   * const problems = await manifests.load(found, []);
   * ```
   */
  async load(found: FoundManifests, skills: readonly Skill[]): Promise<string[]> {
    const problems = [...found.problems];
    this.#errors = new Map(found.errors);
    const next = new Map<string, LoadedPlugin>();
    for (const [name, manifest] of found.found) {
      const previous = this.#plugins.get(name);
      try {
        next.set(name, await openPlugin(manifest, previous, this.#options));
      } catch (error) {
        const message = (error as Error).message;
        problems.push(`${name}: ${message}${previous ? "; the previous version stays" : ""}`);
        this.#errors.set(name, [message]);
        if (previous) next.set(name, previous);
      }
    }
    // Plugins whose manifest broke keep their previous version.
    for (const [name, previous] of this.#plugins) {
      if (!next.has(name) && this.#errors.has(name)) next.set(name, previous);
    }
    const swap: PluginSwap = {
      current: this.#plugins,
      next,
      problems,
      errors: this.#errors,
      retirement: this.#retirement,
    };
    const { devices, exec } = this.#options;
    if (devices) await swapDevices(swap, devices, skills, exec);
    this.#plugins = next;
    return problems;
  }

  /**
   * Shutting down: every VM closes, retiring or not.
   *
   * @example
   * ```ts
   * declare const manifests: ManifestPlugins;
   * manifests.stop();
   * ```
   */
  stop(): void {
    this.#retirement.closeAll();
    for (const plugin of this.#plugins.values()) plugin.vm?.close();
  }
}
