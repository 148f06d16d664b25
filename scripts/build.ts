/**
 * Builds homed for a device (`deno task compile|bundle|release`):
 *
 * - `compile`: one `homed` binary with the flags `homed --standard-layout flags` prints, built on `DENORT_BIN` when it
 *   is set (`deno compile` otherwise downloads denort, and this says where to get one when it cannot).
 * - `bundle`: where no denort can be had, `dist/homed.js` (one file, every dependency inside; the persona, starter
 *   knowledge, example config and Lua adapters are embedded as in the binary) with `glue.wasm` beside it, and
 *   `dist/homed`, a launcher that runs it on the pinned Deno with the flags it computes, and `homed.js.json`, the
 *   manifest of what it was built from (version, commit, the sources' fingerprint): the supervisor and the systemd
 *   unit run a checkout's bundle instead of its sources only while that fingerprint is the sources' (daemon_entry.ts).
 * - `release`: the binary (or, with `--bundle` or no denort, the bundle) packed with the example config, a systemd
 *   unit for the standard layout and the adapters into `dist/homed-<version>-<kind>.tar.gz`.
 *
 * Each writes the commit into `src/build_info.ts` for the build and puts the file back after.
 *
 * @module
 */

import { basename, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { serviceUnit } from "../src/cli/service.ts";
import { luaWasmPath } from "../src/lua/wasm_path.ts";
import { silkWasmPath } from "../src/audio/silk_wasm_path.ts";
import { TAR_END, tarBlocks, type TarEntry } from "../src/backup/tar.ts";
import { VERSION } from "../src/version.ts";
import { type BundleManifest, sourceFingerprint } from "../src/rights/daemon_entry.ts";
import { denoRegistryEnv } from "./registry_env.ts";

const REPO = fileURLToPath(new URL("../", import.meta.url));
const DENO = Deno.execPath();
const DENO_VERSION = "2.9.6";
const BUILD_INFO = join(REPO, "src", "build_info.ts");

/** Runs this Deno; `deno compile` and `deno bundle` may reach a registry (denort, esbuild), trusting the system's CAs. */
async function run(args: string[], options: { cwd?: string } = {}): Promise<{ ok: boolean; out: string }> {
  const output = await new Deno.Command(DENO, {
    args,
    cwd: options.cwd ?? REPO,
    env: denoRegistryEnv(),
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  return { ok: output.success, out: decoder.decode(output.stdout) + decoder.decode(output.stderr) };
}

async function commit(): Promise<string> {
  try {
    const output = await new Deno.Command("git", {
      args: ["rev-parse", "--short=12", "HEAD"],
      cwd: REPO,
      stderr: "null",
    })
      .output();
    const sha = new TextDecoder().decode(output.stdout).trim();
    return output.success && sha ? sha : "unknown";
  } catch {
    return "unknown";
  }
}

/**
 * Runs `build` with `src/build_info.ts` naming the commit, and puts the file back whatever happens — a SIGINT or
 * SIGTERM included (a supervisor gives a hung build up that way). Two builds at once (the supervisor's and a
 * `deno task bundle`) take turns: an exclusive lock on the file, or the second would keep the first's commit as the
 * original and put that back.
 */
async function withBuildInfo<T>(build: () => Promise<T>): Promise<T> {
  const lock = await Deno.open(BUILD_INFO, { read: true, write: true });
  await lock.lock(true);
  const original = await Deno.readTextFile(BUILD_INFO);
  const restore = () => Deno.writeTextFileSync(BUILD_INFO, original);
  const signals = (["SIGINT", "SIGTERM"] as const).map((signal) => {
    const handler = () => {
      restore();
      Deno.exit(signal === "SIGINT" ? 130 : 143);
    };
    Deno.addSignalListener(signal, handler);
    return [signal, handler] as const;
  });
  try {
    const sha = await commit();
    await Deno.writeTextFile(BUILD_INFO, original.replace(/COMMIT = "[^"]*"/, `COMMIT = ${JSON.stringify(sha)}`));
    return await build();
  } finally {
    restore();
    for (const [signal, handler] of signals) Deno.removeSignalListener(signal, handler);
    lock.close();
  }
}

/** The denort download for this machine, for the message when `deno compile` cannot get one. */
function denortUrl(): string {
  const arch = Deno.build.arch === "aarch64" ? "aarch64" : "x86_64";
  const target = Deno.build.os === "darwin" ? `${arch}-apple-darwin` : `${arch}-unknown-linux-gnu`;
  return `https://dl.deno.land/release/v${DENO_VERSION}/denort-${target}.zip`;
}

/** `deno compile` of the binary into `out`; throws with where to get denort when there is none. */
async function compile(out: string): Promise<string> {
  const flags = await run([
    "run",
    "--no-prompt",
    "--allow-read",
    "--allow-env",
    "src/main.ts",
    "--standard-layout",
    "flags",
  ]);
  if (!flags.ok) throw new Error(`homed flags failed:\n${flags.out}`);
  const binary = join(out, "homed");
  await Deno.mkdir(out, { recursive: true });
  const result = await withBuildInfo(() =>
    run([
      "compile",
      ...flags.out.trim().split(/\s+/),
      "--include",
      relative(REPO, luaWasmPath()),
      "--output",
      binary,
      "src/main.ts",
      "--standard-layout",
    ])
  );
  if (!result.ok) {
    const denort = Deno.env.get("DENORT_BIN");
    throw new Error(
      [
        `deno compile failed${denort ? ` with DENORT_BIN=${denort}` : ""}:`,
        result.out.trim(),
        "",
        denort
          ? `Check that ${denort} is the denort of Deno ${DENO_VERSION} for this machine.`
          : `deno compile needs Deno's base binary (denort). Download ${denortUrl()}, unzip it, and run again with ` +
            `DENORT_BIN=/path/to/denort; or build the bundle instead: npx -y deno@${DENO_VERSION} task bundle.`,
      ].join("\n"),
    );
  }
  return binary;
}

/** The launcher beside the bundle: the command's flags from the bundle itself, then the bundle on the same Deno. */
const LAUNCHER = `#!/bin/sh
# homed, bundled: runs homed.js on Deno ${DENO_VERSION} with exactly the rights \`homed flags\` computes for the command.
# DENO: the deno to use (default: deno on PATH). HOMED_LAYOUT=repo: config/homed.yaml under the current folder
# instead of /etc/homed/homed.yaml and /var/lib/homed. --no-config: a deno.json in the current folder (a checkout's)
# would map the bundle's packages back into node_modules/; the bundle carries them. MALLOC_ARENA_MAX=2 and
# MALLOC_MMAP_THRESHOLD_=131072: two glibc malloc arenas, and large blocks in mappings of their own, keep a long-running
# daemon's memory outside the JS heap flat (DAEMON_ENV in src/rights/command_flags.ts).
set -e
export MALLOC_ARENA_MAX="\${MALLOC_ARENA_MAX:-2}"
export MALLOC_MMAP_THRESHOLD_="\${MALLOC_MMAP_THRESHOLD_:-131072}"
here=$(cd "$(dirname "$0")" && pwd)
deno=\${DENO:-deno}
layout=--standard-layout
[ "\${HOMED_LAYOUT:-}" = repo ] && layout=
command=\${1:-run}
[ $# -gt 0 ] && shift
case "$command" in
  flags|version|help|--help|-h|--version) exec "$deno" run --no-config --no-prompt --allow-read --allow-env "$here/homed.js" $layout "$command" "$@" ;;
esac
mode=$command
flags=$("$deno" run --no-config --no-prompt --allow-read --allow-env "$here/homed.js" $layout flags --mode "$mode")
exec "$deno" run --no-config $flags "$here/homed.js" $layout "$command" "$@"
`;

/**
 * esbuild's `require` shim for ESM output (it throws "Dynamic require of … is not supported") replaced by Node's
 * `createRequire`, as `deno bundle` itself does — but its own replacement only matches a shim whose minified name is
 * made of word characters, so a shim the minifier names `$e` is left in and the bundle fails at its first `require`
 * (denoland/deno#30023, open). Throws when a shim is still there afterwards, so a new form of it fails the build
 * rather than the first start.
 */
export function withNodeRequire(code: string): string {
  const id = "[\\w$]+";
  const shim = new RegExp(
    `var (${id})=\\((${id})=>typeof require<"u"\\?require:typeof Proxy<"u"\\?new Proxy\\(\\2,\\{get:\\((${id}),(${id})\\)=>` +
      `\\(typeof require<"u"\\?require:\\3\\)\\[\\4\\]\\}\\):\\2\\)\\(function\\((${id})\\)\\{if\\(typeof require<"u"\\)return ` +
      `require\\.apply\\(this,arguments\\);throw Error\\('Dynamic require of "'\\+\\5\\+'" is not supported'\\)\\}\\);`,
    "g",
  );
  let count = 0;
  const fixed = code.replace(shim, (_, name: string) => {
    const alias = `__homed_createRequire${count++}`;
    return `import{createRequire as ${alias}}from"node:module";var ${name}=${alias}(import.meta.url);`;
  });
  if (fixed.includes(`Dynamic require of "'+`)) {
    throw new Error("The bundle still holds esbuild's require shim in a form scripts/build.ts does not know");
  }
  return fixed;
}

/** `deno bundle` into `out`: homed.js, glue.wasm and silk.wasm beside it, and the launcher. */
async function bundle(out: string): Promise<string[]> {
  await Deno.mkdir(out, { recursive: true });
  const script = join(out, "homed.js");
  // The manifest goes first and comes back last: while it is missing the supervisor and the unit run the sources,
  // never a half-written bundle. Its fingerprint is taken before the build, so an edit meanwhile makes it stale.
  const manifestPath = `${script}.json`;
  await Deno.remove(manifestPath).catch((error) => {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  });
  const sources = sourceFingerprint(REPO);
  // Minified: V8 keeps every function's source for lazy compilation, so a smaller source is a smaller heap
  // (≈ 3.5 MB less idle RSS, docs/PERFORMANCE.md). Error messages are homed's own strings, unaffected.
  const result = await withBuildInfo(() =>
    run(["bundle", "--platform", "deno", "--minify", "--output", script, "src/main.ts"])
  );
  if (!result.ok) throw new Error(`deno bundle failed:\n${result.out}`);
  await Deno.writeTextFile(script, withNodeRequire(await Deno.readTextFile(script)));
  await Deno.copyFile(luaWasmPath(), join(out, "glue.wasm"));
  // silk-wasm's glue reads silk.wasm beside the script that runs it (QQ voice).
  await Deno.copyFile(silkWasmPath(), join(out, "silk.wasm"));
  await Deno.writeTextFile(join(out, "homed"), LAUNCHER, { mode: 0o755 });
  await Deno.chmod(join(out, "homed"), 0o755);
  const manifest: BundleManifest = { version: VERSION, commit: await commit(), sources };
  await Deno.writeTextFile(manifestPath, `${JSON.stringify(manifest, null, 2)}\n`);
  return [script, join(out, "glue.wasm"), join(out, "silk.wasm"), join(out, "homed"), manifestPath];
}

/** The systemd unit of a release, for the standard layout with the program installed where INSTALL.md says. */
function releaseUnit(kind: "binary" | "bundle", runFlags: string[]): string {
  return serviceUnit({
    execStart: kind === "binary"
      ? ["/usr/local/bin/homed", "--standard-layout", "run"]
      : ["/usr/local/bin/deno", "run", ...runFlags, "/usr/local/lib/homed/homed.js", "--standard-layout", "run"],
    environment: {},
    envFile: "/etc/homed/homed.env",
    readWritePaths: ["/var/lib/homed"],
    stopTimeoutSec: 15,
    documentation: "file:///usr/local/share/doc/homed/INSTALL.md",
  });
}

function installText(kind: "binary" | "bundle"): string {
  const place = kind === "binary" ? "sudo install -m 755 homed /usr/local/bin/homed" : [
    `sudo install -m 755 "$(npx -y deno@${DENO_VERSION} eval 'console.log(Deno.execPath())')" /usr/local/bin/deno`,
    "sudo install -d /usr/local/lib/homed && sudo install -m 644 homed.js glue.wasm silk.wasm /usr/local/lib/homed/",
    "sudo install -m 755 homed /usr/local/lib/homed/homed && sudo ln -sf /usr/local/lib/homed/homed /usr/local/bin/homed",
  ].join("\n");
  return `# Installing homed ${VERSION}

1. Put the program in place:

   ${place.split("\n").join("\n   ")}

2. Config and state (the standard layout: /etc/homed, /var/lib/homed):

   sudo install -d -m 755 /etc/homed /var/lib/homed
   sudo install -m 644 homed.example.yaml /etc/homed/homed.yaml   # then edit it${
    kind === "bundle" ? "\n   # (or let it ask: sudo homed init --config /etc/homed/homed.yaml --force)" : ""
  }
   sudo install -d /etc/homed/adapters && sudo install -m 644 adapters/*.lua /etc/homed/adapters/

   The starter knowledge is copied to /var/lib/homed/knowledge on the first start. The LLM key goes in
   /etc/homed/homed.env (mode 0600): DEEPSEEK_API_KEY=sk-…

3. Run it under systemd:

   sudo install -m 644 homed.service /etc/systemd/system/homed.service
   sudo systemctl daemon-reload && sudo systemctl enable --now homed
   journalctl -u homed -f

   ${
    kind === "bundle"
      ? "The unit's flags are those of the example config; after changing the listen address, the LLM host or\n   paths, print new ones with `homed flags` and put them in ExecStart."
      : "The binary's rights are fixed at build time for the standard layout (the daemon's, for every command):\n   after changing the listen address, the LLM host or paths, build it again with `deno task compile`. Commands\n   that write elsewhere are for a checkout or the bundle (`homed service unit` prints the unit to copy)."
  }
`;
}

/** The release archive: the build plus config, unit, adapters and install notes. */
async function release(out: string, kind: "binary" | "bundle"): Promise<string> {
  const stage = join(out, kind === "binary" ? "binary" : "bundle");
  // The manifest says which checkout's sources a bundle in dist/ is (daemon_entry.ts); an installed release has none.
  const built = kind === "binary"
    ? [await compile(stage)]
    : (await bundle(stage)).filter((path) => !path.endsWith(".json"));
  const runFlags =
    (await run(["run", "--no-prompt", "--allow-read", "--allow-env", "src/main.ts", "--standard-layout", "flags"]))
      .out.trim().split(/\s+/)
      .map((flag) =>
        flag.replace(luaWasmPath(), "/usr/local/lib/homed/glue.wasm").replace(
          silkWasmPath(),
          "/usr/local/lib/homed/silk.wasm",
        )
      );
  const mtime = Math.floor(Date.now() / 1000);
  const file = async (path: string, name: string, mode = 0o644): Promise<TarEntry> => ({
    path: `homed-${VERSION}/${name}`,
    type: "file",
    mode,
    mtime,
    data: await Deno.readFile(path),
  });
  const text = (name: string, value: string): TarEntry => ({
    path: `homed-${VERSION}/${name}`,
    type: "file",
    mode: 0o644,
    mtime,
    data: new TextEncoder().encode(value),
  });
  const entries: TarEntry[] = [
    ...await Promise.all(
      built.map((path) =>
        file(path, basename(path), basename(path).endsWith(".js") || basename(path).endsWith(".wasm") ? 0o644 : 0o755)
      ),
    ),
    await file(join(REPO, "config", "homed.example.yaml"), "homed.example.yaml"),
    text("homed.service", releaseUnit(kind, runFlags)),
    text("INSTALL.md", installText(kind)),
  ];
  for await (const adapter of Deno.readDir(join(REPO, "config", "adapters"))) {
    entries.push(await file(join(REPO, "config", "adapters", adapter.name), `adapters/${adapter.name}`));
  }
  const archive = join(
    out,
    `homed-${VERSION}-${kind === "binary" ? `${Deno.build.os}-${Deno.build.arch}` : "bundle"}.tar.gz`,
  );
  const blocks = [...entries.flatMap(tarBlocks), TAR_END];
  const compressed = new Blob(blocks as BlobPart[]).stream().pipeThrough(new CompressionStream("gzip"));
  await Deno.writeFile(archive, compressed);
  return archive;
}

if (import.meta.main) {
  const { values, positionals } = parseArgs({
    args: Deno.args,
    options: { out: { type: "string" }, bundle: { type: "boolean" } },
    allowPositionals: true,
  });
  const out = values.out ?? join(REPO, "dist");
  const action = positionals[0] ?? "";
  try {
    if (action === "compile") console.log(`Built ${await compile(out)}`);
    else if (action === "bundle") console.log(`Built ${(await bundle(out)).join(", ")}`);
    else if (action === "release") {
      let kind: "binary" | "bundle" = values.bundle ? "bundle" : "binary";
      if (kind === "binary" && !Deno.env.get("DENORT_BIN")) {
        console.error("DENORT_BIN is not set: trying deno compile's own download; the bundle is the fallback.");
      }
      let archive: string;
      try {
        archive = await release(out, kind);
      } catch (error) {
        if (kind === "bundle") throw error;
        console.error(`${(error as Error).message}\n\nFalling back to the bundle.`);
        kind = "bundle";
        archive = await release(out, kind);
      }
      console.log(`Packed ${archive} (${kind})`);
    } else {
      console.error("usage: build.ts compile|bundle|release [--out DIR] [--bundle]");
      Deno.exit(2);
    }
  } catch (error) {
    console.error((error as Error).message);
    Deno.exit(1);
  }
}
