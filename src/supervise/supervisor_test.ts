import assert from "node:assert/strict";
import { getLogger } from "@logtape/logtape";
import { FakeClock } from "../../tests/support/fake_clock.ts";
import { waitFor } from "../../tests/support/wait.ts";
import { type Child, Supervisor, type SupervisorOptions } from "./supervisor.ts";

/** A child whose end the test decides: `exit(code)`, or a signal the supervisor sends. */
class FakeChild implements Child {
  static next = 1000;
  readonly pid = FakeChild.next++;
  readonly signals: Deno.Signal[] = [];
  #end!: (status: { code: number; signal: string | null }) => void;
  status = new Promise<{ code: number; signal: string | null }>((resolve) => (this.#end = resolve));
  exit(code: number, signal: string | null = null): void {
    this.#end({ code, signal });
  }
  kill(signal: Deno.Signal): void {
    this.signals.push(signal);
    if (signal === "SIGTERM" || signal === "SIGINT") this.exit(143);
  }
}

/**
 * A supervisor over {@link FakeChild}ren on `clock`; `children` holds every child it started (shared when given, so
 * two supervisors of one test can be counted together).
 */
function supervised(
  clock: FakeClock,
  options: Partial<SupervisorOptions> = {},
  children: FakeChild[] = [],
): { supervisor: Supervisor; children: FakeChild[] } {
  const supervisor = new Supervisor({
    spawn: () => {
      const child = new FakeChild();
      children.push(child);
      return child;
    },
    clock,
    logger: getLogger(["test"]),
    ...options,
  });
  return { supervisor, children };
}

Deno.test("a crashing daemon is restarted with growing delays; a crash loop ends the supervision, saying so", async () => {
  const clock = new FakeClock();
  const { supervisor, children } = supervised(clock, { crashLoop: { count: 4, windowMs: 60 * 60_000 } });
  const ended = supervisor.run();
  for (let crash = 1; crash <= 4; crash++) {
    await waitFor(() => children.length === crash, `start ${crash}`);
    children.at(-1)!.exit(crash === 2 ? 0 : 3, crash === 2 ? "SIGKILL" : null);
    if (crash < 4) {
      await waitFor(() => supervisor.delays.length === crash, `delay ${crash}`);
      clock.advance(supervisor.delays.at(-1)!);
    }
  }
  assert.deepEqual(await ended, { code: 1, reason: "crash_loop", restarts: 3 });
  assert.deepEqual(supervisor.delays, [1_000, 2_000, 4_000]);
});

Deno.test("a run that lasted long resets the delay; a clean exit ends the supervision with 0", async () => {
  const clock = new FakeClock();
  const { supervisor, children } = supervised(clock);
  const ended = supervisor.run();
  await waitFor(() => children.length === 1, "start");
  children[0]!.exit(1);
  await waitFor(() => supervisor.delays.length === 1, "first delay");
  clock.advance(1_000);
  await waitFor(() => children.length === 2, "restart");
  children[1]!.exit(1);
  await waitFor(() => supervisor.delays.length === 2, "second delay");
  clock.advance(2_000);
  await waitFor(() => children.length === 3, "restart");
  clock.advance(11 * 60_000); // a healthy run
  children[2]!.exit(1);
  await waitFor(() => supervisor.delays.length === 3, "third delay");
  assert.deepEqual(supervisor.delays, [1_000, 2_000, 1_000]);
  clock.advance(1_000);
  await waitFor(() => children.length === 4, "restart");
  children[3]!.exit(0);
  assert.deepEqual(await ended, { code: 0, reason: "exited", restarts: 3 });
});

Deno.test("signals are passed to the daemon; TERM ends the supervision; the pid file lives as long as the supervisor", async () => {
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-supervise-" });
  const pidFile = `${dir}/homed.pid`;
  const clock = new FakeClock();
  const { supervisor, children } = supervised(clock, { pidFile });
  const ended = supervisor.run();
  await waitFor(() => children.length === 1, "start");
  assert.equal(await Deno.readTextFile(pidFile), `${Deno.pid}\n`);
  supervisor.signal("SIGHUP");
  assert.deepEqual(children[0]!.signals, ["SIGHUP"], "HUP passed on; the daemon keeps running");
  supervisor.signal("SIGTERM");
  assert.deepEqual(await ended, { code: 143, reason: "stopped", restarts: 0 });
  assert.deepEqual(children[0]!.signals, ["SIGHUP", "SIGTERM"]);
  await assert.rejects(Deno.stat(pidFile), Deno.errors.NotFound);
  // A stop asked for while a restart waits: no new start.
  const { supervisor: waiting } = supervised(clock, {}, children);
  const done = waiting.run();
  await waitFor(() => children.length === 2, "start");
  children[1]!.exit(1);
  await waitFor(() => waiting.delays.length === 1, "delay");
  waiting.signal("SIGINT");
  assert.deepEqual(await done, { code: 0, reason: "stopped", restarts: 0 });
  assert.equal(children.length, 2);
  await Deno.remove(dir, { recursive: true });
});
