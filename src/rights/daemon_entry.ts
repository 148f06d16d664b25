/**
 * Which entry runs the daemon when homed starts it from a checkout (the supervisor, the systemd unit): the bundle
 * `deno task bundle` built into `dist/homed.js` — ≈ 14 MB less resident memory and a faster start than the sources
 * (`bench:startup`) — when it was built from exactly these sources, else the sources themselves, with the reason.
 *
 * Freshness is a fingerprint: `scripts/build.ts bundle` writes beside `homed.js` a manifest (`homed.js.json`) with the
 * sha256 of what it was built from — every file under `src/` but `src/build_info.ts` (which the build rewrites), the
 * files `src/` embeds from outside it (`with { type: "text" }`: the persona, the example config, the intents, the
 * starter knowledge, the Lua adapters), `deno.json` and `deno.lock` — and this module computes the same over the
 * checkout now. Dates are not trusted: a `git checkout` or a copy sets them at will.
 *
 * @module
 */

import { createHash } from "node:crypto";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { runsOnDeno } from "../config/runs_on_deno.ts";

/** The bundle's script and its manifest, relative to the checkout. */
export const BUNDLE_SCRIPT = join("dist", "homed.js");
/** The manifest `scripts/build.ts bundle` writes beside the script. */
export const BUNDLE_MANIFEST = join("dist", "homed.js.json");

/**
 * Deno's flags for running the bundle besides its rights: no config file. From the checkout's folder Deno would read
 * its `deno.json` and resolve `wasmoon` to `node_modules/` through the import map, so the bundle would look for
 * `glue.wasm` there rather than beside itself (where its flags grant it) — and set the npm packages up it carries.
 * Without one it runs as an installed release does.
 */
export const BUNDLE_DENO_FLAGS: readonly string[] = ["--no-config"];

/** The file the build rewrites (the commit) for its duration, so it is no input of the fingerprint. */
const BUILD_INFO = join("src", "build_info.ts");

/** How the fingerprint reads the checkout; the default is the file system, tests give their own tree. */
export interface SourceReader {
  readFile(path: string): Uint8Array;
  /** Whether a file is at `path` (the bundle is megabytes: not read just to know it is there). */
  exists(path: string): boolean;
  /** The names in a folder, each a file or a folder (anything else — a link, a socket — is skipped). */
  readDir(path: string): { name: string; isFile: boolean; isDirectory: boolean }[];
}

/** The file system, synchronously: the fingerprint is computed where the flags are, which are computed synchronously. */
export const FILE_SYSTEM: SourceReader = {
  readFile: (path) => Deno.readFileSync(path),
  exists: (path) => {
    try {
      return Deno.statSync(path).isFile;
    } catch (error) {
      // Not there; anything else (no right to look) is for the read that follows to report.
      return !(error instanceof Deno.errors.NotFound);
    }
  },
  readDir: (path) => [...Deno.readDirSync(path)],
};

/** What `scripts/build.ts bundle` records beside `homed.js`. */
export interface BundleManifest {
  /** homed's version (`src/version.ts`). */
  version: string;
  /** The commit (`git rev-parse --short=12 HEAD`), or `unknown`. */
  commit: string;
  /** `sha256:<hex>` of the sources it was built from ({@link sourceFingerprint}). */
  sources: string;
}

/** Which entry runs the daemon, and why — one line for a log or a command's output. */
export type DaemonEntry =
  | { kind: "bundle"; root: string; script: string; reason: string }
  | { kind: "sources"; root: string; script: string; reason: string; bundle: "missing" | "stale" | "unreadable" }
  | { kind: "self"; reason: string };

const embedded = /^(?:import|export)\s[^;]*?\sfrom\s+"(\.{1,2}\/[^"]+)"\s+with\s*\{\s*type:\s*"(?:text|bytes)"\s*\}/gm;

/** The files under `dir` (relative to `root`), depth first, in name order. */
function filesUnder(root: string, dir: string, reader: SourceReader): string[] {
  const out: string[] = [];
  const entries = reader.readDir(join(root, dir)).sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory) out.push(...filesUnder(root, path, reader));
    else if (entry.isFile) out.push(path);
  }
  return out;
}

/**
 * The files a bundle is built from, relative to `root`, sorted: `src/` (but `src/build_info.ts`), what `src/` embeds
 * from outside it, `deno.json` and `deno.lock`.
 *
 * @example
 * ```ts
 * bundleInputs("/srv/homed");
 * // ["config/adapters/anthropic.lua", …, "deno.json", "deno.lock", "personal.md", "src/agent/…", …]
 * ```
 */
export function bundleInputs(root: string, reader: SourceReader = FILE_SYSTEM): string[] {
  const sources = filesUnder(root, "src", reader).filter((path) => path !== BUILD_INFO);
  const outside = new Set<string>();
  const decoder = new TextDecoder();
  for (const path of sources) {
    if (!path.endsWith(".ts") || path.endsWith("_test.ts")) continue;
    for (const match of decoder.decode(reader.readFile(join(root, path))).matchAll(embedded)) {
      const target = relative(root, resolve(root, dirname(path), match[1]!));
      if (!target.startsWith(`src/`) && !target.startsWith("..")) outside.add(target);
    }
  }
  return [...sources, ...outside, "deno.json", "deno.lock"].sort();
}

