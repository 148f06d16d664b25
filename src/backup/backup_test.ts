import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { join } from "node:path";
import { stringify } from "yaml";
import type { LoadedConfig } from "../config/load.ts";
import { archiveOf, loadHome, readable } from "../../tests/support/backup_home.ts";
import { ArchiveError, restoreBackup } from "./restore.ts";
import { readTar, TAR_END, tarBlocks } from "./tar.ts";

/** A home in a temp folder: config, persona, knowledge, plugins, and a data dir with a database and a journal. */
async function home(): Promise<{ dir: string; loaded: LoadedConfig }> {
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-backup-" });
  const configPath = join(dir, "homed.yaml");
  await Deno.writeTextFile(configPath, stringify({ daemon: { listen_addr: "127.0.0.1:0" } }));
  await Deno.writeTextFile(join(dir, "personal.md"), "I am the butler.\n");
  await Deno.mkdir(join(dir, "knowledge", "tea"), { recursive: true });
  await Deno.writeTextFile(join(dir, "knowledge", "tea", "content.md"), "# Tea\nGreen, 80 °C.\n");
  await Deno.mkdir(join(dir, "plugins"));
  await Deno.mkdir(join(dir, "data", "memory"), { recursive: true });
  await Deno.mkdir(join(dir, "data", "vector", "knowledge"), { recursive: true });
  await Deno.writeTextFile(join(dir, "data", "vector", "knowledge", "index.hvs"), "derived");
  const db = new DatabaseSync(join(dir, "data", "memory", "memory.db"));
  db.exec("PRAGMA journal_mode = WAL; CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)");
  db.prepare("INSERT INTO notes (text) VALUES (?)").run("spare key under the flowerpot");
  db.close();
  // The last line is being appended: it is not whole yet.
  await Deno.writeTextFile(join(dir, "data", "memory", "candidates.jsonl"), '{"n":1}\n{"n":2}\n{"n":');
  return { dir, loaded: await loadHome(dir) };
}

