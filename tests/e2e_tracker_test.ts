/**
 * End to end: `homed tracker` with the flags of `deno task tracker`, and `GET /api/tracker/changes` on a running
 * daemon, over a real workspace: a commit, knowledge added and edited while homed runs, seen by both, then reverted.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { deno, startHomed, taskFlags, workspace } from "./support/homed_process.ts";
import { teardown } from "./support/teardown.ts";
import { waitFor } from "./support/wait.ts";

Deno.test("homed tracker and /api/tracker/changes show what changed since the commit, and revert puts it back", async () => {
  const ws = await workspace({});
  const knowledge = join(ws.dir, "knowledge");
  await Deno.mkdir(join(knowledge, "tea"), { recursive: true });
  await Deno.writeTextFile(join(knowledge, "tea", "content.md"), "# Tea\nGreen at 80 °C.\n");
  const tracker = async (...args: string[]) =>
    await deno(["run", ...await taskFlags("tracker", ws.env), "src/main.ts", "tracker", ...args], { env: ws.env });
  let homed: Awaited<ReturnType<typeof startHomed>> | undefined;
  try {
    const first = await tracker("status");
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stdout, /No commit yet/);
    assert.match(first.stdout, /added +knowledge\/tea\/content\.md \(\d+ bytes\)/);
    const commit = await tracker("commit");
    assert.equal(commit.code, 0, commit.stderr);
    assert.match(commit.stdout, /^Committed \d+ changes\.\n$/);

    homed = await startHomed(ws);
    await Deno.writeTextFile(join(knowledge, "tea", "content.md"), "# Tea\nGreen at 75 °C.\n");
    await Deno.mkdir(join(knowledge, "bins"));
    await Deno.writeTextFile(join(knowledge, "bins", "content.md"), "Bins go out on Tuesday.\n");
    const response = await fetch(`${homed.url}/api/tracker/changes`);
    assert.equal(response.status, 200);
    const body = await response.json();
    assert.deepEqual(
      body.changes.map((change: { path: string; change: string }) => [change.path, change.change]),
      [["knowledge/bins/content.md", "added"], ["knowledge/tea/content.md", "modified"]],
    );
    assert.equal(body.modes.knowledge, "manifest");
    assert.match(body.committed, /^\d{4}-\d\d-\d\dT/);

    const diff = await tracker("diff", "knowledge/tea");
    assert.match(diff.stdout, /-Green at 80 °C\.\n\+Green at 75 °C\.\n/);
    const refused = await tracker("revert");
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /revert: name the paths to put back .*or pass --all/);
    const unknown = await tracker("push");
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /tracker: unknown action "push"; allowed: status, diff, commit, revert/);
    const outside = await tracker("diff", "/etc/passwd");
    assert.equal(outside.code, 2);
    assert.match(outside.stderr, /path: "\/etc\/passwd" is not in a tracked part/);

    const revert = await tracker("revert", "--all");
    assert.equal(revert.code, 0, revert.stderr);
    assert.match(revert.stdout, /^Reverted 2 changes\. Files that were added are kept in .*tracker\/reverted-/);
    assert.equal(await Deno.readTextFile(join(knowledge, "tea", "content.md")), "# Tea\nGreen at 80 °C.\n");
    const after = await (await fetch(`${homed.url}/api/tracker/changes`)).json();
    assert.deepEqual(after.changes, []);
  } finally {
    await teardown(
      () => homed?.stop(),
      () => Deno.remove(ws.dir, { recursive: true }).catch(() => {}),
    );
  }
});

Deno.test("on its first start homed records the deployed state as the tracker's baseline; what it learns shows up after", async () => {
  const ws = await workspace({});
  const homed = await startHomed(ws);
  try {
    await waitFor(() => /Tracker: recorded the deployed state \(\d+ files\)/.test(homed.stderr()), "the baseline");
    const before = await (await fetch(`${homed.url}/api/tracker/changes`)).json();
    assert.deepEqual(before.changes, [], "the starter knowledge and config are the baseline");
    assert.match(before.committed, /^\d{4}-/);
    await Deno.writeTextFile(join(ws.dir, "knowledge", "learned.md"), "The butler learned this.\n");
    const after = await (await fetch(`${homed.url}/api/tracker/changes`)).json();
    assert.deepEqual(after.changes.map((c: { path: string; change: string }) => [c.path, c.change]), [
      ["knowledge/learned.md", "added"],
    ]);
  } finally {
    await homed.stop();
  }
});
