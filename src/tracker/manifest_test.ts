/** The one check of a tracker manifest (issue 18 point 25) that the tracker and restore both use. */

import assert from "node:assert/strict";
import { parseTrackerManifest } from "./manifest.ts";

Deno.test("point 25: parseTrackerManifest keeps good entries, names each bad one, and refuses what is no manifest", () => {
  const parts = [{ name: "knowledge", kind: "dir" as const }, { name: "config/homed.yaml", kind: "file" as const }];
  const sha256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
  const both = JSON.stringify({ link: "/srv/x", sha256, size: 0, mode: 0o644 });
  const { manifest, skipped } = parseTrackerManifest(
    JSON.stringify({
      format: "homed-tracker",
      version: 1,
      committed: "then",
      files: {
        "knowledge/a.md": { sha256, size: 0, mode: 0o644 },
        "knowledge/gone.md": { deleted: true },
        "knowledge/link": { link: "/srv/x" },
        "config/homed.yaml": { sha256, size: 0, mode: 0o600 },
        "knowledge/..": { deleted: true },
        "knowledge/both": JSON.parse(both),
        "knowledge/size": { sha256, size: -1, mode: 0o644 },
        "knowledge/mode": { sha256, size: 0, mode: 0o10000 },
        "knowledge/target": { link: "" },
      },
    }),
    parts,
  );
  assert.deepEqual(Object.keys(manifest.files), [
    "knowledge/a.md",
    "knowledge/gone.md",
    "knowledge/link",
    "config/homed.yaml",
  ]);
  assert.deepEqual(skipped, [
    { entry: "knowledge/..", reason: 'has a ".." segment in its path' },
    {
      entry: "knowledge/both",
      reason: `has the value ${both.slice(0, 64)}…, not exactly one of a file ` +
        "({sha256, size, mode}), a link ({link}) or a deletion ({deleted: true})",
    },
    { entry: "knowledge/size", reason: 'has "size": -1, not a whole number of bytes' },
    { entry: "knowledge/mode", reason: 'has "mode": 4096, not permission bits (a whole number from 0 to 0o7777)' },
    { entry: "knowledge/target", reason: 'has "link": "", not a link target (text, not empty, without NUL)' },
  ]);
  assert.throws(() => parseTrackerManifest("{", parts), /^TypeError: it is not JSON \(/);
  assert.throws(() => parseTrackerManifest('{"format":"x","files":{}}', parts), {
    message: 'its format is "x", not "homed-tracker"',
  });
  assert.throws(() => parseTrackerManifest('{"format":"homed-tracker","files":[]}', parts), {
    message: "its files are not an object of entries",
  });
});
