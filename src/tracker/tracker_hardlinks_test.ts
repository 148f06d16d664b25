/**
 * Hard links out of a tracked tree (issue 18 point 23, the tracker's side), with real files and real links
 * (`Deno.link`): a file with more hard links than the tracked parts hold is never read — not for status, diff or
 * commit — but listed as `hardlinked` and named in a warning; links between tracked files are fine; a revert never
 * writes into such a file in place, it writes a new file and renames it over the name (or removes an added name).
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { Hono } from "hono";
import type { ApiVariables } from "../api/auth.ts";
import { trackerRoutes } from "../api/tracker_routes.ts";
import { runTracker } from "../cli/tracker_command.ts";
import { type TrackedRoot, Tracker } from "./tracker.ts";
import { writeInPlace } from "./tree_access.ts";

async function workspace() {
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-tracker-hardlinks-" });
  const knowledge = join(dir, "home", "knowledge");
  const outside = join(dir, "outside");
  const config = join(dir, "home", "homed.yaml");
  await Deno.mkdir(join(knowledge, "tea"), { recursive: true });
  await Deno.mkdir(outside);
  await Deno.writeTextFile(join(knowledge, "a.md"), "committed a\n");
  await Deno.writeTextFile(join(knowledge, "tea", "content.md"), "# Tea\n");
  await Deno.writeTextFile(config, "daemon: {}\n");
  await Deno.chmod(config, 0o640);
  await Deno.writeTextFile(join(outside, "secret.md"), "outside secret\n");
  const roots: TrackedRoot[] = [
    { name: "knowledge", path: knowledge, kind: "dir" },
    { name: "config/homed.yaml", path: config, kind: "file" },
  ];
  const stateDir = join(dir, "data", "tracker");
  const tracker = new Tracker({ roots, stateDir, mounts: [], now: () => 0 });
  return { dir, knowledge, outside, config, stateDir, tracker };
}

async function apiChanges(tracker: Tracker): Promise<{ changes: unknown; warnings: unknown }> {
  const app = new Hono<{ Variables: ApiVariables }>();
  app.use("*", async (c, next) => {
    c.set("identity", { name: "owner", trust: "owner" });
    await next();
  });
  trackerRoutes(() => Promise.resolve(tracker))(app);
  const response = await app.request("/api/tracker/changes");
  assert.equal(response.status, 200);
  return await response.json();
}

/** The warning for a file with `links` hard links, one of them in the tree. */
function notRead(name: string, path: string, links = 2): string {
  return `Not read: ${name} (${path}) has ${links} hard links and only 1 is in the tracked tree: not compared, ` +
    "diffed or committed, since a link could lead the tracker to a file elsewhere";
}

/** Every object the tracker committed, as text. */
async function objects(stateDir: string): Promise<string[]> {
  const found: string[] = [];
  for await (const entry of Deno.readDir(join(stateDir, "objects"))) {
    found.push(await Deno.readTextFile(join(stateDir, "objects", entry.name)));
  }
  return found.sort();
}

