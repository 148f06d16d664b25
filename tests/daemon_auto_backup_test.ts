/**
 * Issue 38's automatic backups, through a whole daemon in this process on the fake clock: ten simulated days of a
 * twice-daily `backup.schedule` leave exactly what `backup.keep` keeps, each kept archive reads back with every
 * member's sum, `/api/status` lists them, and `homed restore --latest` — the real command line — brings back the
 * household's memory and schedules. A backup taken while a chat turn waits on the model leaves the turn to finish.
 */

import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { join } from "node:path";
import { stringify } from "yaml";
import { parseConfig } from "../src/config/load.ts";
import { startDaemon } from "../src/daemon.ts";
import { readBackupList } from "../src/backup/auto_backup.ts";
import { verifyArchive } from "../src/backup/verify_archive.ts";
import { CHECKSUMS, parseChecksums } from "../src/backup/backup_layout.ts";
import { memberBytes, readTarMembers } from "../src/backup/tar.ts";
import { FakeClock } from "./support/fake_clock.ts";
import { FakeLlm } from "./support/fake_llm.ts";
import { childEnv, deno, postJson } from "./support/homed_process.ts";
import { teardown } from "./support/teardown.ts";
import { waitFor } from "./support/wait.ts";

const KEY = "sk-test-0123456789abcdef";
// 2026-12-01 10:00 in Shanghai, a Tuesday.
const START = Date.UTC(2026, 11, 1, 2, 0);
const HOUR = 3_600_000;

/** A home in a temporary folder with `backup` settings, its config on disk for the command line. */
async function home(llmUrl: string, backup: Record<string, unknown>, llm: Record<string, unknown> = {}) {
  const dir = await Deno.makeTempDir({ prefix: "homed-auto-backup-" });
  const configPath = join(dir, "homed.yaml");
  const text = stringify({
    daemon: { listen_addr: "127.0.0.1:0", data_dir: "data", timezone: "Asia/Shanghai" },
    llm: { base_url: llmUrl, api_key: KEY, max_retries: 0, ...llm },
    memory: { distill_interval: "7d" },
    backup: { dir: join(dir, "usb"), ...backup },
    paths: { knowledge: "knowledge", plugins: "plugins", personal: "personal.md" },
  });
  await Deno.writeTextFile(configPath, text);
  await Deno.writeTextFile(join(dir, "personal.md"), "You are Jeeves, the household's butler.\n");
  const loaded = parseConfig({
    text,
    location: { path: configPath, origin: "--config" },
    readEnv: () => undefined,
    cwd: dir,
  });
  return { dir, configPath, loaded };
}

function rows(path: string, sql: string): unknown[] {
  const db = new DatabaseSync(path, { readOnly: true });
  try {
    return db.prepare(sql).all().map((row) => ({ ...row }));
  } finally {
    db.close();
  }
}

async function status(url: string) {
  return await (await fetch(`${url}/api/status`)).json();
}

