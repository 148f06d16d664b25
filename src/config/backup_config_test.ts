import assert from "node:assert/strict";
import { parseConfig } from "./load.ts";
import { ConfigError } from "./config_error.ts";
import { cronProblem } from "./cron_text.ts";

function load(text: string) {
  return parseConfig({
    text,
    location: { path: "/etc/homed/homed.yaml", origin: "--config" },
    readEnv: () => undefined,
    cwd: "/",
  });
}

function problem(text: string): string {
  try {
    load(text);
  } catch (error) {
    assert.ok(error instanceof ConfigError, String(error));
    return error.message;
  }
  throw new Error(`accepted: ${text}`);
}

Deno.test("automatic backups by default: daily at 03:30 into <data_dir>/backups, 7 daily and 4 weekly kept", () => {
  const { backup } = load("{}").config;
  assert.deepEqual(backup, {
    max_restore_bytes: null,
    schedule: "30 3 * * *",
    dir: "/etc/homed/data/backups",
    keep: { daily: 7, weekly: 4 },
  });
  const other =
    load("backup:\n  schedule: ''\n  dir: ../../mnt/usb/homed\n  keep: { daily: 3, weekly: 0 }\n").config.backup;
  assert.deepEqual([other.schedule, other.dir, other.keep], ["", "/mnt/usb/homed", { daily: 3, weekly: 0 }]);
});

Deno.test("backup config errors name the key and the value", () => {
  assert.match(
    problem("backup:\n  schedule: '30 25 * * *'\n"),
    /backup\.schedule: got "30 25 \* \* \*"; allowed: a 5-field cron line .*: the hour is 25; allowed: 0 to 23/,
  );
  assert.match(
    problem("backup:\n  schedule: daily\n"),
    /backup\.schedule: got "daily"; .*it has 1 field; a cron line has 5/,
  );
  assert.match(
    problem("backup:\n  keep: { daily: 0 }\n"),
    /backup\.keep\.daily: got 0; allowed: a whole number from 1 to 366/,
  );
  assert.match(
    problem("backup:\n  keep: { weekly: many }\n"),
    /backup\.keep\.weekly: got "many"; allowed: a whole number from 0 to 520/,
  );
  assert.match(
    problem("backup:\n  keep: { monthly: 2 }\n"),
    /backup\.keep\.monthly: unknown key; allowed keys here: daily, weekly/,
  );
  assert.match(problem("backup:\n  dir: 7\n"), /backup\.dir: got 7; allowed: a folder/);
});

Deno.test("cron lines: what croner's 5-part mode reads, each bad field named", () => {
  for (const line of ["30 3 * * *", "*/15 * * * 1-5", "0 7,19 1 jan-mar sun", "0 0 * * 7", "5-55/10 * * * *"]) {
    assert.equal(cronProblem(line), undefined, line);
  }
  assert.equal(cronProblem("60 3 * * *"), "the minute is 60; allowed: 0 to 59");
  assert.equal(cronProblem("0 3 0 * *"), "the day of month is 0; allowed: 1 to 31");
  assert.equal(cronProblem("0 3 * 13 *"), "the month is 13; allowed: 1 to 12");
  assert.equal(cronProblem("0 3 * * 8"), "the day of week is 8; allowed: 0 to 7");
  assert.equal(cronProblem("0 3 * * funday"), 'the day of week is "funday"; allowed: 0 to 7');
  assert.equal(cronProblem("0 20-3 * * *"), "the hour range 20-3 runs backwards");
  assert.equal(cronProblem("@daily"), "it has 1 field; a cron line has 5");
});

Deno.test("daemon.low_disk: a size a household reads (500MB by default), 0 never warns; errors name key and value", () => {
  assert.equal(load("{}").config.daemon.low_disk, 500 * 1024 ** 2);
  assert.equal(load("daemon:\n  low_disk: 2GB\n").config.daemon.low_disk, 2 * 1024 ** 3);
  assert.equal(load("daemon:\n  low_disk: 1.5 gb\n").config.daemon.low_disk, 1.5 * 1024 ** 3);
  assert.equal(load("daemon:\n  low_disk: 0\n").config.daemon.low_disk, 0);
  assert.match(
    problem("daemon:\n  low_disk: lots\n"),
    /daemon\.low_disk: got "lots"; allowed: a size such as "500MB", "2GB" or "1\.5GB" \(1 GB = 1024 MB\), or 0/,
  );
  assert.match(problem("daemon:\n  low_disk: 500\n"), /daemon\.low_disk: got "500"; allowed: a size such as/);
});
