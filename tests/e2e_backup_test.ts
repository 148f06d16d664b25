/**
 * End to end: `homed backup` while the daemon writes memory, then `homed restore` after more writes. The restored
 * store passes SQLite's integrity check, its journal and documents are a prefix of everything written that holds
 * every write already on disk when the backup began, and homed starts on it with its indexes rebuilt.
 */

import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { join } from "node:path";
import { DEFAULT_CONTRACT, TEST_KEY } from "./support/contract.ts";
import { FakeLlm } from "./support/fake_llm.ts";
import { childEnv, deno, postJson, REPO, startHomed, workspace } from "./support/homed_process.ts";
import { readTar } from "../src/backup/tar.ts";
import { teardown } from "./support/teardown.ts";

async function journalLines(path: string): Promise<string[]> {
  try {
    const text = await Deno.readTextFile(path);
    return text.slice(0, text.lastIndexOf("\n") + 1).split("\n").filter(Boolean);
  } catch {
    return [];
  }
}

function documentIds(path: string): string[] {
  const db = new DatabaseSync(path, { readOnly: true });
  try {
    return (db.prepare("SELECT id FROM documents ORDER BY rowid").all() as Array<{ id: string }>).map((row) => row.id);
  } finally {
    db.close();
  }
}

/** Flags `homed flags --mode <mode> --file <file>` prints for `env`'s config. */
async function flagsFor(mode: string, file: string, env: Record<string, string>): Promise<string[]> {
  const result = await deno([
    "run",
    "--no-prompt",
    "--allow-read",
    "--allow-env",
    "src/main.ts",
    "flags",
    "--mode",
    mode,
    "--file",
    file,
  ], { env });
  assert.equal(result.code, 0, result.stderr);
  return result.stdout.trim().split(" ");
}

/** `homed backup|restore <file>` with the flags `homed flags --mode <command> --file <file>` prints. */
async function archiveCommand(command: "backup" | "restore", file: string, env: Record<string, string>) {
  return await deno(["run", ...await flagsFor(command, file, env), "src/main.ts", command, file], { env });
}

Deno.test("a backup taken while homed writes restores to a sound prefix holding every write made before it", async () => {
  const fake = FakeLlm.start(DEFAULT_CONTRACT);
  const ws = await workspace({
    llm: { base_url: fake.baseUrl, api_key: TEST_KEY },
    memory: { context_size: 4, distill_interval: "7d" },
  });
  const journal = join(ws.dir, "data", "memory", "candidates.jsonl");
  const dbPath = join(ws.dir, "data", "memory", "memory.db");
  const archive = join(ws.dir, "out", "homed.tar.gz");
  await Deno.mkdir(join(ws.dir, "out"));
  let homed = await startHomed(ws);
  let writing = true;
  let sent = 0;
  const writer = (async () => {
    while (writing) {
      fake.enqueue({ reply: `Noted ${sent}.` });
      const answer = await postJson(`${homed.url}/api/chat`, { text: `Remember item ${sent}` });
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      sent++;
    }
  })();
  try {
    while ((await journalLines(journal)).length < 20) await new Promise((resolve) => setTimeout(resolve, 20));
    const onDisk = await journalLines(journal);
    const backup = await archiveCommand("backup", archive, ws.env);
    assert.equal(backup.code, 0, backup.stderr);
    assert.match(backup.stdout, /Backed up \d+ files \(data \d+, knowledge 3, config\/homed\.yaml 1\b/);
    const busy = await archiveCommand("restore", archive, ws.env);
    assert.equal(busy.code, 1);
    assert.match(busy.stderr, /restore: homed is running at http:\/\/127\.0\.0\.1:\d+; stop it first/);
    const sentAtBackupEnd = sent;
    while (sent < sentAtBackupEnd + 5) await new Promise((resolve) => setTimeout(resolve, 20));
    writing = false;
    await writer;
    assert.equal(await homed.stop({ keep: true }), 0, homed.stderr());
    const finalLines = await journalLines(journal);
    const finalDocs = documentIds(dbPath);
    assert.ok(finalDocs.length > 0, "exchanges left the 4-entry context and became documents");

    const missing = join(ws.dir, "out", "missing.tar.gz");
    const refused = await archiveCommand("restore", missing, ws.env);
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /cannot open .*missing\.tar\.gz/);

    const restore = await archiveCommand("restore", archive, ws.env);
    assert.equal(restore.code, 0, restore.stderr);
    assert.match(restore.stdout, /Restored \d+ files from .*homed\.tar\.gz/);

    const db = new DatabaseSync(dbPath, { readOnly: true });
    assert.equal((db.prepare("PRAGMA integrity_check").get() as { integrity_check: string }).integrity_check, "ok");
    db.close();
    const restoredLines = await journalLines(journal);
    assert.deepEqual(restoredLines, finalLines.slice(0, restoredLines.length), "the journal is a prefix of the writes");
    assert.ok(restoredLines.length >= onDisk.length, `${restoredLines.length} ≥ ${onDisk.length} lines on disk before`);
    assert.ok(restoredLines.length < finalLines.length, "the writes after the backup are not in it");
    const restoredDocs = documentIds(dbPath);
    assert.ok(restoredDocs.length > 0, "documents written before the backup are in it");
    assert.deepEqual(restoredDocs, finalDocs.slice(0, restoredDocs.length), "the documents are a prefix too");

    homed = await startHomed(ws);
    const status = await (await fetch(`${homed.url}/api/status`)).json();
    for (let i = 0; i < 100 && status.services?.memory?.stores !== "open"; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      Object.assign(status, await (await fetch(`${homed.url}/api/status`)).json());
    }
    assert.equal(status.services.memory.documents, restoredDocs.length, JSON.stringify(status.services.memory));
  } finally {
    writing = false;
    await teardown(
      () => writer.catch(() => {}),
      () => homed.stop(),
      () => fake.close(),
      () => Deno.remove(ws.dir, { recursive: true }).catch(() => {}),
    );
  }
});

