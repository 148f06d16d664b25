/**
 * Issue 38, "a damaged file never means a crash loop": each of the data dir's files a start opens is damaged the way
 * a disk or a cut power damages it — `memory.db` malformed, `schedules.db` and `usage.db` not databases, a search
 * segment cut short, `routes.json` cut in half, a journal line cut in half — and a real homed (in this process, with
 * the fake LLM and the owner on a simulated QQ) must start anyway: it answers `/healthz` and a chat, the file is beside
 * itself as `<name>.damaged-<ISO time>`, a new store works, `/api/status` names the file and why, and the owner is told
 * once, with `homed restore --latest`.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import type { Daemon } from "../src/daemon.ts";
import { FakeLlm } from "./support/fake_llm.ts";
import { postJson } from "./support/homed_process.ts";
import type { OneBotSim } from "./support/onebot_sim.ts";
import { connectOwner, OWNER, sentToOwner, startOwnerDaemon } from "./support/owner_daemon.ts";
import { teardown } from "./support/teardown.ts";
import { waitFor } from "./support/wait.ts";

const STAMP = /\.damaged-\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

interface SetAsideBody {
  file: string;
  moved_to: string;
  why: string;
  kept: string;
  at: string;
}

async function chat(daemon: Daemon, fake: FakeLlm, said: string): Promise<void> {
  fake.enqueue({ reply: `Heard: ${said}` });
  const answer = await postJson(`${daemon.url}/api/chat`, { text: said });
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  assert.equal(answer.body.reply, `Heard: ${said}`);
}

async function setAside(daemon: Daemon): Promise<SetAsideBody[]> {
  return (await (await fetch(`${daemon.url}/api/status`)).json()).storage.set_aside;
}

/**
 * Runs homed once on a new data dir (`prepare` then makes what the case needs), damages a file with `damage`, starts
 * homed again and checks what every case shares; `check` then checks the case's own store.
 */
async function damagedStart(options: {
  file: string;
  why: RegExp;
  prepare?: (daemon: Daemon, fake: FakeLlm, data: string) => Promise<void>;
  damage: (path: string, data: string) => Promise<void>;
  check?: (daemon: Daemon, fake: FakeLlm, data: string) => Promise<void>;
}): Promise<void> {
  const fake = FakeLlm.start();
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-damaged-" });
  const data = join(dir, "data");
  const path = join(data, options.file);
  let daemon: Daemon | undefined;
  let sim: OneBotSim | undefined;
  try {
    daemon = await startOwnerDaemon({ dir, llm: fake });
    await chat(daemon, fake, "The spare key is under the blue flowerpot");
    await options.prepare?.(daemon, fake, data);
    await daemon.stop();
    daemon = undefined;
    await options.damage(path, data);

    daemon = await startOwnerDaemon({ dir, llm: fake });
    const health = await fetch(`${daemon.url}/healthz`);
    await health.body?.cancel();
    assert.equal(health.status, 200);
    sim = await connectOwner(daemon);
    await chat(daemon, fake, "Are you there?");
    // Memory opens in the background: what it set aside shows once it is open.
    await waitFor(async () => (await setAside(daemon!)).some((entry) => entry.file === path), `${path} set aside`);
    const entries = (await setAside(daemon)).filter((entry) => entry.file === path);
    assert.equal(entries.length, 1, JSON.stringify(entries));
    const [entry] = entries as [SetAsideBody];
    assert.match(entry.why, options.why);
    assert.equal(entry.moved_to, `${path}${entry.moved_to.slice(path.length)}`);
    assert.match(entry.moved_to, STAMP);
    assert.ok((await Deno.stat(entry.moved_to)).isFile, "the damaged file is kept beside itself");
    const toOwner = () => sentToOwner(sim!);
    await waitFor(() => toOwner().some((text) => text.includes(entry.moved_to)), "the owner was told");
    const told = toOwner().filter((text) => text.includes(path));
    assert.equal(told.length, 1, told.join("\n"));
    assert.match(told[0]!, /homed restore --latest/);
    assert.match(told[0]!, options.why);
    await options.check?.(daemon, fake, data);
  } finally {
    await teardown(
      () => sim?.close(),
      () => daemon?.stop(),
      () => fake.close(),
      () => Deno.remove(dir, { recursive: true }),
    );
  }
}

/** Cuts a file to `share` of its length. */
async function cut(path: string, share: number): Promise<void> {
  const bytes = await Deno.readFile(path);
  await Deno.writeFile(path, bytes.subarray(0, Math.floor(bytes.length * share)));
}