/**
 * `sha256:<hex>` over {@link bundleInputs}: each file's path and the sha256 of its bytes, one line each.
 *
 * @example
 * ```ts
 * sourceFingerprint("/srv/homed"); // "sha256:3f0c…"
 * ```
 */
export function sourceFingerprint(root: string, reader: SourceReader = FILE_SYSTEM): string {
  const all = createHash("sha256");
  for (const path of bundleInputs(root, reader)) {
    const one = createHash("sha256").update(reader.readFile(join(root, path))).digest("hex");
    all.update(`${path}\0${one}\n`);
  }
  return `sha256:${all.digest("hex")}`;
}

/**
 * The checkout this module runs from, when homed runs from its sources on Deno; undefined in the bundle (whose
 * daemon is the bundle itself) and in a compiled binary.
 *
 * @example
 * ```ts
 * sourceCheckout(); // "/srv/homed/" from `deno run … src/main.ts`; undefined in dist/homed.js or a binary
 * ```
 */
export function sourceCheckout(moduleUrl: string = import.meta.url): string | undefined {
  if (!runsOnDeno() || !/^file:\/\/.*\/src\/rights\/daemon_entry\.ts$/.test(moduleUrl)) return undefined;
  return fileURLToPath(new URL("../../", moduleUrl));
}

/** Reads and checks the manifest; throws naming the file and what is wrong with it. */
function readManifest(path: string, reader: SourceReader): BundleManifest {
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder().decode(reader.readFile(path)));
  } catch (error) {
    throw new Error(`${path}: not JSON (${(error as Error).message})`);
  }
  const manifest = value as Partial<Record<keyof BundleManifest, unknown>> | null;
  for (const field of ["version", "commit", "sources"] as const) {
    if (typeof manifest?.[field] !== "string") {
      throw new Error(`${path}: "${field}" is ${JSON.stringify(manifest?.[field] ?? null)}, not a string`);
    }
  }
  if (!/^sha256:[0-9a-f]{64}$/.test(manifest!.sources as string)) {
    throw new Error(`${path}: "sources" is ${JSON.stringify(manifest!.sources)}, not "sha256:" and 64 hex digits`);
  }
  return manifest as BundleManifest;
}

/**
 * The entry that runs the daemon from the checkout `root`: its bundle when `dist/homed.js` and its manifest are there
 * and the manifest's fingerprint is that of the sources now; otherwise the sources, saying why. Without a checkout
 * (the bundle itself, a compiled binary) the program stays itself.
 *
 * @example
 * ```ts
 * const entry = daemonEntry(sourceCheckout());
 * entry.reason;
 * // "running the bundle /srv/homed/dist/homed.js (built from these sources)"
 * // or "running the sources: /srv/homed/dist/homed.js is stale (built from other sources) — `deno task bundle` rebuilds it"
 * ```
 */
export function daemonEntry(root: string | undefined, reader: SourceReader = FILE_SYSTEM): DaemonEntry {
  if (root === undefined) return { kind: "self", reason: "running itself (the bundle or a compiled homed)" };
  const script = join(root, BUNDLE_SCRIPT);
  const manifestPath = join(root, BUNDLE_MANIFEST);
  const sources = join(root, "src", "main.ts");
  const rebuild = "`deno task bundle` rebuilds it";
  const fallback = (bundle: "missing" | "stale" | "unreadable", why: string): DaemonEntry => ({
    kind: "sources",
    root,
    script: sources,
    bundle,
    reason: `running the sources: ${why} — ${rebuild}`,
  });
  if (!reader.exists(script)) return fallback("missing", `${script} is missing`);
  if (!reader.exists(manifestPath)) {
    return fallback("missing", `${manifestPath} is missing (a bundle built before manifests, or a build cut short)`);
  }
  let manifest: BundleManifest;
  try {
    manifest = readManifest(manifestPath, reader);
  } catch (error) {
    return fallback("unreadable", `the bundle's manifest is unreadable: ${(error as Error).message}`);
  }
  let now: string;
  try {
    now = sourceFingerprint(root, reader);
  } catch (error) {
    return fallback("unreadable", `the sources cannot be fingerprinted (${(error as Error).message})`);
  }
  if (manifest.sources !== now) return fallback("stale", `${script} is stale (built from other sources)`);
  return { kind: "bundle", root, script, reason: `running the bundle ${script} (built from these sources)` };
}

/**
 * What the supervisor and `homed service` read to choose the entry: the inputs' folders and files, the bundle's
 * folder. Empty outside a checkout.
 *
 * @example
 * ```ts
 * entryReadRights("/srv/homed");
 * // ["/srv/homed/src", "/srv/homed/deno.json", "/srv/homed/deno.lock", "/srv/homed/dist", "/srv/homed/personal.md", …]
 * ```
 */
export function entryReadRights(root: string | undefined, reader: SourceReader = FILE_SYSTEM): string[] {
  if (root === undefined) return [];
  let embeds: string[] = [];
  try {
    embeds = bundleInputs(root, reader).filter((path) => !path.startsWith("src/"));
  } catch {
    // An unreadable checkout: the fingerprint fails later and says so; the flags stay what they can be.
  }
  const files = [...new Set(["src", "dist", "deno.json", "deno.lock", ...embeds])];
  return files.map((path) => join(root, path));
}
