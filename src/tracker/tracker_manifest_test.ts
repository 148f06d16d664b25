/**
 * A tracker manifest with bad entries (issue 18 point 25), on a real commit edited by hand: every entry whose path
 * could leave its part (`..`, absolute, empty or `.` segments, a NUL), lies in no tracked part, or has the wrong shape
 * is skipped with one warning naming it and why — in `status()`, `homed tracker`, `GET /api/tracker/changes` and the
 * logger — and the good entries keep working; the next commit drops the bad ones.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import type { Logger } from "@logtape/logtape";
import { Hono } from "hono";
import type { ApiVariables } from "../api/auth.ts";
import { trackerRoutes } from "../api/tracker_routes.ts";
import { runTracker } from "../cli/tracker_command.ts";
import { type TrackedRoot, Tracker } from "./tracker.ts";

/** A logger that keeps what was logged at `warning`. */
function recordingLogger(): { logger: Logger; warnings: string[] } {
  const warnings: string[] = [];
  const logger = {
    warning: (message: string, properties?: Record<string, unknown>) =>
      void warnings.push(message.replace(/\{(\w+)\}/g, (_, key: string) => String(properties?.[key]))),
  } as unknown as Logger;
  return { logger, warnings };
}

async function workspace() {
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-tracker-manifest-" });
  const knowledge = join(dir, "home", "knowledge");
  await Deno.mkdir(join(knowledge, "tea"), { recursive: true });
  await Deno.mkdir(join(dir, "home", "plugins"));
  await Deno.mkdir(join(dir, "outside"));
  await Deno.writeTextFile(join(knowledge, "a.md"), "committed a\n");
  await Deno.writeTextFile(join(knowledge, "tea", "content.md"), "# Tea\n");
  await Deno.writeTextFile(join(dir, "home", "homed.yaml"), "daemon: {}\n");
  await Deno.writeTextFile(join(dir, "outside", "secret.md"), "outside secret\n");
  const roots: TrackedRoot[] = [
    { name: "knowledge", path: knowledge, kind: "dir" },
    { name: "plugins", path: join(dir, "home", "plugins"), kind: "dir" },
    { name: "config/homed.yaml", path: join(dir, "home", "homed.yaml"), kind: "file" },
  ];
  const { logger, warnings: logged } = recordingLogger();
  const stateDir = join(dir, "data", "tracker");
  const tracker = new Tracker({ roots, stateDir, mounts: [], now: () => 0, logger });
  return { dir, knowledge, stateDir, tracker, logged };
}

/** `GET /api/tracker/changes` as the owner, on an app holding only the tracker routes. */
async function api(tracker: Tracker): Promise<{ changes: unknown; warnings: unknown }> {
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

Deno.test("point 25: a hand-edited manifest's bad entries are skipped with one warning each; the good ones keep working", async () => {
  const { dir, knowledge, stateDir, tracker, logged } = await workspace();
  try {
    assert.equal(await tracker.commit(), 3);
    const path = join(stateDir, "manifest.json");
    const manifest = JSON.parse(await Deno.readTextFile(path));
    const good = manifest.files["knowledge/a.md"];
    Object.assign(manifest.files, {
      "knowledge/../../outside/secret.md": good,
      "/etc/passwd": good,
      "knowledge/tea//content.md": good,
      "knowledge/./b.md": good,
      "knowledge/nul\u0000.md": good,
      "data/memory/memory.db": good,
      "knowledge": good,
      "config/homed.yaml/x": good,
      "knowledge/bad-sum.md": { ...good, sha256: "zz" },
      "knowledge/odd.md": { deleted: false },
      "knowledge/number.md": 42,
    });
    await Deno.writeTextFile(path, JSON.stringify(manifest, null, 1));
    await Deno.writeTextFile(join(knowledge, "a.md"), "changed a\n");

    const where = `Skipping in the tracker manifest ${path}: entry`;
    const drops = "; the next commit drops it";
    const warnings = [
      `${where} "knowledge/../../outside/secret.md" has a ".." segment in its path${drops}`,
      `${where} "/etc/passwd" has an absolute path${drops}`,
      `${where} "knowledge/tea//content.md" has an empty segment in its path${drops}`,
      `${where} "knowledge/./b.md" has a "." segment in its path${drops}`,
      `${where} "knowledge/nul\\u0000.md" has a NUL character in its path${drops}`,
      `${where} "data/memory/memory.db" is not inside a tracked part (knowledge, plugins, config/homed.yaml)${drops}`,
      `${where} "knowledge" is the folder part knowledge itself, not a file inside it${drops}`,
      `${where} "config/homed.yaml/x" is inside config/homed.yaml, which is a single file${drops}`,
      `${where} "knowledge/bad-sum.md" has "sha256": "zz", not 64 lowercase hex digits${drops}`,
      `${where} "knowledge/odd.md" has "deleted": false, not true${drops}`,
      `${where} "knowledge/number.md" has the value 42, not an object${drops}`,
    ];
    const status = await tracker.status();
    assert.deepEqual(status.changes, [
      { path: "knowledge/a.md", change: "modified", size: 10, baselineSize: 12, source: "manifest" },
    ]);
    assert.deepEqual(status.warnings, warnings);
    assert.deepEqual(await api(tracker), { ...status, warnings }, "GET /api/tracker/changes carries them too");
    assert.equal(
      await runTracker(tracker, "status", [], { all: false }),
      "Parts: knowledge (manifest), plugins (manifest), config/homed.yaml (manifest)\n" +
        "Last commit: 1970-01-01T00:00:00.000Z\n" +
        "  modified   knowledge/a.md (12 → 10 bytes)\n" +
        warnings.map((line) => `${line}\n`).join(""),
    );
    assert.match(await tracker.diff(), /^--- a\/knowledge\/a\.md\n\+\+\+ b\/knowledge\/a\.md\n@@ -1,1 \+1,1 @@\n/);
    assert.equal(
      await runTracker(tracker, "diff", ["knowledge/tea"], { all: false }),
      `No changes.\n${warnings.map((line) => `# ${line}\n`).join("")}`,
    );
    assert.deepEqual(
      logged,
      warnings.map((line) => `Tracker: ${line}`),
      "each warning reaches the logger once, however many commands ran",
    );

    // The good entries still revert; nothing is written where a bad one points.
    assert.equal(
      await runTracker(tracker, "revert", ["knowledge/a.md"], { all: false }),
      `Reverted 1 change.\n${warnings.map((line) => `${line}\n`).join("")}`,
    );
    assert.equal(await Deno.readTextFile(join(knowledge, "a.md")), "committed a\n");
    assert.equal(await Deno.readTextFile(join(dir, "outside", "secret.md")), "outside secret\n");
    assert.deepEqual([...Deno.readDirSync(knowledge)].map((entry) => entry.name).sort(), ["a.md", "tea"]);

    // A commit writes the good entries only.
    assert.equal(await tracker.commit(), 0);
    const rewritten = JSON.parse(await Deno.readTextFile(path));
    assert.deepEqual(Object.keys(rewritten.files).sort(), [
      "config/homed.yaml",
      "knowledge/a.md",
      "knowledge/tea/content.md",
    ]);
    assert.deepEqual((await tracker.status()).warnings, []);
    assert.equal(logged.length, warnings.length);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
