/**
 * `homed init`: writes a starter config (every key documented) pointing at this checkout's persona, knowledge and
 * plugins, and the default persona if there is none yet.
 *
 * @module
 */

import { dirname, join, relative, resolve } from "node:path";
import exampleConfig from "../../config/homed.example.yaml" with { type: "text" };
import { DEFAULT_PERSONA_TEXT } from "../agent/personal.ts";
import { taskCommand } from "./commands.ts";

/** Options of {@link runInit}. */
export interface InitOptions {
  /** The config file to write. */
  configPath: string;
  /** The folder holding `personal.md`, `knowledge/`, `plugins/` and `data/` (the checkout). */
  home: string;
  force: boolean;
}

/** What init did, one line each. */
export type InitReport = string[];

function pathFrom(configDir: string, target: string): string {
  const rel = relative(configDir, target);
  return rel.startsWith("..") && rel.split("/").filter((part) => part === "..").length > 1 ? target : rel || ".";
}

/**
 * Renders the starter config for a file at `configPath`.
 *
 * @example
 * ```ts
 * renderStarterConfig("/srv/homed/config/homed.yaml", "/srv/homed"); // paths like "../personal.md"
 * ```
 */
export function renderStarterConfig(configPath: string, home: string): string {
  const dir = dirname(resolve(configPath));
  const at = (name: string) => JSON.stringify(pathFrom(dir, join(resolve(home), name)));
  return exampleConfig
    .replace('data_dir: "../data"', `data_dir: ${at("data")}`)
    .replace('personal: "../personal.md"', `personal: ${at("personal.md")}`)
    .replace('knowledge: "../knowledge"', `knowledge: ${at("knowledge")}`)
    .replace('plugins: "../plugins"', `plugins: ${at("plugins")}`);
}

function exists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * Writes the files. Throws `RangeError` naming the file when it exists and `force` is off.
 *
 * @example
 * ```ts
 * await runInit({ configPath: "config/homed.yaml", home: Deno.cwd(), force: false });
 * ```
 */
export async function runInit(options: InitOptions): Promise<InitReport> {
  const report: InitReport = [];
  const configPath = resolve(options.configPath);
  if (exists(configPath) && !options.force) {
    throw new RangeError(`${configPath} already exists; pass --force to overwrite it`);
  }
  await Deno.mkdir(dirname(configPath), { recursive: true });
  await Deno.writeTextFile(configPath, renderStarterConfig(configPath, options.home));
  report.push(`wrote ${configPath}`);
  const persona = join(resolve(options.home), "personal.md");
  if (!exists(persona)) {
    await Deno.writeTextFile(persona, DEFAULT_PERSONA_TEXT);
    report.push(`wrote ${persona}`);
  } else {
    report.push(`kept ${persona}`);
  }
  const named = configPath === resolve(options.home, "config/homed.yaml") ? undefined : configPath;
  report.push(
    "",
    "Next steps:",
    `  1. Give homed your LLM key: export DEEPSEEK_API_KEY=sk-…   (llm.api_key in ${configPath} reads it;`,
    "     for another OpenAI-compatible server, set llm.base_url and llm.model there)",
    `  2. Check config, rights and the LLM:  ${taskCommand("doctor", named)}`,
    `  3. Start the butler:                 ${taskCommand("start", named)}`,
    `  4. Talk to it:                       ${taskCommand("chat", named)}`,
  );
  return report;
}
