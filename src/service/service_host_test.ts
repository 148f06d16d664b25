import assert from "node:assert/strict";
import { getLogger } from "@logtape/logtape";
import { FakeClock } from "../../tests/support/fake_clock.ts";
import type { Service } from "./service.ts";
import { ServiceHost } from "./service_host.ts";

function service(name: string, log: string[], extra: Partial<Service> = {}): Service {
  return {
    name,
    start: () => {
      log.push(`start ${name}`);
      return Promise.resolve();
    },
    stop: () => {
      log.push(`stop ${name}`);
      return Promise.resolve();
    },
    status: () => ({ name }),
    ...extra,
  };
}

Deno.test("services start in order, stop in reverse, and report state and jobs", async () => {
  const clock = new FakeClock({ start: Date.UTC(2026, 10, 30, 9) });
  const log: string[] = [];
  const host = new ServiceHost({ clock, logger: getLogger(["test"]), heartbeatMs: 15_000 });
  let beats = 0;
  await host.start(service("store", log));
  await host.start(service("agent", log, { heartbeat: () => void beats++ }));
  host.schedule();
  clock.advance(15_000);
  await host.job("agent.heartbeat")!.idle();
  assert.equal(beats, 1);
  const status = host.status();
  assert.equal(status.store!.state, "running");
  assert.equal(status.agent!.started_at, "2026-11-30T09:00:00.000Z");
  assert.deepEqual(Object.keys(status.agent!.jobs as object), ["agent.heartbeat"]);
  await host.stop();
  assert.deepEqual(log, ["start store", "start agent", "stop agent", "stop store"]);
  assert.equal(host.status().store!.state, "stopped");
  await assert.rejects(host.start(service("late", log)), /Cannot start service "late": homed is stopping/);
});

Deno.test("a failing heartbeat is isolated: logged and retried, the other services go on", async () => {
  const clock = new FakeClock();
  const host = new ServiceHost({ clock, logger: getLogger(["test"]), heartbeatMs: 15_000 });
  let good = 0;
  await host.start(service("bad", [], { heartbeat: () => Promise.reject(new Error("EIO: disk gone")) }));
  await host.start(service("good", [], { heartbeat: () => void good++ }));
  host.schedule();
  clock.advance(15_000);
  await host.job("bad.heartbeat")!.idle();
  await host.job("good.heartbeat")!.idle();
  const jobs = host.status().bad!.jobs as Record<string, { failures: number; last_error: string }>;
  assert.equal(jobs["bad.heartbeat"]!.failures, 1);
  assert.equal(jobs["bad.heartbeat"]!.last_error, "EIO: disk gone");
  assert.equal(good, 1);
  await host.stop();
});

Deno.test("stop is bounded: a service that never stops is left behind after the budget", async () => {
  const clock = new FakeClock();
  const log: string[] = [];
  const host = new ServiceHost({ clock, logger: getLogger(["test"]), heartbeatMs: 15_000 });
  await host.start(service("first", log));
  await host.start(service("hung", log, { stop: () => new Promise(() => {}) }));
  const stopping = host.stop(2_000);
  await clock.timersArmed();
  clock.advance(2_000);
  await stopping;
  assert.deepEqual(log, ["start first", "start hung", "stop first"]);
  assert.equal(host.status().hung!.state, "failed");
});

Deno.test("a service that fails to start is named", async () => {
  const host = new ServiceHost({ clock: new FakeClock(), logger: getLogger(["test"]), heartbeatMs: 1_000 });
  await assert.rejects(
    host.start(service("knowledge", [], { start: () => Promise.reject(new Error("paths.knowledge: denied")) })),
    /^Error: Service knowledge failed to start: paths\.knowledge: denied$/,
  );
  await host.stop();
});