/** `homed backup|restore -` with the flags `homed flags --mode <command> --file -` prints; stdout kept as bytes. */
async function streamCommand(command: "backup" | "restore", env: Record<string, string>, stdin?: Uint8Array) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", ...await flagsFor(command, "-", env), "src/main.ts", command, "-"],
    cwd: REPO,
    env: childEnv(env),
    clearEnv: true,
    stdin: stdin ? "piped" : "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  if (stdin) {
    const writer = child.stdin.getWriter();
    await writer.write(stdin as Uint8Array<ArrayBuffer>);
    await writer.close();
  }
  const output = await child.output();
  return { code: output.code, stdout: output.stdout, stderr: new TextDecoder().decode(output.stderr) };
}

Deno.test("homed backup - writes the whole archive to standard output and exits 0; restore - reads it back", async () => {
  const ws = await workspace({ llm: { base_url: "http://127.0.0.1:9/v1", api_key: TEST_KEY } });
  try {
    const knowledge = join(ws.dir, "knowledge");
    await Deno.mkdir(join(knowledge, "tea"), { recursive: true });
    await Deno.writeTextFile(join(knowledge, "tea", "content.md"), "# Tea\n");
    await Deno.writeTextFile(join(ws.dir, "outside.txt"), "not homed's");
    await Deno.link(join(ws.dir, "outside.txt"), join(knowledge, "leak.md"));
    const backup = await streamCommand("backup", ws.env);
    assert.equal(backup.code, 0, backup.stderr);
    const leak = join(knowledge, "leak.md").replaceAll("/", "\\/").replaceAll(".", "\\.");
    assert.match(
      backup.stderr,
      new RegExp(
        `^Not backed up: knowledge\\/leak\\.md \\(${leak}\\) has 2 hard links and only 1 is in what a backup holds: ` +
          "left out, since a link could lead the backup to a file elsewhere\n" +
          "Backed up 2 files \\(\\d+\\.\\d KiB\\) to standard output\\.\n$",
      ),
    );
    const names: string[] = [];
    for await (
      const entry of readTar(new Blob([backup.stdout]).stream().pipeThrough(new DecompressionStream("gzip")))
    ) {
      names.push(entry.path);
    }
    assert.deepEqual(names, [
      "homed-backup.json",
      "knowledge/tea/content.md",
      "config/homed.yaml",
      "homed-backup.sha256",
    ]);

    await Deno.writeTextFile(join(knowledge, "tea", "content.md"), "changed");
    const restore = await streamCommand("restore", ws.env, backup.stdout);
    assert.equal(restore.code, 0, restore.stderr);
    assert.match(new TextDecoder().decode(restore.stdout), /^Restored 2 files from standard input/);
    assert.equal(await Deno.readTextFile(join(knowledge, "tea", "content.md")), "# Tea\n");
  } finally {
    await Deno.remove(ws.dir, { recursive: true });
  }
});

