/**
 * Plugins as devices (`PluginDevice`, `plugin-<name>`, of the `plugins` group): each `skill.json` plugin's own device
 * (its tools and, with `io`, its channel) or the device of its native factory, and a tool-less device for each pure
 * SKILL.md plugin, so the channel list shows what is installed. A reload swaps the whole group in one change of the
 * device table, and leaves out only the plugins the table refuses.
 *
 * @module
 */

import type { Device, DeviceGroup } from "../io/device.ts";
import { Capability, type OutputEvent } from "../io/event.ts";
import { compareText } from "../text/compare_text.ts";
import { PluginDevice, pluginDeviceName } from "./plugin_device.ts";
import { callLua, type ExecSettings, type LoadedPlugin, type PluginSwap, pluginTools } from "./plugin_vm.ts";
import type { Skill } from "./skill.ts";

/** The device table, as the plugins change it: one group at a time. */
export interface DeviceTable {
  setDevices(group: DeviceGroup, devices: readonly Device[]): Promise<void>;
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

/** The plugin's own device, made once: tools, and the channel its manifest declares. */
function deviceOf(
  plugin: LoadedPlugin,
  exec: ExecSettings | undefined,
): PluginDevice {
  if (plugin.device) return plugin.device;
  const { manifest } = plugin;
  const call = async (fn: string, ...args: string[]) => void await callLua(plugin, fn, ...args);
  const io = manifest.io;
  const capabilities = (io?.capabilities ?? []).reduce(
    (mask, name) => mask | Capability[(name.charAt(0).toUpperCase() + name.slice(1)) as keyof typeof Capability],
    0,
  );
  plugin.device = new PluginDevice(manifest.name, manifest.description, pluginTools(plugin, exec), {
    capabilities,
    ...(io?.onOutput ? { onOutput: (event: OutputEvent) => call(io.onOutput!, JSON.stringify(event)) } : {}),
    ...(io?.poll ? { poll: { run: () => call(io.poll!.lua), everyMs: io.poll.everyMs } } : {}),
    onStart: (context) => (plugin.channel.context = context),
    onStop: () => (plugin.channel.context = undefined),
  });
  return plugin.device;
}

/**
 * Device path: the whole `plugins` group in one change of the device table. If the new set is refused (a tool name
 * another device has, say), only the plugins the table refuses are left out: starting from the versions it accepted
 * last time, each new version is tried in turn (in name order, so a plugin already loaded keeps a tool name a
 * newcomer also wants); a refused one keeps its previous version, or is not loaded, and is named under problems. If
 * even the previous set is refused, the table stays as it was.
 *
 * @example
 * ```ts
 * import type { PluginSwap } from "./plugin_vm.ts";
 *
 * declare const swap: PluginSwap;
 * declare const table: DeviceTable;
 * await swapDevices(swap, table, [], undefined); // swap.next now holds what the table took
 * ```
 */
export async function swapDevices(
  swap: PluginSwap,
  table: DeviceTable,
  skills: readonly Skill[],
  exec: ExecSettings | undefined,
): Promise<void> {
  const { current, next, problems, errors, retirement } = swap;
  // A pure SKILL.md plugin is a device too (no tools of its own, no output): the channel list shows what is installed.
  const skillDevice = (skill: Skill) => new PluginDevice(skill.name, skill.description, [], { capabilities: 0 });
  const devices = (set: Map<string, LoadedPlugin>) => [
    ...[...set.values()].flatMap((plugin) => [
      ...(plugin.native ? [plugin.native] : []),
      ...(plugin.manifest.tools.length || plugin.manifest.io || plugin.manifest.native === undefined
        ? [deviceOf(plugin, exec)]
        : []),
    ]),
    ...uniqueBy(skills.filter((skill) => !set.has(skill.name)), (skill) => pluginDeviceName(skill.name))
      .map(skillDevice),
  ];
  const setDevices = (set: Map<string, LoadedPlugin>) => table.setDevices("plugins", devices(set));
  try {
    await setDevices(next);
  } catch (error) {
    const accepted = new Map<string, LoadedPlugin>();
    for (const name of next.keys()) {
      const previous = current.get(name);
      if (previous) accepted.set(name, previous);
    }
    try {
      await setDevices(accepted);
    } catch (again) {
      problems.push(
        `plugins: the new set of plugin devices was refused (${(error as Error).message}), and so was the ` +
          `previous set (${(again as Error).message}); the plugin devices stay as they were`,
      );
      for (const plugin of next.values()) if (![...current.values()].includes(plugin)) retirement.retire(plugin);
      next.clear();
      for (const [name, plugin] of current) next.set(name, plugin);
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
        errors.set(name, [reason]);
        retirement.retire(plugin);
      }
    }
    for (const name of [...next.keys()]) {
      const kept = accepted.get(name);
      if (kept) next.set(name, kept);
      else next.delete(name);
    }
  }
  retirement.retireReplaced(current, next);
}