Deno.test("point 23: a file hard-linked from outside is not read by status, diff, the API or commit; links inside are", async () => {
  const { dir, knowledge, outside, stateDir, tracker } = await workspace();
  try {
    assert.equal(await tracker.commit(), 3);
    const leak = join(knowledge, "leak.md");
    await Deno.link(join(outside, "secret.md"), leak);
    await Deno.writeTextFile(join(knowledge, "x.md"), "linked twice inside\n");
    await Deno.link(join(knowledge, "x.md"), join(knowledge, "tea", "y.md"));

    const changes = [
      { path: "knowledge/leak.md", change: "hardlinked", hardLinks: 2, hardLinksInside: 1, source: "manifest" },
      { path: "knowledge/tea/y.md", change: "added", size: 20, source: "manifest" },
      { path: "knowledge/x.md", change: "added", size: 20, source: "manifest" },
    ];
    const warnings = [notRead("knowledge/leak.md", leak)];
    const status = await tracker.status();
    assert.deepEqual(status.changes, changes);
    assert.deepEqual(status.warnings, warnings);
    assert.deepEqual(await apiChanges(tracker), { ...status, changes, warnings });
    assert.equal(
      await runTracker(tracker, "status", [], { all: false }),
      "Parts: knowledge (manifest), config/homed.yaml (manifest)\n" +
        "Last commit: 1970-01-01T00:00:00.000Z\n" +
        "  hardlinked knowledge/leak.md (2 hard links, 1 in the tracked tree: not read)\n" +
        "  added      knowledge/tea/y.md (20 bytes)\n" +
        "  added      knowledge/x.md (20 bytes)\n" +
        `${warnings[0]}\n`,
    );
    const diff = await tracker.diff();
    assert.ok(
      diff.startsWith(
        "# knowledge/leak.md: 2 hard links, only 1 in the tracked tree: not read (a link could lead the tracker to a " +
          "file elsewhere)\n--- a/knowledge/tea/y.md\n",
      ),
      diff,
    );
    assert.doesNotMatch(diff, /outside secret/);

    assert.equal(await tracker.commit(), 2, "the two files linked to each other inside; not the leak");
    const manifest = JSON.parse(await Deno.readTextFile(join(stateDir, "manifest.json")));
    assert.equal(manifest.files["knowledge/leak.md"], undefined);
    assert.deepEqual(await objects(stateDir), ["# Tea\n", "committed a\n", "daemon: {}\n", "linked twice inside\n"]);
    assert.deepEqual((await tracker.status()).changes, [changes[0]], "still listed, still not read");

    // Revert removes the name only: the file stays at its other link, untouched, and the removal is recorded.
    const { reverted, movedTo } = await tracker.revert(["knowledge/leak.md"]);
    assert.equal(reverted, 1);
    await assert.rejects(Deno.lstat(leak), Deno.errors.NotFound);
    const secret = await Deno.lstat(join(outside, "secret.md"));
    assert.equal(await Deno.readTextFile(join(outside, "secret.md")), "outside secret\n");
    assert.equal(secret.nlink, 1);
    assert.ok(movedTo);
    assert.deepEqual(JSON.parse(await Deno.readTextFile(join(movedTo, "hardlinks.json"))), {
      "knowledge/leak.md": { path: leak, device: secret.dev, inode: secret.ino, hardLinks: 2 },
    });
    assert.deepEqual((await tracker.status()).changes, []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("point 23: a committed file replaced by a hard link to an outside file: revert renames the committed bytes over it", async () => {
  const { dir, knowledge, outside, tracker } = await workspace();
  try {
    assert.equal(await tracker.commit(), 3);
    await Deno.remove(join(knowledge, "a.md"));
    await Deno.link(join(outside, "secret.md"), join(knowledge, "a.md"));
    const status = await tracker.status();
    assert.deepEqual(status.changes, [
      {
        path: "knowledge/a.md",
        change: "hardlinked",
        hardLinks: 2,
        hardLinksInside: 1,
        baselineSize: 12,
        source: "manifest",
      },
    ]);
    assert.deepEqual(status.warnings, [notRead("knowledge/a.md", join(knowledge, "a.md"))]);
    assert.match(
      await runTracker(tracker, "status", [], { all: false }),
      /\n {2}hardlinked knowledge\/a\.md \(2 hard links, 1 in the tracked tree: not read; was 12 bytes\)\n/,
    );
    assert.doesNotMatch(await tracker.diff(), /outside secret/);

    assert.equal((await tracker.revert(["knowledge/a.md"])).reverted, 1);
    assert.equal(await Deno.readTextFile(join(knowledge, "a.md")), "committed a\n");
    assert.equal((await Deno.lstat(join(knowledge, "a.md"))).nlink, 1, "a new file, not the linked one");
    assert.equal(await Deno.readTextFile(join(outside, "secret.md")), "outside secret\n");
    assert.deepEqual(await tracker.status(), {
      modes: status.modes,
      committed: status.committed,
      changes: [],
      warnings: [],
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("point 23: the config file linked from outside is not read, and revert never writes into it in place", async () => {
  const { dir, outside, config, tracker } = await workspace();
  try {
    assert.equal(await tracker.commit(), 3);
    const copy = join(outside, "homed-copy.yaml");
    await Deno.link(config, copy);
    await Deno.writeTextFile(config, "evil: 1\n"); // in place: both names see it
    const status = await tracker.status();
    assert.deepEqual(status.changes, [
      {
        path: "config/homed.yaml",
        change: "hardlinked",
        hardLinks: 2,
        hardLinksInside: 1,
        baselineSize: 11,
        source: "manifest",
      },
    ]);
    assert.deepEqual(status.warnings, [notRead("config/homed.yaml", config)]);

    assert.equal((await tracker.revert(["config/homed.yaml"])).reverted, 1);
    assert.equal(await Deno.readTextFile(config), "daemon: {}\n");
    const info = await Deno.lstat(config);
    assert.equal(info.nlink, 1, "a new file renamed over the name");
    assert.equal((info.mode ?? 0) & 0o777, 0o640, "with the committed mode");
    assert.equal(await Deno.readTextFile(copy), "evil: 1\n", "the other link's file is not written");
    assert.deepEqual((await tracker.status()).changes, []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("point 23: writeInPlace refuses a file with more than one hard link and writes nothing", async () => {
  const { dir, outside, config } = await workspace();
  try {
    await Deno.link(config, join(outside, "homed-copy.yaml"));
    await assert.rejects(writeInPlace(join(dir, "home"), "homed.yaml", new TextEncoder().encode("x: 1\n"), 0o600), {
      message: `${config} has 2 hard links; the tracker never writes into such a file in place (the file at its ` +
        "other link would change too); nothing was written",
    });
    assert.equal(await Deno.readTextFile(join(outside, "homed-copy.yaml")), "daemon: {}\n");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