Deno.test("ten days of automatic backups keep backup.keep's set, each verifies, and restore --latest brings the household back", async () => {
  const fake = FakeLlm.start();
  const { dir, configPath, loaded } = await home(fake.baseUrl, {
    schedule: "30 3,15 * * *",
    keep: { daily: 3, weekly: 2 },
  });
  const clock = new FakeClock({ start: START });
  let daemon = await startDaemon(loaded, { clock });
  const schedulesDb = join(dir, "data", "schedules.db");
  try {
    fake.enqueue(
      {
        toolCalls: [{
          name: "schedule_create",
          arguments: { text: "Water the plants", at: "2027-01-15T09:00:00+08:00" },
        }],
      },
      { reply: "I will remind you on January 15." },
      { reply: "Noted: the tea is oolong." },
    );
    assert.equal(
      (await postJson(`${daemon.url}/api/chat`, { text: "Remind me on Jan 15 to water the plants" })).status,
      200,
    );
    assert.equal((await postJson(`${daemon.url}/api/chat`, { text: "Remember: our tea is oolong" })).status, 200);
    const first = await status(daemon.url);
    assert.equal(first.backups.schedule, "30 3,15 * * *");
    assert.equal(first.backups.dir, join(dir, "usb"));
    assert.equal(first.backups.last, null);
    assert.equal(first.backups.next_at, "2026-12-01T07:30:00.000Z", "15:30 in Shanghai");

    // Twenty half-days: each step passes one of the two daily times.
    for (let step = 1; step <= 20; step++) {
      clock.advance(12 * HOUR);
      await waitFor(async () => (await status(daemon.url)).services.backup.runs === step, `backup ${step}`);
      const now = await status(daemon.url);
      assert.equal(now.backups.last_error, null, `step ${step}`);
      assert.ok(now.backups.kept <= 5, `at most daily + weekly kept (step ${step}: ${now.backups.kept})`);
    }
    const end = await status(daemon.url);
    const expected = [
      // The newest of the last three days (December 11, 10, 9 in Shanghai) …
      "homed-2026-12-10T19-30-00-000Z.tar.gz",
      "homed-2026-12-10T07-30-00-000Z.tar.gz",
      "homed-2026-12-09T07-30-00-000Z.tar.gz",
      // … and of the last two ISO weeks (week 50's is December 11's; week 49 ends on Sunday December 6).
      "homed-2026-12-06T07-30-00-000Z.tar.gz",
    ];
    const listed = await readBackupList(join(dir, "usb"));
    assert.deepEqual(listed.map((record) => record.file), expected);
    const onDisk = [...Deno.readDirSync(join(dir, "usb"))].map((entry) => entry.name).sort();
    assert.deepEqual(onDisk, [...expected, "homed-backups.json"].sort(), "nothing else is left in backup.dir");
    assert.deepEqual(end.backups.last, {
      file: expected[0],
      at: "2026-12-10T19:30:00.000Z",
      bytes: listed[0]!.bytes,
      verified: true,
    });
    assert.equal(end.backups.kept, 4);
    assert.equal(end.backups.next_at, "2026-12-11T07:30:00.000Z");
    // Each kept archive reads back: every member against the archive's own checksums.
    for (const file of expected) {
      const path = join(dir, "usb", file);
      const sums = await archiveSums(path);
      const check = await verifyArchive(path, sums);
      assert.ok(check.files >= 3, `${file}: ${check.files} files`);
      assert.equal((await Deno.stat(path)).mode! & 0o777, 0o600, `${file} is the owner's only`);
    }

    const memory = await memoryOf(join(dir, "data", "memory"));
    const schedules = rows(schedulesDb, "SELECT * FROM schedules ORDER BY id");
    assert.match(JSON.stringify(memory), /oolong/, "the household's memory holds what was said");
    assert.equal(schedules.length, 1, "the plants' schedule");
    await daemon.stop();

    // The household loses its stores; the latest automatic backup brings them back through the command line.
    await Deno.remove(join(dir, "data", "memory"), { recursive: true });
    await Deno.remove(schedulesDb);
    const env = childEnv();
    const flags = await deno(
      [
        "run",
        "--no-prompt",
        "--allow-read",
        "--allow-env",
        "src/main.ts",
        "flags",
        "--mode",
        "restore",
        "--config",
        configPath,
      ],
      { env },
    );
    assert.equal(flags.code, 0, flags.stderr);
    const restore = await deno(
      ["run", ...flags.stdout.trim().split(" "), "src/main.ts", "restore", "--latest", "--config", configPath],
      { env },
    );
    assert.equal(restore.code, 0, restore.stderr);
    assert.match(
      restore.stdout,
      new RegExp(`^Restored \\d+ files from ${join(dir, "usb", expected[0]!).replaceAll(".", "\\.")}`),
    );
    assert.deepEqual(await memoryOf(join(dir, "data", "memory")), memory);
    assert.deepEqual(rows(schedulesDb, "SELECT * FROM schedules ORDER BY id"), schedules);

    // homed starts on what was restored and lists the schedule again.
    daemon = await startDaemon(loaded, { clock });
    const again = await (await fetch(`${daemon.url}/api/schedules`)).json();
    assert.equal(again.schedules.length, 1);
    assert.equal(again.schedules[0].text, "Water the plants");
  } finally {
    await teardown(
      () => daemon.stop(),
      () => distillerOnly(fake),
      () => fake.close(),
      () => Deno.remove(dir, { recursive: true }),
    );
  }
});