async function gzip(parts: Uint8Array[]): Promise<Uint8Array> {
  const stream = new Blob(parts as BlobPart[]).stream().pipeThrough(new CompressionStream("gzip"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

Deno.test("backup and restore: every part comes back byte for byte, indexes are left to rebuild, the old is kept", async () => {
  const { dir, loaded } = await home();
  try {
    const bytes = (await archiveOf(loaded)).bytes;
    // Change everything after the backup: the restore must bring the backed-up state back.
    await Deno.writeTextFile(join(dir, "knowledge", "tea", "content.md"), "changed");
    await Deno.writeTextFile(join(dir, "knowledge", "new.md"), "learned later");
    await Deno.writeTextFile(join(dir, "personal.md"), "changed persona");
    await Deno.remove(join(dir, "data", "memory", "memory.db"));
    const summary = await restoreBackup({ loaded, input: readable(bytes), label: "b.tar.gz", now: () => 1 });
    assert.equal(summary.files, 5, "memory.db, candidates.jsonl, content.md, homed.yaml, personal.md");
    assert.equal(await Deno.readTextFile(join(dir, "knowledge", "tea", "content.md")), "# Tea\nGreen, 80 °C.\n");
    await assert.rejects(Deno.stat(join(dir, "knowledge", "new.md")), Deno.errors.NotFound);
    assert.equal(await Deno.readTextFile(join(dir, "personal.md")), "I am the butler.\n");
    assert.equal(
      await Deno.readTextFile(join(dir, "data", "memory", "candidates.jsonl")),
      '{"n":1}\n{"n":2}\n',
      "the journal is cut at its last whole line",
    );
    const db = new DatabaseSync(join(dir, "data", "memory", "memory.db"), { readOnly: true });
    assert.deepEqual({ ...db.prepare("SELECT text FROM notes").get() }, { text: "spare key under the flowerpot" });
    db.close();
    await assert.rejects(Deno.stat(join(dir, "data", "vector")), Deno.errors.NotFound, "indexes rebuild on start");
    // A later backup leaves out what this restore replaced.
    const names: string[] = [];
    const again = new Blob([(await archiveOf(loaded)).bytes as BlobPart]).stream().pipeThrough(
      new DecompressionStream("gzip"),
    );
    for await (const entry of readTar(again)) names.push(entry.path);
    assert.ok(names.includes("data/memory/memory.db"));
    assert.ok(!names.some((name) => name.includes(".before-restore-")), names.join("\n"));
    assert.equal(await Deno.readTextFile(join(summary.previous, "knowledge", "new.md")), "learned later");
    assert.equal(await Deno.readTextFile(join(summary.previous, "config", "personal.md")), "changed persona");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("restore refuses a foreign, damaged, truncated or path-escaping archive by name, and changes nothing", async () => {
  const { dir, loaded } = await home();
  try {
    const good = (await archiveOf(loaded)).bytes;
    const before = await Deno.readTextFile(join(dir, "knowledge", "tea", "content.md"));
    const text = (value: string) => new TextEncoder().encode(value);
    const manifest = tarBlocks({
      path: "homed-backup.json",
      type: "file",
      mode: 0o644,
      mtime: 0,
      data: text('{"format":"homed-backup","version":1,"roots":["knowledge"]}'),
    });
    const cases: Array<[string, Uint8Array, RegExp]> = [
      ["plain text", text("daemon: {}\n"), /x is not a readable homed backup \(gzip: .*\); is it truncated/],
      ["truncated", good.slice(0, Math.floor(good.length / 2)), /x is not a readable homed backup|x: .*truncated/],
      [
        "foreign tar",
        await gzip([
          ...tarBlocks({ path: "etc/passwd", type: "file", mode: 0o644, mtime: 0, data: text("root") }),
          TAR_END,
        ]),
        /x is not a homed backup: its first member is "etc\/passwd", not homed-backup\.json/,
      ],
      [
        "newer format",
        await gzip([
          ...tarBlocks({
            path: "homed-backup.json",
            type: "file",
            mode: 0o644,
            mtime: 0,
            data: text('{"format":"homed-backup","version":9}'),
          }),
          TAR_END,
        ]),
        /x: backup version 9; this homed reads up to 1/,
      ],
      [
        "escaping path",
        await gzip([
          ...manifest,
          ...tarBlocks({ path: "knowledge/../../etc/cron.d/x", type: "file", mode: 0o644, mtime: 0, data: text("*") }),
          TAR_END,
        ]),
        /member "knowledge\/\.\.\/\.\.\/etc\/cron\.d\/x" has an unsafe path/,
      ],
      [
        "unknown part",
        await gzip([
          ...manifest,
          ...tarBlocks({ path: "home/.ssh/authorized_keys", type: "file", mode: 0o644, mtime: 0, data: text("k") }),
          TAR_END,
        ]),
        /member "home\/\.ssh\/authorized_keys" is outside the parts a backup holds/,
      ],
      [
        "checksum mismatch",
        await gzip([
          ...manifest,
          ...tarBlocks({ path: "knowledge/a.md", type: "file", mode: 0o644, mtime: 0, data: text("tampered") }),
          ...tarBlocks({
            path: "homed-backup.sha256",
            type: "file",
            mode: 0o644,
            mtime: 0,
            data: text(`${"0".repeat(64)}  knowledge/a.md\n`),
          }),
          TAR_END,
        ]),
        /x: "knowledge\/a\.md" does not match its checksum: the archive is damaged; nothing was restored/,
      ],
      [
        "a file where a folder must be",
        await gzip([
          ...manifest,
          ...tarBlocks({ path: "knowledge/a", type: "file", mode: 0o644, mtime: 0, data: text("a file") }),
          ...tarBlocks({ path: "knowledge/a/b.md", type: "file", mode: 0o644, mtime: 0, data: text("under it") }),
          TAR_END,
        ]),
        /x: member "knowledge\/a\/b\.md" is inside "knowledge\/a", which the archive holds as a file; nothing was restored/,
      ],
      [
        "no checksums",
        await gzip([...manifest, TAR_END]),
        /x has no homed-backup\.sha256 at its end: the archive is truncated or damaged/,
      ],
    ];
    for (const [name, bytes, pattern] of cases) {
      await assert.rejects(
        restoreBackup({ loaded, input: readable(bytes), label: "x", now: () => 1 }),
        (error) => error instanceof ArchiveError && pattern.test(error.message),
        name,
      );
    }
    assert.equal(await Deno.readTextFile(join(dir, "knowledge", "tea", "content.md")), before);
    const left = (await Array.fromAsync(Deno.readDir(join(dir, "data")))).map((entry) => entry.name).sort();
    assert.deepEqual(left, ["memory", "vector"], "no staging folder and nothing moved");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("restore refuses a database that fails its integrity check, naming it", async () => {
  const { dir, loaded } = await home();
  try {
    // A database whose pages were damaged after the backup listed its checksum (so only the integrity check sees it).
    const db = new DatabaseSync(join(dir, "data", "memory", "memory.db"));
    for (let i = 0; i < 2000; i++) db.prepare("INSERT INTO notes (text) VALUES (?)").run(`note ${i} `.repeat(20));
    db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    db.close();
    const file = join(dir, "data", "memory", "memory.db");
    const raw = await Deno.readFile(file);
    raw.fill(0x55, 8192, 8192 + 4096);
    await Deno.writeFile(file, raw);
    await assert.rejects(
      restoreBackup({ loaded, input: readable((await archiveOf(loaded)).bytes), label: "x", now: () => 1 }),
      (error) =>
        error instanceof ArchiveError &&
        /x: database data\/memory\/memory\.db fails its integrity check/.test(error.message),
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("backups taken while homed holds its database open keep at most one descriptor of it, reused by the next", async () => {
  const { dir, loaded } = await home();
  const path = join(dir, "data", "memory", "memory.db");
  // homed's own connection, as during an automatic backup: SQLite cannot close the backup connection's descriptor
  // while this one holds locks on the same file (POSIX locks belong to the process), so it keeps it for the next open.
  const live = new DatabaseSync(path);
  live.prepare("SELECT COUNT(*) FROM notes").get();
  // Counted by a shell (the tests may run sh, not read /proc): every descriptor, and those of memory.db.
  const descriptors = async () => {
    const script = `ls -l /proc/${Deno.pid}/fd | wc -l; ls -l /proc/${Deno.pid}/fd | grep -c -- '-> ${path}$'`;
    const out = await new Deno.Command("sh", { args: ["-c", script], stdout: "piped" }).output();
    const [all, ofDb] = new TextDecoder().decode(out.stdout).trim().split("\n").map(Number);
    return { all: all!, ofDb: ofDb! };
  };
  try {
    assert.equal((await descriptors()).ofDb, 1);
    // Two first: Deno's own descriptors for file work off the main thread are made on first use.
    for (let n = 0; n < 2; n++) await archiveOf(loaded);
    const settled = await descriptors();
    assert.ok(settled.ofDb <= 2, `homed's connection and at most one kept for the next backup: ${settled.ofDb}`);
    for (let n = 0; n < 4; n++) {
      live.prepare("INSERT INTO notes (text) VALUES (?)").run(`note ${n}`);
      await archiveOf(loaded);
    }
    assert.deepEqual(await descriptors(), settled, "four more backups keep no more descriptors");
  } finally {
    live.close();
    await Deno.remove(dir, { recursive: true });
  }
});
