/**
 * Symbolic links in tracked trees (issue 18 points 1 and 14), with real files and real links in a temp dir: the
 * tracker never reads or writes through a link — not in status, diff, commit, revert or `GET /api/tracker/changes` —
 * and reports every link as a change of its own, "link → target".
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { Hono } from "hono";
import { symlink } from "../../tests/support/links.ts";
import type { ApiVariables } from "../api/auth.ts";
import { trackerRoutes } from "../api/tracker_routes.ts";
import { runTracker } from "../cli/tracker_command.ts";
import { type TrackedRoot, Tracker } from "./tracker.ts";

interface Workspace {
  dir: string;
  knowledge: string;
  /** A folder next to the tracked tree, never tracked: nothing may be read from it or written into it. */
  outside: string;
  roots: TrackedRoot[];
  tracker: Tracker;
}

async function workspace(): Promise<Workspace> {
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-tracker-links-" });
  const knowledge = join(dir, "home", "knowledge");
  const outside = join(dir, "outside");
  await Deno.mkdir(join(knowledge, "notes"), { recursive: true });
  await Deno.mkdir(join(knowledge, "tea"));
  await Deno.mkdir(join(dir, "home", "plugins"));
  await Deno.mkdir(outside);
  await Deno.writeTextFile(join(knowledge, "notes", "a.md"), "committed a\n");
  await Deno.writeTextFile(join(knowledge, "notes", "b.md"), "committed b\n");
  await Deno.writeTextFile(join(knowledge, "tea", "content.md"), "# Tea\n");
  await Deno.writeTextFile(join(knowledge, "menu.md"), "soup\n");
  await Deno.writeTextFile(join(dir, "home", "homed.yaml"), "daemon: {}\n");
  await Deno.writeTextFile(join(outside, "a.md"), "outside a: a secret\n");
  await Deno.writeTextFile(join(outside, "c.md"), "outside c\n");
  await Deno.writeTextFile(join(outside, "homed.yaml"), "outside config\n");
  const roots: TrackedRoot[] = [
    { name: "knowledge", path: knowledge, kind: "dir" },
    { name: "plugins", path: join(dir, "home", "plugins"), kind: "dir" },
    { name: "config/homed.yaml", path: join(dir, "home", "homed.yaml"), kind: "file" },
  ];
  const tracker = new Tracker({ roots, stateDir: join(dir, "data", "tracker"), mounts: [], now: () => 0 });
  return { dir, knowledge, outside, roots, tracker };
}

/** Every entry under `dir`: its bytes, or `link → target` for a link (never followed). */
async function snapshot(dir: string, prefix = ""): Promise<Record<string, string>> {
  const found: Record<string, string> = {};
  for await (const entry of Deno.readDir(dir)) {
    const path = join(dir, entry.name);
    const name = `${prefix}${entry.name}`;
    if (entry.isSymlink) found[name] = `link → ${await Deno.readLink(path)}`;
    else if (entry.isDirectory) Object.assign(found, await snapshot(path, `${name}/`));
    else found[name] = await Deno.readTextFile(path);
  }
  return found;
}

const OUTSIDE = {
  "a.md": "outside a: a secret\n",
  "c.md": "outside c\n",
  "homed.yaml": "outside config\n",
};

/** `GET /api/tracker/changes` as the owner, on an app holding only the tracker routes. */
async function apiChanges(tracker: Tracker): Promise<unknown> {
  const app = new Hono<{ Variables: ApiVariables }>();
  app.use("*", async (c, next) => {
    c.set("identity", { name: "owner", trust: "owner" });
    await next();
  });
  trackerRoutes(() => Promise.resolve(tracker))(app);
  const response = await app.request("/api/tracker/changes");
  assert.equal(response.status, 200);
  return (await response.json()).changes;
}

async function rejection(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error("expected a rejection");
}

