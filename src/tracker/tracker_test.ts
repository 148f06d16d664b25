import assert from "node:assert/strict";
import { join } from "node:path";
import { symlink } from "../../tests/support/links.ts";
import { outsideNeed } from "../../tests/support/outside_tool.ts";
import { type TrackedRoot, Tracker, UntrackedPath } from "./tracker.ts";

async function tree(): Promise<{ dir: string; roots: TrackedRoot[] }> {
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-tracker-" });
  await Deno.mkdir(join(dir, "knowledge", "tea"), { recursive: true });
  await Deno.mkdir(join(dir, "plugins"));
  await Deno.writeTextFile(join(dir, "knowledge", "tea", "content.md"), "# Tea\nGreen tea at 80 °C.\nBlack at 95.\n");
  await Deno.writeTextFile(join(dir, "knowledge", "gone.md"), "to be deleted\n");
  await Deno.writeFile(join(dir, "knowledge", "logo.bin"), new Uint8Array([0, 1, 2, 3, 255]));
  await Deno.writeTextFile(join(dir, "homed.yaml"), "daemon: {}\n");
  return {
    dir,
    roots: [
      { name: "knowledge", path: join(dir, "knowledge"), kind: "dir" },
      { name: "plugins", path: join(dir, "plugins"), kind: "dir" },
      { name: "config/homed.yaml", path: join(dir, "homed.yaml"), kind: "file" },
    ],
  };
}

