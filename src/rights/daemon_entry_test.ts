import assert from "node:assert/strict";
import { join } from "node:path";
import { bundleInputs, daemonEntry, entryReadRights, sourceFingerprint, type SourceReader } from "./daemon_entry.ts";
import { preparedEntry } from "./bundle_build.ts";

const ROOT = "/srv/homed";

/** A checkout in memory: paths relative to {@link ROOT}, text contents. */
function tree(files: Record<string, string>): SourceReader & { files: Map<string, string> } {
  const map = new Map(Object.entries(files).map(([path, text]) => [join(ROOT, path), text]));
  return {
    files: map,
    readFile(path) {
      const text = map.get(path);
      if (text === undefined) throw new Deno.errors.NotFound(`no ${path}`);
      return new TextEncoder().encode(text);
    },
    exists: (path) => map.has(path),
    readDir(path) {
      const names = new Map<string, boolean>();
      for (const file of map.keys()) {
        if (!file.startsWith(`${path}/`)) continue;
        const [name, ...rest] = file.slice(path.length + 1).split("/");
        names.set(name!, rest.length > 0);
      }
      if (!names.size) throw new Deno.errors.NotFound(`no folder ${path}`);
      return [...names].map(([name, isDirectory]) => ({ name, isDirectory, isFile: !isDirectory }));
    },
  };
}

const checkout = () =>
  tree({
    "src/main.ts": 'import "./agent/personal.ts";\n',
    "src/agent/personal.ts": 'import text from "../../personal.md" with { type: "text" };\nexport default text;\n',
    "src/agent/personal_test.ts": 'import x from "../../tests/fixtures/x.md" with { type: "text" };\n',
    "src/build_info.ts": 'export const COMMIT = "dev";\n',
    "personal.md": "You are the butler.\n",
    "deno.json": "{}\n",
    "deno.lock": "{}\n",
    "README.md": "not an input\n",
  });

/** The checkout with a bundle built from it now. */
function built(reader = checkout()) {
  reader.files.set(join(ROOT, "dist/homed.js"), "/* the bundle */");
  const manifest = { version: "0.1.0", commit: "abc123", sources: sourceFingerprint(ROOT, reader) };
  reader.files.set(join(ROOT, "dist/homed.js.json"), JSON.stringify(manifest));
  return reader;
}

Deno.test("the inputs: src/ but build_info.ts, what src/ embeds from outside it (not tests'), deno.json and deno.lock", () => {
  assert.deepEqual(bundleInputs(ROOT, checkout()), [
    "deno.json",
    "deno.lock",
    "personal.md",
    "src/agent/personal.ts",
    "src/agent/personal_test.ts",
    "src/main.ts",
  ]);
  assert.deepEqual(entryReadRights(ROOT, checkout()), [
    `${ROOT}/src`,
    `${ROOT}/dist`,
    `${ROOT}/deno.json`,
    `${ROOT}/deno.lock`,
    `${ROOT}/personal.md`,
  ]);
  assert.deepEqual(entryReadRights(undefined), [], "no checkout, nothing to read");
});

Deno.test("the fingerprint follows every input, and only the inputs", () => {
  const base = sourceFingerprint(ROOT, checkout());
  assert.match(base, /^sha256:[0-9a-f]{64}$/);
  const change = (path: string, text: string) => {
    const reader = checkout();
    reader.files.set(join(ROOT, path), text);
    return sourceFingerprint(ROOT, reader);
  };
  assert.notEqual(change("src/main.ts", "// edited\n"), base);
  assert.notEqual(change("personal.md", "You are a pirate.\n"), base, "an embedded file outside src/");
  assert.notEqual(change("deno.lock", '{"version":"5"}\n'), base);
  assert.notEqual(change("src/new.ts", "export {};\n"), base, "a new file");
  assert.equal(change("src/build_info.ts", 'export const COMMIT = "abc123";\n'), base, "the build's own rewrite");
  assert.equal(change("README.md", "edited\n"), base);
});

