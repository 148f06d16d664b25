/**
 * The `backup` and `restore` commands: where the archive goes or comes from (a file — `FILE` or `--file FILE` — `-`
 * for standard output or input, or by default `data/backups/homed-<time>.tar.gz`), a refusal to restore under a
 * running daemon, and what to print. Run by `deno task backup|restore FILE`, whose flags are computed before the
 * archive is known, the command runs again as a child with exactly the rights for the archive named (those of
 * `homed flags --mode restore --file FILE`), so an archive in another folder (`/mnt/usb`) works by that route too.
 *
 * @module
 */

import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { LoadedConfig } from "../config/load.ts";
import { createBackup } from "../backup/backup.ts";
import { restoreBackup } from "../backup/restore.ts";
import { latestBackup } from "../backup/auto_backup.ts";
import { commandFlags } from "../rights/command_flags.ts";
import { requiredPermissions } from "../rights/permissions.ts";
import { runsOnDeno } from "../config/runs_on_deno.ts";
import { VERSION } from "../version.ts";
import type { CommandLine } from "./command_line.ts";
import { loadCommandConfig } from "./command_config.ts";
import { taskCommand } from "./commands.ts";
import { print, reportFailure } from "./output.ts";
import { checkRights } from "./rights_check.ts";
import { runningHomed } from "./homed_probe.ts";
import { UsageError } from "./usage_error.ts";

/** Options of {@link runBackup} and {@link runRestore}. */
export interface ArchiveCommandOptions {
  loaded: LoadedConfig;
  /** The archive: a path, `-` (stdout / stdin), or undefined for the default place. */
  file: string | undefined;
  now?: () => number;
}

