import assert from "node:assert/strict";
import { getLogger } from "@logtape/logtape";
import { FakeClock } from "../../tests/support/fake_clock.ts";
import { waitFor } from "../../tests/support/wait.ts";
import { systemClock } from "../clock.ts";
import { CommandError, runCommand } from "./run_command.ts";
import { WatchedCommand } from "./watched_command.ts";

const run = (argv: string[], extra: Partial<Parameters<typeof runCommand>[0]> = {}) =>
  runCommand({ argv, timeoutMs: 2_000, maxOutputBytes: 1_024, clock: systemClock, setting: "devices.test", ...extra });

async function refusal(work: Promise<unknown>): Promise<CommandError> {
  const error = await work.then(() => undefined, (error) => error);
  assert.ok(error instanceof CommandError, String(error));
  return error;
}

Deno.test("a command gets its input and gives its output; failures name the program, the reason and the setting", async () => {
  const echoed = await run(["cat"], { stdin: new TextEncoder().encode("snapshot bytes") });
  assert.equal(new TextDecoder().decode(echoed.stdout), "snapshot bytes");

  const failed = await refusal(run(["sh", "-c", "echo 'no such device /dev/video0' >&2; exit 3"]));
  assert.equal(failed.code, "failed");
  assert.equal(failed.message, "sh failed (exit code 3: no such device /dev/video0); check devices.test");

  const missing = await refusal(run(["homed-no-such-tool", "-x"]));
  assert.equal(missing.code, "missing");
  assert.match(
    missing.message,
    /^homed-no-such-tool is not installed \(not found on PATH\); install it or change devices\.test$/,
  );

  const chatty = await refusal(run(["sh", "-c", "head -c 100000 /dev/zero"]));
  assert.equal(chatty.code, "too_big");
  assert.match(chatty.message, /printed more than 1024 bytes and was stopped \(devices\.test\)/);
});

Deno.test("a command that hangs is killed at its deadline", async () => {
  const started = performance.now();
  const hung = await refusal(run(["sleep", "30"], { timeoutMs: 200 }));
  assert.equal(hung.code, "timeout");
  assert.equal(hung.message, "sleep did not finish within 200 ms and was stopped (devices.test)");
  assert.ok(performance.now() - started < 5_000, "not the 30 s the program wanted");
});

Deno.test("a watched command that exits is started again with backoff; a missing one says so; stop kills it", async () => {
  const clock = new FakeClock();
  const chunks: string[] = [];
  const watched = new WatchedCommand({
    argv: ["sh", "-c", "echo event"],
    setting: "devices.gpio",
    clock,
    logger: getLogger(["test"]),
    onOutput: (chunk) => chunks.push(new TextDecoder().decode(chunk)),
    random: () => 0.5,
  });
  watched.start();
  await waitFor(() => watched.status().restart_in_ms !== null, "the first exit");
  assert.deepEqual(chunks, ["event\n"]);
  assert.match(watched.status().last_error!, /^sh exited with code 0/);
  assert.equal(watched.status().restart_in_ms, 1_000);
  clock.advance(1_000);
  await waitFor(() => watched.status().starts === 2 && watched.status().restart_in_ms !== null, "the second run");
  assert.equal(watched.status().restart_in_ms, 2_000, "the backoff doubles");
  await watched.stop();

  const missing = new WatchedCommand({
    argv: ["homed-no-such-gpiomon"],
    setting: "devices.gpio",
    clock,
    logger: getLogger(["test"]),
    onOutput: () => {},
  });
  missing.start();
  await waitFor(() => missing.status().last_error !== null, "the failed start");
  assert.match(missing.status().last_error!, /^homed-no-such-gpiomon is not installed/);
  await missing.stop();

  const long = new WatchedCommand({
    argv: ["sleep", "30"],
    setting: "devices.microphone.command",
    clock: systemClock,
    logger: getLogger(["test"]),
    onOutput: () => {},
  });
  long.start();
  await waitFor(() => long.status().running, "the program running");
  const stopping = performance.now();
  await long.stop();
  assert.equal(long.status().running, false);
  assert.ok(performance.now() - stopping < 3_000, "killed, not waited for");
});
