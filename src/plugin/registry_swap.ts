/**
 * Registry path of a reload, for a `PluginService` given a tool registry and no device table (the tests that check
 * plugins' tools without an IOManager): each changed plugin's tools replace those of the owner `plugin:<name>`; a
 * plugin the registry refuses keeps its previous version, or is not loaded. The daemon always takes the device path.
 *
 * @module
 */

import type { ToolRegistry } from "../tools/registry.ts";
import { type ExecSettings, type PluginSwap, pluginTools } from "./plugin_vm.ts";

/**
 * Swaps each changed plugin's tools in as owner `plugin:<name>`, and removes those of the plugins gone.
 *
 * @example
 * ```ts
 * import type { PluginSwap } from "./plugin_vm.ts";
 * import { ToolRegistry } from "../tools/registry.ts";
 *
 * declare const swap: PluginSwap;
 * swapRegistryTools(swap, new ToolRegistry(), undefined); // swap.next now holds what the registry took
 * ```
 */
export function swapRegistryTools(
  swap: PluginSwap,
  registry: ToolRegistry,
  exec: ExecSettings | undefined,
): void {
  const { current, next, problems, errors, retirement } = swap;
  for (const [name, plugin] of next) {
    if (current.get(name) === plugin) continue;
    try {
      registry.replaceOwner(`plugin:${name}`, pluginTools(plugin, exec));
    } catch (error) {
      problems.push(`${name}: ${(error as Error).message}`);
      errors.set(name, [(error as Error).message]);
      retirement.retire(plugin);
      const previous = current.get(name);
      if (previous) next.set(name, previous);
      else next.delete(name);
    }
  }
  retirement.retireReplaced(current, next);
  for (const name of current.keys()) if (!next.has(name)) registry.replaceOwner(`plugin:${name}`, []);
}