function sizeText(bytes: number): string {
  return bytes < 1024 * 1024 ? `${(bytes / 1024).toFixed(1)} KiB` : `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

/** A line per file the backup left out, with why. */
function notBackedUp(skipped: string[]): string[] {
  return skipped.map((line) => `Not backed up: ${line}`);
}

/**
 * Writes a backup; resolves to what to print on stdout (nothing when the archive itself goes there).
 *
 * @example
 * ```ts
 * import { loadConfig } from "../config/load.ts";
 *
 * const loaded = await loadConfig({ flag: "/etc/homed/homed.yaml", readEnv: (name) => Deno.env.get(name), cwd: "/" });
 * console.log(await runBackup({ loaded, file: "/mnt/usb/homed.tar.gz" }));
 * ```
 */
export async function runBackup(options: ArchiveCommandOptions): Promise<string> {
  const now = options.now ?? Date.now;
  const { loaded } = options;
  if (options.file === "-") {
    // Standard output stays open: closing it (what piping into `Deno.stdout.writable` does) would leave the command
    // nothing to print its result on, and it would fail after writing a whole archive.
    const out = new WritableStream<Uint8Array>({
      async write(chunk) {
        for (let at = 0; at < chunk.length;) at += await Deno.stdout.write(chunk.subarray(at));
      },
    });
    const summary = await createBackup({ loaded, out, version: VERSION, now });
    const done = `Backed up ${summary.files} files (${sizeText(summary.bytes)}) to standard output.`;
    console.error([...notBackedUp(summary.skipped), done].join("\n"));
    return "";
  }
  const stamp = new Date(now()).toISOString().replace(/[:.]/g, "-").replace(/Z$/, "");
  const target = options.file === undefined
    ? join(loaded.config.daemon.data_dir, "backups", `homed-${stamp}.tar.gz`)
    : resolve(options.file);
  if (options.file === undefined) await Deno.mkdir(join(loaded.config.daemon.data_dir, "backups"), { recursive: true });
  // Written beside the target and renamed when complete: a crash never leaves a half archive under the real name.
  const partial = `${target}.partial`;
  const file = await Deno.open(partial, { write: true, create: true, truncate: true, mode: 0o600 });
  try {
    const summary = await createBackup({ loaded, out: file.writable, version: VERSION, now });
    await Deno.rename(partial, target);
    const size = (await Deno.stat(target)).size;
    const parts = Object.entries(summary.perRoot).map(([root, count]) => `${root} ${count}`).join(", ");
    return notBackedUp(summary.skipped).map((line) => `${line}\n`).join("") +
      `Backed up ${summary.files} files (${parts || "nothing yet"}; ${sizeText(summary.bytes)}) to ${target} ` +
      `(${sizeText(size)}, mode 0600: it holds the config and memory).\nRestore with (homed stopped): ` +
      `${taskCommand("restore", loaded.location.path)} ${target}\n`;
  } catch (error) {
    await Deno.remove(partial).catch(() => {});
    throw error;
  }
}

/**
 * Restores a backup; resolves to what to print. Refuses while homed runs on the config's address.
 *
 * @example
 * ```ts
 * import { loadConfig } from "../config/load.ts";
 *
 * const loaded = await loadConfig({ flag: "/etc/homed/homed.yaml", readEnv: (name) => Deno.env.get(name), cwd: "/" });
 * console.log(await runRestore({ loaded, file: "/mnt/usb/homed.tar.gz" }));
 * ```
 */
export async function runRestore(options: ArchiveCommandOptions): Promise<string> {
  const { loaded } = options;
  if (options.file === undefined) {
    throw new UsageError("restore: name the archive (homed restore FILE, or - to read standard input)");
  }
  const running = await runningHomed(loaded);
  if (running) {
    throw new Error(`homed is running at ${running}; stop it first (systemctl stop homed), then restore`);
  }
  const label = options.file === "-" ? "standard input" : resolve(options.file);
  let input: ReadableStream<Uint8Array>;
  if (options.file === "-") input = Deno.stdin.readable;
  else {
    try {
      input = (await Deno.open(label)).readable;
    } catch (error) {
      throw new Error(`cannot open ${label}: ${(error as Error).message}`, { cause: error });
    }
  }
  const summary = await restoreBackup({ loaded, input, label, now: options.now ?? Date.now });
  return [
    `Restored ${summary.files} files from ${label} (backup of ${summary.created}).`,
    `What was there before is in ${summary.previous}; delete it once homed runs well.`,
    ...summary.skipped.map((line) => `Not restored: ${line}`),
    "Indexes are rebuilt on the next start. Start homed again (systemctl start homed).",
    "",
  ].join("\n");
}

/**
 * The archive a command line names: `FILE` (or `-`) after the command, or `--file FILE`; both must agree.
 *
 * @example
 * ```ts
 * import { parseCommandLine } from "./command_line.ts";
 *
 * archiveOf(parseCommandLine(["restore", "--file", "/mnt/usb/homed.tar.gz"]), "restore"); // "/mnt/usb/homed.tar.gz"
 * archiveOf(parseCommandLine(["backup"]), "backup"); // undefined: data/backups/
 * ```
 */
export function archiveOf(line: CommandLine, command: "backup" | "restore"): string | undefined {
  const named = line.action === "" ? undefined : line.action;
  const flag = line.options.file;
  if (named !== undefined && flag !== undefined && resolve(named) !== resolve(flag)) {
    throw new UsageError(
      `${command}: two archives named (${JSON.stringify(named)} and --file ${JSON.stringify(flag)}); name one`,
    );
  }
  return named ?? flag;
}

/**
 * `restore --latest`: the newest verified automatic backup in `backup.dir` (its list, `homed-backups.json`), which
 * is then restored as if named. Refused with an archive named too, or for `backup`.
 *
 * @example
 * ```ts
 * import { loadConfig } from "../config/load.ts";
 *
 * const loaded = await loadConfig({ flag: "/etc/homed/homed.yaml", readEnv: (name) => Deno.env.get(name), cwd: "/" });
 * await latestArchive(loaded, "restore", undefined); // "/var/lib/homed/backups/homed-2026-12-01T19-30-00-000Z.tar.gz"
 * ```
 */
export async function latestArchive(
  loaded: LoadedConfig,
  command: "backup" | "restore",
  named: string | undefined,
): Promise<string> {
  if (command !== "restore") throw new UsageError("backup: --latest is for restore (homed restore --latest)");
  if (named !== undefined) {
    throw new UsageError(`restore: an archive (${JSON.stringify(named)}) and --latest both named; name one`);
  }
  const { dir } = loaded.config.backup;
  const latest = await latestBackup(dir);
  if (latest === undefined) {
    throw new Error(`no verified automatic backup in ${dir} (backup.dir); name an archive: homed restore FILE`);
  }
  return latest;
}

/**
 * When this process may start its own Deno (`deno task backup|restore`, whose flags are computed before the archive
 * is known): runs the command again as a child with exactly the rights for `file` — what `homed flags --mode <command>
 * --file <file>` prints — and resolves to its exit code. The archive is then read (or written) only by a process that
 * may start nothing. `undefined` when this process may not (its flags already name the archive, or it is compiled).
 */
async function againWithRights(
  line: CommandLine,
  loaded: LoadedConfig,
  command: "backup" | "restore",
  file: string,
): Promise<number | undefined> {
  const program = Deno.execPath();
  if (!runsOnDeno(program) || Deno.permissions.querySync({ name: "run", command: program }).state !== "granted") {
    return undefined;
  }
  const archive = file === "-" ? file : resolve(file);
  const tail = [
    ...(line.layout === "standard" ? ["--standard-layout"] : []),
    command,
    archive,
    ...(line.options.config !== undefined ? ["--config", line.options.config] : []),
  ];
  const flags = commandFlags(loaded, command, undefined, { file: archive });
  const child = new Deno.Command(program, {
    args: ["run", ...flags, fileURLToPath(Deno.mainModule), ...tail],
    stdin: "inherit",
    stdout: "inherit",
    stderr: "inherit",
  }).spawn();
  return (await child.status).code;
}

/**
 * `homed backup [FILE|-|--file FILE]` and `homed restore FILE|-|--file FILE`: runs again with the rights for the
 * archive when started by the task ({@link againWithRights}); otherwise checks homed's rights for the archive named,
 * then runs the command and prints what it says.
 *
 * @example
 * ```ts
 * import { parseCommandLine } from "./command_line.ts";
 *
 * await archiveCli(parseCommandLine(["backup", "/mnt/usb/homed.tar.gz"]), "backup");
 * ```
 */
export async function archiveCli(line: CommandLine, command: "backup" | "restore"): Promise<void> {
  const { loaded, denied } = await loadCommandConfig(line.options.config, line.layout);
  const file = await reportFailure(`${command}: `, async () => {
    const named = archiveOf(line, command);
    return line.options.latest ? await latestArchive(loaded, command, named) : named;
  });
  if (file !== undefined) {
    const code = await againWithRights(line, loaded, command, file);
    if (code !== undefined) return Deno.exit(code);
  }
  checkRights(loaded, command, denied, requiredPermissions(loaded, command, file === undefined ? {} : { file }));
  await reportFailure(`${command}: `, async () => {
    print(command === "backup" ? await runBackup({ loaded, file }) : await runRestore({ loaded, file }));
  });
}