/**
 * The memory distiller asked the model over the ten days and got no answer (none was scripted): that is all the fake
 * LLM may hold against the test, and it is cleared; anything else stays for `close` to report.
 */
function distillerOnly(fake: FakeLlm): void {
  const unscripted = fake.violations.map((line) => Number(/^request #(\d+): unexpected request/.exec(line)?.[1]));
  if (unscripted.every((n) => JSON.stringify(fake.requests[n - 1]?.body).includes("Memory distiller"))) {
    fake.violations.splice(0);
  }
}

/** The memory folder: each database's tables row by row, each other file's text (SQLite's side files left out). */
async function memoryOf(folder: string): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for await (const entry of Deno.readDir(folder)) {
    const path = join(folder, entry.name);
    if (!entry.isFile || /-(wal|shm|journal)$/.test(entry.name)) continue;
    if (!entry.name.endsWith(".db")) {
      out[entry.name] = await Deno.readTextFile(path);
      continue;
    }
    const tables = rows(path, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name") as {
      name: string;
    }[];
    for (const { name } of tables) {
      out[`${entry.name}:${name}`] = rows(path, `SELECT * FROM "${name}"`).map((row) => JSON.stringify(row)).sort();
    }
  }
  return out;
}

/** The sums an archive's own checksums list: what it says was packed. */
async function archiveSums(path: string): Promise<Map<string, string>> {
  const file = await Deno.open(path);
  for await (const member of readTarMembers(file.readable.pipeThrough(new DecompressionStream("gzip")))) {
    if (member.path === CHECKSUMS) return parseChecksums(new TextDecoder().decode(await memberBytes(member)));
  }
  throw new Error(`${path} has no ${CHECKSUMS}`);
}

Deno.test("a backup taken while a chat turn waits on the model does not stop the turn", async () => {
  const fake = FakeLlm.start();
  // Due a minute after the start; the model's own deadlines are far off, so only the backup happens meanwhile.
  const { dir, loaded } = await home(fake.baseUrl, { schedule: "1 10 * * *" }, { timeout: "30m", turn_timeout: "1h" });
  const clock = new FakeClock({ start: START });
  const daemon = await startDaemon(loaded, { clock });
  try {
    fake.enqueue({ reply: "The lights are off.", delayMs: 2_000 });
    let answeredAt: number | undefined;
    const turn = postJson(`${daemon.url}/api/chat`, { text: "Turn off the lights" }).then((answer) => {
      answeredAt = performance.now();
      return answer;
    });
    await waitFor(() => fake.requests.length === 1, "the turn to ask the model");
    clock.advance(60_000);
    await waitFor(async () => (await status(daemon.url)).backups.last !== null, "the backup");
    const backedUpAt = performance.now();
    const during = await status(daemon.url);
    assert.equal(during.backups.last.verified, true);
    assert.equal(during.backups.last_error, null);
    assert.equal(answeredAt, undefined, "the turn was still in flight when the backup was done");
    const answer = await turn;
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.equal(answer.body.reply, "The lights are off.");
    assert.ok(answeredAt! > backedUpAt);
  } finally {
    await teardown(() => daemon.stop(), () => fake.close(), () => Deno.remove(dir, { recursive: true }));
  }
});