/** `deno task backup|restore <args>` as the task runs it: the flags `src/flags.ts <command>` prints, then main.ts. */
async function taskCommand(command: "backup" | "restore", args: string[], env: Record<string, string>) {
  const flags = await deno(["run", "--no-prompt", "--allow-read", "--allow-env", "src/flags.ts", command], { env });
  assert.equal(flags.code, 0, flags.stderr);
  return await deno(["run", ...flags.stdout.trim().split(" "), "src/main.ts", command, ...args], { env });
}

Deno.test("deno task backup and restore with an archive in another folder (/mnt/usb): FILE and --file both work", async () => {
  const ws = await workspace({ llm: { base_url: "http://127.0.0.1:9/v1", api_key: TEST_KEY } });
  const usb = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-usb-" });
  try {
    const note = join(ws.dir, "knowledge", "tea", "content.md");
    await Deno.mkdir(join(ws.dir, "knowledge", "tea"), { recursive: true });
    await Deno.writeTextFile(note, "# Tea\n");
    const archive = join(usb, "homed-2026-01-01.tar.gz");
    // The task's flags are computed before the archive is known: it runs again with the rights for this one.
    const backup = await taskCommand("backup", [archive], ws.env);
    assert.equal(backup.code, 0, backup.stderr);
    assert.match(backup.stdout, new RegExp(`to ${archive.replaceAll(".", "\\.")} \\(`));
    assert.match(backup.stdout, new RegExp(`Restore with \\(homed stopped\\): .*task restore ${archive}\\n$`));

    await Deno.writeTextFile(note, "changed");
    const restore = await taskCommand("restore", ["--file", archive], ws.env);
    assert.equal(restore.code, 0, restore.stderr);
    assert.match(restore.stdout, new RegExp(`^Restored \\d+ files from ${archive.replaceAll(".", "\\.")} `));
    assert.equal(await Deno.readTextFile(note), "# Tea\n");
    await Deno.writeTextFile(note, "changed again");
    const positional = await taskCommand("restore", [archive], ws.env);
    assert.equal(positional.code, 0, positional.stderr);
    assert.equal(await Deno.readTextFile(note), "# Tea\n");

    // What homed flags prints for the archive works as well; two different archives are refused by name.
    const printed = await archiveCommand("restore", archive, ws.env);
    assert.equal(printed.code, 0, printed.stderr);
    const two = await taskCommand("restore", [archive, "--file", join(usb, "other.tar.gz")], ws.env);
    assert.equal(two.code, 2);
    assert.match(
      two.stderr,
      /restore: two archives named \(".*homed-2026-01-01\.tar\.gz" and --file ".*other\.tar\.gz"\)/,
    );
    // Without the right to run again (flags made by hand for no archive), the refusal names the archive's flags.
    const flags = await deno(["run", "--no-prompt", "--allow-read", "--allow-env", "src/flags.ts", "restore"], {
      env: ws.env,
    });
    const narrow = flags.stdout.trim().split(" ").filter((flag) => !flag.startsWith("--allow-run"));
    const refused = await deno(["run", ...narrow, "src/main.ts", "restore", archive], { env: ws.env });
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, new RegExp(`read access to ${archive.replaceAll(".", "\\.")}`));
    assert.match(refused.stderr, /homed flags --mode restore --file ARCHIVE/);
  } finally {
    await Deno.remove(ws.dir, { recursive: true });
    await Deno.remove(usb, { recursive: true });
  }
});