Deno.test("the entry: the fresh bundle; the sources when it is missing, stale or its manifest damaged; no checkout: itself", () => {
  const fresh = daemonEntry(ROOT, built());
  assert.deepEqual(fresh, {
    kind: "bundle",
    root: ROOT,
    script: `${ROOT}/dist/homed.js`,
    reason: `running the bundle ${ROOT}/dist/homed.js (built from these sources)`,
  });

  const none = daemonEntry(ROOT, checkout());
  assert.ok(none.kind === "sources");
  assert.deepEqual([none.bundle, none.script], ["missing", `${ROOT}/src/main.ts`]);
  assert.equal(
    none.reason,
    `running the sources: ${ROOT}/dist/homed.js is missing — \`deno task bundle\` rebuilds it`,
  );

  const unlisted = built();
  unlisted.files.delete(join(ROOT, "dist/homed.js.json"));
  assert.match(
    daemonEntry(ROOT, unlisted).reason,
    /dist\/homed\.js\.json is missing \(a bundle built before manifests/,
  );

  const stale = built();
  stale.files.set(join(ROOT, "src/main.ts"), "// edited after the build\n");
  const staleEntry = daemonEntry(ROOT, stale);
  assert.equal(staleEntry.kind === "sources" && staleEntry.bundle, "stale");
  assert.equal(
    staleEntry.reason,
    `running the sources: ${ROOT}/dist/homed.js is stale (built from other sources) — \`deno task bundle\` rebuilds it`,
  );

  const damaged = (text: string) => {
    const reader = built();
    reader.files.set(join(ROOT, "dist/homed.js.json"), text);
    const entry = daemonEntry(ROOT, reader);
    assert.equal(entry.kind === "sources" && entry.bundle, "unreadable");
    return entry.reason;
  };
  assert.match(damaged("{not json"), /manifest is unreadable: \/srv\/homed\/dist\/homed\.js\.json: not JSON \(/);
  assert.match(
    damaged('{"version":"0.1.0","commit":"abc"}'),
    /\/srv\/homed\/dist\/homed\.js\.json: "sources" is null, not a string — `deno task bundle` rebuilds it$/,
  );
  assert.match(
    damaged('{"version":"0.1.0","commit":"abc","sources":"md5:00"}'),
    /homed\.js\.json: "sources" is "md5:00", not "sha256:" and 64 hex digits/,
  );

  assert.equal(daemonEntry(undefined).kind, "self");
});

Deno.test("preparedEntry builds a missing or stale bundle once, and falls back to the sources when the build fails", async () => {
  const said: string[] = [];
  const say = (line: string) => said.push(line);
  const reader = checkout();
  const builds: string[] = [];
  const fresh = await preparedEntry(ROOT, {
    build: true,
    say,
    reader,
    builder: (root) => {
      builds.push(root);
      built(reader);
      return Promise.resolve({ ok: true, out: "Built …" });
    },
  });
  assert.equal(fresh.kind, "bundle");
  assert.deepEqual(builds, [ROOT]);
  assert.match(said[0]!, /^building the bundle \/srv\/homed\/dist\/homed\.js \(it is missing\) …$/);
  assert.match(said[1]!, /^built \/srv\/homed\/dist\/homed\.js in \d+\.\d s$/);

  // Fresh already: nothing built.
  await preparedEntry(ROOT, { build: true, say, reader, builder: () => Promise.reject(new Error("not called")) });
  assert.equal(said.length, 2);

  reader.files.set(join(ROOT, "src/main.ts"), "// edited\n");
  const failed = await preparedEntry(ROOT, {
    build: true,
    say,
    reader,
    builder: () => Promise.resolve({ ok: false, out: "Download https://…/esbuild failed\nerror: network unreachable" }),
  });
  assert.equal(failed.kind, "sources");
  assert.equal(
    failed.reason,
    `running the sources: building ${ROOT}/dist/homed.js failed (error: network unreachable) — ` +
      "`deno task bundle` shows the whole error",
  );
  assert.match(said.at(-1)!, /^building the bundle failed after \d+\.\d s: error: network unreachable$/);

  // build: false (`homed service unit`, `status`): says nothing, builds nothing.
  const shown = await preparedEntry(ROOT, { build: false, say, reader });
  assert.equal(shown.kind === "sources" && shown.bundle, "stale");
});