Deno.test("a malformed memory.db is set aside; memory starts on a new one and still keeps what is said", async () => {
  await damagedStart({
    file: join("memory", "memory.db"),
    why: /database disk image is malformed/,
    damage: async (path) => {
      const bytes = await Deno.readFile(path);
      // Past the header: the first pages after it, so SQLite reads the file as a database and finds it malformed.
      bytes.fill(0x41, 100, Math.min(bytes.length, 8192));
      await Deno.writeFile(path, bytes);
    },
    check: async (daemon, _fake, data) => {
      const status = await (await fetch(`${daemon.url}/api/status`)).json();
      assert.notEqual(status.services.memory?.stores, "failed", JSON.stringify(status.services.memory));
      assertIntact(join(data, "memory", "memory.db"));
      // The journal (memory's source) is untouched and takes the new exchange.
      await waitFor(
        async () => (await Deno.readTextFile(join(data, "memory", "candidates.jsonl"))).includes("Are you there?"),
        "the new exchange journaled",
      );
      assert.match(await Deno.readTextFile(join(data, "memory", "candidates.jsonl")), /blue flowerpot/);
    },
  });
});

function assertIntact(path: string): void {
  const db = new DatabaseSync(path);
  try {
    assert.deepEqual(db.prepare("PRAGMA quick_check").all().map((row) => ({ ...row })), [{ quick_check: "ok" }]);
  } finally {
    db.close();
  }
}

Deno.test("a routes.json cut in half is set aside; homed starts from the config's routes", async () => {
  await damagedStart({
    file: "routes.json",
    why: /cannot be read as routes/,
    prepare: async (_daemon, _fake, data) => {
      await Deno.writeTextFile(join(data, "routes.json"), `${JSON.stringify({ http: `qq:private:${OWNER}` })}\n`);
    },
    damage: (path) => cut(path, 0.5),
    check: async (daemon) => {
      const channels = await (await fetch(`${daemon.url}/api/channels`)).json();
      assert.ok(!JSON.stringify(channels).includes(`"origin":"runtime"`), JSON.stringify(channels));
    },
  });
});

Deno.test("a search segment cut short is set aside; the knowledge index is rebuilt and finds its sections", async () => {
  await damagedStart({
    file: join("vector", "knowledge", "snap-1.bin"),
    why: /segment|corrupt|size|incomplete|cut|whole/,
    prepare: async (daemon) => {
      await daemon.knowledge.reindex(); // the index's first segment, snap-1.bin
    },
    damage: (path) => cut(path, 0.6),
    check: (daemon) => {
      assert.ok(daemon.knowledge.counts().sections > 0);
      assert.ok(daemon.knowledge.search("番茄炒蛋", 3).length > 0 || daemon.knowledge.search("tomato", 3).length > 0);
      return Promise.resolve();
    },
  });
});

Deno.test("a journal line cut in half: the journal is set aside, its whole lines kept, and it goes on", async () => {
  await damagedStart({
    file: join("memory", "candidates.jsonl"),
    why: /1 lines are cut off/,
    prepare: (daemon, fake) => chat(daemon, fake, "We eat dumplings tonight"),
    damage: async (path) => {
      const lines = (await Deno.readTextFile(path)).split("\n");
      lines[1] = lines[1]!.slice(0, Math.floor(lines[1]!.length / 2)); // the butler's first reply, cut in half
      await Deno.writeTextFile(path, lines.join("\n"));
    },
    check: async (daemon, _fake, data) => {
      const journal = join(data, "memory", "candidates.jsonl");
      await waitFor(async () => (await Deno.readTextFile(journal)).includes("Are you there?"), "the journal goes on");
      const lines = (await Deno.readTextFile(journal)).trim().split("\n").map((line) => JSON.parse(line));
      assert.deepEqual(lines.map((entry) => entry.text), [
        "The spare key is under the blue flowerpot",
        "We eat dumplings tonight",
        "Heard: We eat dumplings tonight",
        "Are you there?",
        "Heard: Are you there?",
      ]);
      const status = await (await fetch(`${daemon.url}/api/status`)).json();
      assert.notEqual(status.services.memory?.stores, "failed");
    },
  });
});

Deno.test("schedules.db that is not a database is set aside; the timer starts on a new, empty one", async () => {
  await damagedStart({
    file: "schedules.db",
    why: /file is not a database/,
    damage: async (path) => {
      const bytes = await Deno.readFile(path);
      bytes.fill(0x41, 0, 100); // the header
      await Deno.writeFile(path, bytes);
    },
    check: async (daemon, _fake, data) => {
      const status = await (await fetch(`${daemon.url}/api/status`)).json();
      assert.equal(status.schedules.active, 0, JSON.stringify(status.schedules));
      assertIntact(join(data, "schedules.db"));
    },
  });
});

Deno.test("a malformed usage.db is set aside; requests are counted again in a new one", async () => {
  await damagedStart({
    file: "usage.db",
    why: /database disk image is malformed|file is not a database/,
    damage: (path) => cut(path, 0.5),
    check: (_daemon, _fake, data) => {
      assertIntact(join(data, "usage.db"));
      return Promise.resolve();
    },
  });
});