Deno.test("a committed folder replaced by a link to an outside folder: status, diff, the API and revert read and write nothing there", async () => {
  const { dir, knowledge, outside, tracker } = await workspace();
  try {
    assert.equal(await tracker.commit(), 5);
    await Deno.remove(join(knowledge, "notes"), { recursive: true });
    await symlink(outside, join(knowledge, "notes"));

    const expected = [
      { path: "knowledge/notes", change: "added", link: outside, source: "manifest" },
      { path: "knowledge/notes/a.md", change: "deleted", baselineSize: 12, source: "manifest" },
      { path: "knowledge/notes/b.md", change: "deleted", baselineSize: 12, source: "manifest" },
    ];
    assert.deepEqual((await tracker.status()).changes, expected, "the link is a change; nothing behind it is read");
    assert.deepEqual(await apiChanges(tracker), expected, "GET /api/tracker/changes says the same");
    assert.equal(
      await tracker.diff(),
      `# knowledge/notes: new symbolic link (link → ${outside}); the tracker does not follow links\n` +
        "--- a/knowledge/notes/a.md\n+++ b/knowledge/notes/a.md\n@@ -1,1 +0,0 @@\n-committed a\n" +
        "--- a/knowledge/notes/b.md\n+++ b/knowledge/notes/b.md\n@@ -1,1 +0,0 @@\n-committed b\n",
    );
    assert.equal(
      await runTracker(tracker, "status", [], { all: false }),
      "Parts: knowledge (manifest), plugins (manifest), config/homed.yaml (manifest)\n" +
        "Last commit: 1970-01-01T00:00:00.000Z\n" +
        `  added      knowledge/notes (link → ${outside})\n` +
        "  deleted    knowledge/notes/a.md (was 12 bytes)\n" +
        "  deleted    knowledge/notes/b.md (was 12 bytes)\n",
    );

    // A revert of a file behind the link, without the link itself, is refused before anything is written.
    assert.equal(
      await rejection(tracker.revert(["knowledge/notes/a.md"])),
      `Not reverting knowledge/notes/a.md: knowledge/notes is a symbolic link (link → ${outside}) and the tracker ` +
        "never writes through a link; revert knowledge/notes as well, which removes the link",
    );
    assert.deepEqual(await snapshot(outside), OUTSIDE);

    const { reverted, movedTo } = await tracker.revert();
    assert.equal(reverted, 3);
    assert.deepEqual(await snapshot(outside), OUTSIDE, "no file outside overwritten, none created there");
    const notes = await Deno.lstat(join(knowledge, "notes"));
    assert.ok(notes.isDirectory && !notes.isSymlink, "the link itself was replaced by the committed folder");
    assert.deepEqual(await snapshot(join(knowledge, "notes")), { "a.md": "committed a\n", "b.md": "committed b\n" });
    assert.ok(movedTo, "the removed link is recorded aside");
    assert.deepEqual(JSON.parse(await Deno.readTextFile(join(movedTo, "links.json"))), {
      "knowledge/notes": outside,
    });
    assert.deepEqual((await tracker.status()).changes, []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("commit with a link to an outside folder records the link, never what is behind it", async () => {
  const { dir, knowledge, outside, tracker } = await workspace();
  try {
    await symlink(outside, join(dir, "home", "plugins", "evil"));
    await symlink(outside, join(knowledge, "tea", "more"));
    assert.equal(await tracker.commit(), 7);
    const manifest = JSON.parse(await Deno.readTextFile(join(dir, "data", "tracker", "manifest.json")));
    assert.deepEqual(manifest.files["plugins/evil"], { link: outside });
    assert.deepEqual(manifest.files["knowledge/tea/more"], { link: outside });
    assert.deepEqual(
      Object.keys(manifest.files).filter((name) => name.includes("evil/") || name.includes("more/")),
      [],
      "nothing behind a link is listed",
    );
    const objects = await snapshot(join(dir, "data", "tracker", "objects"));
    for (const text of Object.values(OUTSIDE)) {
      assert.ok(!Object.values(objects).includes(text), `no committed object holds ${JSON.stringify(text)}`);
    }
    assert.deepEqual((await tracker.status()).changes, []);
    assert.deepEqual(await snapshot(outside), OUTSIDE);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("links in a tracked tree are changes: added, a file turned into one, retargeted, removed; a committed link is never recreated", async () => {
  const { dir, knowledge, outside, tracker } = await workspace();
  try {
    await tracker.commit();
    await symlink(join(outside, "a.md"), join(knowledge, "tea", "leak.md"));
    await symlink("missing-target", join(knowledge, "dangling"));
    await Deno.remove(join(knowledge, "menu.md"));
    await symlink(join(outside, "c.md"), join(knowledge, "menu.md"));

    assert.deepEqual((await tracker.status()).changes, [
      { path: "knowledge/dangling", change: "added", link: "missing-target", source: "manifest" },
      {
        path: "knowledge/menu.md",
        change: "modified",
        baselineSize: 5,
        link: join(outside, "c.md"),
        source: "manifest",
      },
      { path: "knowledge/tea/leak.md", change: "added", link: join(outside, "a.md"), source: "manifest" },
    ]);
    assert.equal(
      await runTracker(tracker, "status", [], { all: false }),
      "Parts: knowledge (manifest), plugins (manifest), config/homed.yaml (manifest)\n" +
        "Last commit: 1970-01-01T00:00:00.000Z\n" +
        "  added      knowledge/dangling (link → missing-target)\n" +
        `  modified   knowledge/menu.md (link → ${join(outside, "c.md")}, was 5 bytes)\n` +
        `  added      knowledge/tea/leak.md (link → ${join(outside, "a.md")})\n`,
    );
    assert.equal(
      await tracker.diff(["knowledge/menu.md"]),
      `# knowledge/menu.md: a file became a symbolic link (link → ${join(outside, "c.md")})\n` +
        "--- a/knowledge/menu.md\n+++ b/knowledge/menu.md\n@@ -1,1 +0,0 @@\n-soup\n",
    );

    assert.equal(await tracker.commit(), 3);
    assert.deepEqual((await tracker.status()).changes, []);
    await Deno.remove(join(knowledge, "tea", "leak.md"));
    await symlink(join(outside, "c.md"), join(knowledge, "tea", "leak.md"));
    await Deno.remove(join(knowledge, "dangling"));
    assert.deepEqual((await tracker.status()).changes, [
      { path: "knowledge/dangling", change: "deleted", baselineLink: "missing-target", source: "manifest" },
      {
        path: "knowledge/tea/leak.md",
        change: "retargeted",
        link: join(outside, "c.md"),
        baselineLink: join(outside, "a.md"),
        source: "manifest",
      },
    ]);
    assert.equal(
      await tracker.diff(),
      "# knowledge/dangling: symbolic link removed (was link → missing-target)\n" +
        `# knowledge/tea/leak.md: symbolic link retargeted (link → ${join(outside, "c.md")}, was link → ${
          join(outside, "a.md")
        })\n`,
    );
    assert.equal(
      await rejection(tracker.revert()),
      "Not reverting knowledge/dangling: it was a symbolic link (link → missing-target) at the last commit, and the " +
        "tracker does not create links; recreate it by hand (ln -s) or commit the change",
    );
    assert.equal(await Deno.readLink(join(knowledge, "tea", "leak.md")), join(outside, "c.md"), "nothing reverted");

    // A committed link replaced by a file: the file is the change, the link its baseline.
    await Deno.remove(join(knowledge, "menu.md"));
    await Deno.writeTextFile(join(knowledge, "menu.md"), "stew\n");
    assert.deepEqual((await tracker.status()).changes.find((change) => change.path === "knowledge/menu.md"), {
      path: "knowledge/menu.md",
      change: "modified",
      size: 5,
      baselineLink: join(outside, "c.md"),
      source: "manifest",
    });
    assert.deepEqual(await snapshot(outside), OUTSIDE);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a config file replaced by a link: reported as the link, and revert puts the committed file in its place without writing the target", async () => {
  const { dir, outside, tracker } = await workspace();
  try {
    await tracker.commit();
    const config = join(dir, "home", "homed.yaml");
    await Deno.remove(config);
    await symlink(join(outside, "homed.yaml"), config);
    assert.deepEqual((await tracker.status()).changes, [
      {
        path: "config/homed.yaml",
        change: "modified",
        baselineSize: 11,
        link: join(outside, "homed.yaml"),
        source: "manifest",
      },
    ]);
    assert.deepEqual(await tracker.revert(["config/homed.yaml"]), {
      reverted: 1,
      movedTo: join(dir, "data", "tracker", "reverted-1970-01-01T00-00-00-000Z"),
    });
    assert.deepEqual(await snapshot(outside), OUTSIDE, "the link's target is untouched");
    const info = await Deno.lstat(config);
    assert.ok(info.isFile && !info.isSymlink);
    assert.equal(await Deno.readTextFile(config), "daemon: {}\n");
    assert.deepEqual((await tracker.status()).changes, []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
