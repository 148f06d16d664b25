/**
 * What the storage-fault tests (a full disk, a read-only one) say and check of a running homed: a chat that must be
 * answered whatever the disk does, the degraded stores `/api/status` shows, and — after the fault — that the data dir
 * is whole: every database passes `PRAGMA integrity_check`, no partial file is left, the journal has no torn line.
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import type { Daemon } from "../../src/daemon.ts";
import type { FakeLlm } from "./fake_llm.ts";
import { postJson } from "./homed_process.ts";
import type { OneBotSim } from "./onebot_sim.ts";
import { OWNER, sentToOwner } from "./owner_daemon.ts";
import { waitFor } from "./wait.ts";

/**
 * Says `said` over HTTP and checks homed answered it (the fake model's scripted reply).
 *
 * @example
 * ```ts
 * import type { Daemon } from "../../src/daemon.ts";
 * import type { FakeLlm } from "./fake_llm.ts";
 *
 * declare const daemon: Daemon, fake: FakeLlm;
 * await chat(daemon, fake, "The spare key is under the blue flowerpot");
 * ```
 */
export async function chat(daemon: Daemon, fake: FakeLlm, said: string): Promise<void> {
  fake.enqueue({ reply: `Heard: ${said.slice(0, 40)}` });
  const answer = await postJson(`${daemon.url}/api/chat`, { text: said });
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  assert.equal(answer.body.reply, `Heard: ${said.slice(0, 40)}`);
}

/**
 * The owner says `said` on QQ and gets homed's answer back there.
 *
 * @example
 * ```ts
 * import type { OneBotSim } from "./onebot_sim.ts";
 * import type { FakeLlm } from "./fake_llm.ts";
 *
 * declare const sim: OneBotSim, fake: FakeLlm;
 * await chatOnQq(sim, fake, "Is the hall light on?");
 * ```
 */
export async function chatOnQq(sim: OneBotSim, fake: FakeLlm, said: string): Promise<void> {
  const reply = `On QQ: ${said.slice(0, 30)}`;
  fake.enqueue({ reply });
  const before = sentToOwner(sim).length;
  sim.privateMessage(OWNER, [{ type: "text", data: { text: said } }]);
  await waitFor(() => sentToOwner(sim).slice(before).some((text) => text.includes(reply)), `the QQ answer to ${said}`);
}

/** One entry of `/api/status` `storage.degraded`. */
export interface DegradedBody {
  store: string;
  path: string;
  kind: string;
  error: string;
  since: string;
}

/**
 * The stores `/api/status` shows as degraded now.
 *
 * @example
 * ```ts
 * import type { Daemon } from "../../src/daemon.ts";
 *
 * declare const daemon: Daemon;
 * (await degraded(daemon)).map((entry) => entry.store); // ["memory journal", …]
 * ```
 */
export async function degraded(daemon: Daemon): Promise<DegradedBody[]> {
  return (await (await fetch(`${daemon.url}/api/status`)).json()).storage.degraded;
}

/**
 * Every file and folder under `dir`, depth first.
 *
 * @example
 * ```ts
 * (await filesUnder("/var/lib/homed")).filter((path) => path.endsWith(".db"));
 * ```
 */
export async function filesUnder(dir: string): Promise<string[]> {
  const found: string[] = [];
  for await (const entry of Deno.readDir(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory) found.push(path, ...await filesUnder(path));
    else found.push(path);
  }
  return found;
}

/** What a crash or a failed write may leave behind: temporary and partial files, a write probe. */
const PARTIAL = /\.tmp$|\.partial|\.part$|~$|\.homed-write-probe-/;

/**
 * Checks the data dir `data` of a stopped homed is whole: at least three databases, each passing
 * `PRAGMA integrity_check`; no partial file; every line of the memory journal whole JSON. Returns the journal's lines.
 *
 * @example
 * ```ts
 * const lines = await assertWhole("/tmp/homed-test/data");
 * lines.some((line) => line.includes("blue flowerpot"));
 * ```
 */
export async function assertWhole(data: string): Promise<string[]> {
  const files = await filesUnder(data);
  assert.deepEqual(files.filter((file) => PARTIAL.test(file)), []);
  const databases = files.filter((file) => file.endsWith(".db"));
  assert.ok(databases.length >= 3, databases.join(", "));
  for (const path of databases) {
    const db = new DatabaseSync(path);
    try {
      assert.deepEqual(db.prepare("PRAGMA integrity_check").all().map((row) => ({ ...row })), [{
        integrity_check: "ok",
      }], path);
    } finally {
      db.close();
    }
  }
  const lines = (await Deno.readTextFile(join(data, "memory", "candidates.jsonl"))).trim().split("\n");
  for (const line of lines) JSON.parse(line); // no torn line
  return lines;
}