Deno.test("manifest mode: changes since the commit are listed and diffed, and revert restores the bytes exactly", async () => {
  const { dir, roots } = await tree();
  try {
    const tracker = new Tracker({ roots, stateDir: join(dir, "data", "tracker"), mounts: [], now: () => 0 });
    const first = await tracker.status();
    assert.equal(first.committed, undefined);
    assert.deepEqual(first.modes, { knowledge: "manifest", plugins: "manifest", "config/homed.yaml": "manifest" });
    assert.equal(first.changes.length, 4, "before the first commit everything is new");
    assert.equal(await tracker.commit(), 4);
    assert.deepEqual((await tracker.status()).changes, []);

    const before = await Deno.readFile(join(dir, "knowledge", "logo.bin"));
    await Deno.writeTextFile(join(dir, "knowledge", "tea", "content.md"), "# Tea\nGreen tea at 75 °C.\nBlack at 95.\n");
    await Deno.remove(join(dir, "knowledge", "gone.md"));
    await Deno.writeFile(join(dir, "knowledge", "logo.bin"), new Uint8Array([9, 9]));
    await Deno.mkdir(join(dir, "plugins", "weather"));
    await Deno.writeTextFile(join(dir, "plugins", "weather", "SKILL.md"), "---\nname: weather\n---\n");
    await Deno.chmod(join(dir, "homed.yaml"), 0o640);
    await Deno.writeTextFile(join(dir, "homed.yaml"), "daemon: {}\n");

    const { changes } = await tracker.status();
    assert.deepEqual(changes.map((c) => [c.path, c.change, c.source]), [
      ["knowledge/gone.md", "deleted", "manifest"],
      ["knowledge/logo.bin", "modified", "manifest"],
      ["knowledge/tea/content.md", "modified", "manifest"],
      ["plugins/weather/SKILL.md", "added", "manifest"],
    ]);
    const diff = await tracker.diff(["knowledge"]);
    assert.match(
      diff,
      /--- a\/knowledge\/tea\/content\.md\n\+\+\+ b\/knowledge\/tea\/content\.md\n@@ -1,3 \+1,3 @@\n # Tea\n-Green tea at 80 °C\.\n\+Green tea at 75 °C\.\n Black at 95\.\n/,
    );
    assert.match(diff, /knowledge\/logo\.bin\nBinary files differ \(5 → 2 bytes\)/);
    assert.match(diff, /@@ -1,1 \+0,0 @@\n-to be deleted\n/);
    assert.doesNotMatch(diff, /plugins/, "only the named part");
    await assert.rejects(
      tracker.diff(["../etc"]),
      (error: unknown) =>
        error instanceof UntrackedPath &&
        /path: "\.\.\/etc" is not in a tracked part \(knowledge, plugins, config\/homed\.yaml\)/.test(error.message),
    );

    // Keep the new plugin; revert what happened to knowledge.
    assert.equal(await tracker.commit(["plugins/weather"]), 1);
    const { reverted, movedTo } = await tracker.revert();
    assert.equal(reverted, 3);
    assert.equal(movedTo, undefined, "nothing added was reverted");
    assert.deepEqual(await Deno.readFile(join(dir, "knowledge", "logo.bin")), before);
    assert.equal(await Deno.readTextFile(join(dir, "knowledge", "gone.md")), "to be deleted\n");
    assert.equal(
      await Deno.readTextFile(join(dir, "knowledge", "tea", "content.md")),
      "# Tea\nGreen tea at 80 °C.\nBlack at 95.\n",
    );
    assert.deepEqual((await tracker.status()).changes, []);

    await Deno.writeTextFile(join(dir, "knowledge", "wrong.md"), "a wrong fact");
    const undone = await tracker.revert(["knowledge/wrong.md"]);
    assert.equal(
      await Deno.readTextFile(join(undone.movedTo!, "knowledge", "wrong.md")),
      "a wrong fact",
      "moved, kept",
    );
    await assert.rejects(Deno.stat(join(dir, "knowledge", "wrong.md")), Deno.errors.NotFound);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

async function sh(command: string, args: string[]): Promise<{ ok: boolean; said: string }> {
  try {
    const out = await new Deno.Command(command, { args, stdout: "piped", stderr: "piped" }).output();
    return { ok: out.success, said: new TextDecoder().decode(out.stderr) };
  } catch (error) {
    return { ok: false, said: (error as Error).message };
  }
}

/** Mounts an overlay of `lower` on `merged`; the reason when it cannot (not root, no CAP_SYS_ADMIN, no overlayfs). */
async function mountOverlay(lower: string, upper: string, work: string, merged: string): Promise<string | undefined> {
  const mount = await sh("mount", [
    "-t",
    "overlay",
    "overlay",
    "-o",
    `lowerdir=${lower},upperdir=${upper},workdir=${work}`,
    merged,
  ]);
  return mount.ok ? undefined : `cannot mount an overlay here (needs root and CAP_SYS_ADMIN): ${mount.said.trim()}`;
}

/** A real overlay mount (`.ci/run` runs as root and can mount): outside CI its test is ignored where it cannot. */
const overlay = await outsideNeed("an overlay mount", async () => {
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-overlay-probe-" });
  try {
    const [lower, upper, work, merged] = ["lower", "upper", "work", "merged"].map((name) => join(dir, name)) as [
      string,
      string,
      string,
      string,
    ];
    for (const folder of [lower, upper, work, merged]) await Deno.mkdir(folder);
    const why = await mountOverlay(lower, upper, work, merged);
    if (why === undefined) await sh("umount", [merged]);
    return why;
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test({
  name:
    "overlay mode: a real overlay mount's whiteouts, opaque folder and copy-ups are changes; revert restores the lower bytes",
  ignore: overlay.ignore,
  fn: overlayMode,
});

async function overlayMode(): Promise<void> {
  overlay.assertAvailable();
  const { dir } = await tree();
  const [lower, upper, work, merged] = ["lower", "upper", "work", "merged"].map((name) => join(dir, name)) as [
    string,
    string,
    string,
    string,
  ];
  for (const folder of [upper, work, merged]) await Deno.mkdir(folder);
  await Deno.rename(join(dir, "knowledge"), join(dir, "lower-knowledge"));
  await Deno.mkdir(lower);
  await Deno.rename(join(dir, "lower-knowledge"), join(lower, "knowledge"));
  await Deno.mkdir(join(lower, "knowledge", "old"));
  await Deno.writeTextFile(join(lower, "knowledge", "old", "a.md"), "old a\n");
  const why = await mountOverlay(lower, upper, work, merged);
  if (why !== undefined) {
    await Deno.remove(dir, { recursive: true });
    throw new Error(why);
  }
  try {
    const knowledge = join(merged, "knowledge");
    await Deno.writeTextFile(join(knowledge, "tea", "content.md"), "# Tea\nOolong.\n");
    await Deno.remove(join(knowledge, "gone.md"));
    await Deno.remove(join(knowledge, "old"), { recursive: true });
    await Deno.mkdir(join(knowledge, "old"));
    await Deno.writeTextFile(join(knowledge, "old", "c.md"), "new c\n");
    await Deno.writeTextFile(join(knowledge, "learned.md"), "the butler learned this\n");
    // The layout is the kernel's own: a whiteout character device 0:0 for the deletion.
    const whiteout = await Deno.lstat(join(upper, "knowledge", "gone.md"));
    assert.ok(whiteout.isCharDevice && whiteout.rdev === 0, "gone.md is a whiteout in the upper dir");

    // As tracker.overlay names it (the same three paths /proc/mounts shows for this mount).
    const tracker = new Tracker({
      roots: [{ name: "knowledge", path: knowledge, kind: "dir" }],
      stateDir: join(dir, "state"),
      mounts: [{ mountPoint: merged, upper, lowers: [lower] }],
      now: () => 0,
    });
    const status = await tracker.status();
    assert.equal(status.modes.knowledge, `overlay (upper ${upper})`);
    assert.deepEqual(status.changes.map((c) => [c.path, c.change, c.source]), [
      ["knowledge/gone.md", "deleted", "overlay"],
      ["knowledge/learned.md", "added", "overlay"],
      ["knowledge/old/a.md", "deleted", "overlay"],
      ["knowledge/old/c.md", "added", "overlay"],
      ["knowledge/tea/content.md", "modified", "overlay"],
      ["knowledge/old", "replaced", "overlay"],
    ]);
    assert.match(
      await tracker.diff(["knowledge/old"]),
      /knowledge\/old\/: the folder replaced the deployed one \(opaque\)/,
    );

    // Keep what was learned; put the rest back as deployed.
    assert.equal(await tracker.commit(["knowledge/learned.md"]), 1);
    await tracker.revert();
    for (const file of ["tea/content.md", "gone.md", "old/a.md", "logo.bin"]) {
      assert.deepEqual(
        await Deno.readFile(join(knowledge, file)),
        await Deno.readFile(join(lower, "knowledge", file)),
        file,
      );
    }
    await assert.rejects(Deno.stat(join(knowledge, "old", "c.md")), Deno.errors.NotFound);
    assert.equal(await Deno.readTextFile(join(knowledge, "learned.md")), "the butler learned this\n");
    assert.deepEqual((await tracker.status()).changes, []);
  } finally {
    await sh("umount", [merged]);
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test({
  name:
    "overlay mode: a folder replaced by a link to an outside folder is the link; nothing behind it is read, and revert writes nothing there",
  ignore: overlay.ignore,
  fn: overlayLink,
});

/** Names and contents of the files in `dir` (one level: the outside folder of the test). */
async function filesIn(dir: string): Promise<Record<string, string>> {
  const found: Record<string, string> = {};
  for await (const entry of Deno.readDir(dir)) found[entry.name] = await Deno.readTextFile(join(dir, entry.name));
  return found;
}

async function overlayLink(): Promise<void> {
  overlay.assertAvailable();
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-overlay-link-" });
  const [lower, upper, work, merged, outside] = ["lower", "upper", "work", "merged", "outside"].map((name) =>
    join(dir, name)
  ) as [string, string, string, string, string];
  for (const folder of [upper, work, merged, outside]) await Deno.mkdir(folder);
  await Deno.mkdir(join(lower, "knowledge", "notes"), { recursive: true });
  await Deno.writeTextFile(join(lower, "knowledge", "notes", "a.md"), "deployed a\n");
  await Deno.writeTextFile(join(outside, "a.md"), "outside a\n");
  await Deno.writeTextFile(join(outside, "learned.md"), "outside learned\n");
  const why = await mountOverlay(lower, upper, work, merged);
  if (why !== undefined) {
    await Deno.remove(dir, { recursive: true });
    throw new Error(why);
  }
  try {
    const knowledge = join(merged, "knowledge");
    const tracker = new Tracker({
      roots: [{ name: "knowledge", path: knowledge, kind: "dir" }],
      stateDir: join(dir, "state"),
      mounts: [{ mountPoint: merged, upper, lowers: [lower] }],
      now: () => 0,
    });
    await Deno.writeTextFile(join(knowledge, "notes", "learned.md"), "learned\n");
    assert.equal(await tracker.commit(["knowledge/notes/learned.md"]), 1);
    await Deno.remove(join(knowledge, "notes"), { recursive: true });
    await symlink(outside, join(knowledge, "notes"));
    assert.ok((await Deno.lstat(join(upper, "knowledge", "notes"))).isSymlink, "the link is in the upper layer");

    assert.deepEqual((await tracker.status()).changes, [
      { path: "knowledge/notes", change: "added", link: outside, source: "overlay" },
      { path: "knowledge/notes/a.md", change: "deleted", baselineSize: 11, source: "overlay" },
      { path: "knowledge/notes/learned.md", change: "deleted", baselineSize: 8, source: "overlay" },
    ]);
    assert.doesNotMatch(await tracker.diff(), /outside a|outside learned/, "nothing behind the link is read");
    assert.equal((await tracker.revert()).reverted, 3);
    assert.deepEqual(
      await filesIn(outside),
      { "a.md": "outside a\n", "learned.md": "outside learned\n" },
      "nothing written or created outside",
    );
    assert.ok((await Deno.lstat(join(knowledge, "notes"))).isDirectory);
    assert.equal(await Deno.readTextFile(join(knowledge, "notes", "a.md")), "deployed a\n");
    assert.equal(await Deno.readTextFile(join(knowledge, "notes", "learned.md")), "learned\n");
    assert.deepEqual((await tracker.status()).changes, []);
  } finally {
    await sh("umount", [merged]);
    await Deno.remove(dir, { recursive: true });
  }
}
