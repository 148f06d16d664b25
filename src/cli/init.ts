/**
 * `homed init`: writes a starter config (every key documented) pointing at this checkout's persona, knowledge and
 * plugins, with the answers to its questions (the LLM, its key, the LAN, the household's time zone), and the default
 * persona if there is none yet.
 *
 * @module
 */

import { dirname, join, relative, resolve } from "node:path";
import exampleConfig from "../../config/homed.example.yaml" with { type: "text" };
import { DEFAULT_PERSONA_TEXT } from "../agent/personal.ts";
import { envFileLine, envFilePath } from "../config/env_file.ts";
import { initPermissions, missingPermissions } from "../rights/permissions.ts";
import { pathExists } from "../fs/path_exists.ts";
import type { CommandLine, InitTarget } from "./command_line.ts";
import { taskCommand } from "./commands.ts";
import { doctorCommand } from "./doctor_command.ts";
import { applyAnswers, envEntries, gatherAnswers, type InitAnswers, randomToken } from "./init_answers.ts";
import { print, reportFailure } from "./output.ts";
import { reportMissing } from "./rights_check.ts";
import { terminalAsk } from "./terminal_ask.ts";

/** Options of {@link runInit}. */
export interface InitOptions {
  /** The config file to write. */
  configPath: string;
  /** The folder holding `personal.md`, `knowledge/`, `plugins/` and `data/` (the checkout). */
  home: string;
  force: boolean;
  /** What the questions found; without them the plain starter config (DeepSeek, loopback) is written. */
  answers?: InitAnswers;
  /** Makes a token (tests pass a fixed one). */
  token?: () => string;
  /** Runs `homed doctor` on the written config; resolves to whether it passed and what it printed. */
  doctor?: (configPath: string) => Promise<{ ok: boolean; output: string }>;
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
  if (pathExists(configPath) && !options.force) {
    throw new RangeError(`${configPath} already exists; pass --force to overwrite it`);
  }
  await Deno.mkdir(dirname(configPath), { recursive: true });
  const starter = renderStarterConfig(configPath, options.home);
  await Deno.writeTextFile(configPath, options.answers ? applyAnswers(starter, options.answers) : starter);
  report.push(`wrote ${configPath}`);
  const persona = join(resolve(options.home), "personal.md");
  if (!pathExists(persona)) {
    await Deno.writeTextFile(persona, DEFAULT_PERSONA_TEXT);
    report.push(`wrote ${persona}`);
  } else {
    report.push(`kept ${persona}`);
  }
  const entries = options.answers ? envEntries(options.answers, options.token ?? (() => randomToken())) : {};
  const envFile = envFilePath(configPath);
  if (Object.keys(entries).length) {
    await writeEnvFile(envFile, entries);
    report.push(`wrote ${envFile} (mode 0600) with ${Object.keys(entries).join(", ")} — values not shown`);
  }
  const named = configPath === resolve(options.home, "config/homed.yaml") ? undefined : configPath;
  const answers = options.answers;
  let doctorOk = false;
  if (options.doctor) {
    const result = await options.doctor(configPath);
    doctorOk = result.ok;
    report.push("", `Doctor (${taskCommand("doctor", named)}):`, result.output.trimEnd());
  }
  report.push("", "Next steps:");
  // Each step: its first line, then lines that continue it.
  const steps: string[][] = [];
  if (!answers) {
    steps.push([
      `Give homed your LLM key: export DEEPSEEK_API_KEY=sk-…   (llm.api_key in ${configPath} reads it;`,
      "for another OpenAI-compatible server, set llm.base_url and llm.model there)",
    ]);
  } else if (!answers.key && answers.provider === "deepseek") {
    steps.push([`Put your DeepSeek key in ${envFile}: DEEPSEEK_API_KEY=sk-…  (keep it mode 0600)`]);
  }
  if (!doctorOk) steps.push([`Check config, rights and the LLM:  ${taskCommand("doctor", named)}`]);
  steps.push(
    [`Start the butler:                 ${taskCommand("start", named)}`],
    [`Talk to it:                       ${taskCommand("chat", named)}`],
    [`Keep it running (systemd):        sudo ${taskCommand("service", named)} install`],
  );
  if (answers?.lan) {
    steps.push([
      `From the LAN, send "Authorization: Bearer <HOMED_API_TOKEN from ${envFile}>";`,
      "give NapCat/Lagrange the ONEBOT_ACCESS_TOKEN from the same file (README: QQ)",
    ]);
  }
  steps.forEach(([first, ...more], i) => report.push(`  ${i + 1}. ${first}`, ...more.map((line) => `     ${line}`)));
  return report;
}

/** Writes `entries` into the env file (mode 0600), keeping lines of other variables already there. */
async function writeEnvFile(path: string, entries: Record<string, string>): Promise<void> {
  let kept: string[] = [];
  try {
    kept = (await Deno.readTextFile(path)).split("\n").filter((line) => {
      const name = /^\s*([A-Za-z_][A-Za-z0-9_]*)=/.exec(line)?.[1];
      return line.trim() !== "" && !(name && name in entries);
    });
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  const lines = [...kept, ...Object.entries(entries).map(([name, value]) => envFileLine(name, value))];
  await Deno.writeTextFile(path, `${lines.join("\n")}\n`, { mode: 0o600 });
  await Deno.chmod(path, 0o600);
}

/**
 * `homed init`: checks it may write where the config goes, asks what the flags did not say (at a terminal, or line
 * by line from stdin), writes the files and, if it may start a process, runs doctor on the result.
 *
 * @example
 * ```ts
 * import { parseCommandLine } from "./command_line.ts";
 *
 * await initCli(parseCommandLine(["init", "--provider", "ollama"]), (flag) => flag ?? "/srv/homed/config/homed.yaml");
 * ```
 */
export async function initCli(line: CommandLine, initTarget: InitTarget): Promise<void> {
  const { options, layout } = line;
  const configPath = initTarget(options.config);
  // HOMED_CONFIG may be unreadable (then it counts as unset); the files are what init must be able to write.
  const initRights = initPermissions(configPath, Deno.cwd());
  reportMissing(missingPermissions({ ...initRights, env: [], run: [] }), "init", []);
  await reportFailure("", async () => {
    const { ask, interactive } = terminalAsk();
    const flags = {
      provider: options.provider,
      model: options.model,
      lan: options.lan,
      port: options.port,
      timezone: options.timezone,
    };
    const given = Object.values(flags).some((value) => value !== undefined);
    if (!options.force && pathExists(configPath)) {
      throw new Error(`${configPath} already exists; pass --force to overwrite it`);
    }
    // No terminal, no flags and nothing piped in (the first question meets the end of input): the plain starter
    // config, as a script that asks nothing expects.
    let asked = 0, silent = false;
    const answers = await gatherAnswers(flags, async (question, askOptions) => {
      const answer = await ask(question, askOptions);
      if (asked++ === 0 && answer === undefined && !interactive && !given) silent = true;
      return answer;
    }, { interactive });
    const canRun = missingPermissions({ read: [], write: [], net: [], env: [], run: initRights.run ?? [] })
      .length === 0;
    const report = await runInit({
      configPath,
      home: Deno.cwd(),
      force: options.force ?? false,
      ...(silent ? {} : { answers }),
      ...(canRun ? { doctor: (path: string) => doctorCommand(path, layout) } : {}),
    });
    print(`${report.join("\n")}\n`);
  });
}
