/**
 * Start-up: time from spawning `deno run <the start task's flags> src/main.ts run` to the first `200` from `/healthz`,
 * and the resident memory 2 s later, idle — with an empty data dir, with 10,000 and with 100,000 memory documents
 * already stored — from the sources and as the minified bundle of `deno task bundle`. Three starts each, the median
 * reported. Anchors in the same run: an empty Deno script that listens and answers, and the *floor*: the same with
 * homed's start-up libraries imported first, under the daemon's V8 flags. Targets (relative to that floor): start
 * ≤ 300 ms; idle RSS with 10k documents ≤ floor + 24 MB, with 100k ≤ floor + 60 MB.
 *
 * Run: deno task bench:startup (writes bench/out/startup/results.json; --record: bench/startup/results.json).
 */

import { join } from "node:path";
import { getLogger } from "@logtape/logtape";
import { stringify } from "yaml";
import { systemClock } from "../../src/clock.ts";
import { DAEMON_ENV, DAEMON_V8_FLAGS } from "../../src/rights/command_flags.ts";
import { openMemory } from "../../src/memory/memory.ts";
import { childEnv, freePort, REPO, taskFlags } from "../../tests/support/homed_process.ts";
import { buildBundle, bundleRunArgs } from "../support/bundle.ts";
import { environment, percentile, rssMb, writeResults } from "../support/report.ts";

const RUNS = 3;

/** Spawns `args`, polls `url` until it answers 200; returns ms to that and the RSS after 2 s, then kills it. */
async function measure(args: string[], url: string, env: Record<string, string>): Promise<{ ms: number; rss: number }> {
  const started = performance.now();
  const child = new Deno.Command(Deno.execPath(), {
    args,
    cwd: REPO,
    // DAEMON_ENV: as `deno task start`, the supervisor and the unit start homed (the floor gets it too).
    env: childEnv({ ...DAEMON_ENV, ...env }),
    clearEnv: true,
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  let ms = Number.NaN;
  for (let i = 0; i < 6_000; i++) {
    try {
      const response = await fetch(url);
      await response.body?.cancel();
      if (response.ok) {
        ms = performance.now() - started;
        break;
      }
    } catch { /* not listening yet */ }
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  const rss = await rssMb(child.pid);
  child.kill("SIGTERM");
  await child.status;
  return { ms: Math.round(ms), rss };
}

/** How homed is started: from the sources (`deno task start`), or as the bundle `deno task bundle` builds. */
type Entry = { kind: "src" } | { kind: "bundle"; script: string };

/** Data dirs holding `documents` memory documents, seeded once and shared by the source and bundle rows. */
const seeded = new Map<number, string>();

async function seededDataDir(documents: number): Promise<string> {
  const known = seeded.get(documents);
  if (known) return known;
  const dataDir = await Deno.makeTempDir({ dir: "/tmp", prefix: `homed-startup-data-${documents}-` });
  if (documents) {
    const memory = await openMemory({ dir: join(dataDir, "memory"), clock: systemClock, logger: getLogger(["bench"]) });
    for (let i = 0; i < documents; i++) {
      memory.keepDocument({
        lines: [{
          speaker: "owner",
          text: `Note ${i}: the ${["lamp", "kettle", "router", "heater"][i % 4]} in room ${i % 97} was checked`,
        }],
        time: Date.UTC(2026, 0, 1) + i * 60_000,
        provenance: [`e${i}`],
      });
      // As in a daemon, where documents come turn by turn: the stores' own compactions get to run.
      if (i % 1_000 === 999) await new Promise((resolve) => setTimeout(resolve, 0));
    }
    await memory.reindex(); // what the memory job does every 30 minutes
    await memory.close();
  }
  seeded.set(documents, dataDir);
  return dataDir;
}

async function homedCase(documents: number, entry: Entry = { kind: "src" }): Promise<{ ms: number[]; rss: number[] }> {
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-startup-" });
  const dataDir = await seededDataDir(documents);
  const results = { ms: [] as number[], rss: [] as number[] };
  for (let run = 0; run < RUNS; run++) {
    const port = freePort();
    const configPath = join(dir, "homed.yaml");
    await Deno.writeTextFile(
      configPath,
      stringify({ daemon: { listen_addr: `127.0.0.1:${port}`, data_dir: dataDir } }),
    );
    const env = { HOMED_CONFIG: configPath };
    const args = entry.kind === "src"
      ? ["run", ...await taskFlags("run", env), "src/main.ts", "run"]
      : await bundleRunArgs(entry.script, env);
    const { ms, rss } = await measure(args, `http://127.0.0.1:${port}/healthz`, env);
    results.ms.push(ms);
    results.rss.push(rss);
  }
  await Deno.remove(dir, { recursive: true });
  return results;
}

/**
 * The stack's libraries that homed needs before it listens (config: yaml and zod; HTTP: hono and node:http; logging: logtape;
 * node:sqlite), imported by a script that then listens like the anchor: the floor any homed stands on.
 */
const LIBRARIES = ["yaml", "zod", "hono", "@logtape/logtape", "node:sqlite", "node:http"];

async function anchorCase(libraries: readonly string[] = []): Promise<{ ms: number[]; rss: number[] }> {
  const results = { ms: [] as number[], rss: [] as number[] };
  for (let run = 0; run < RUNS; run++) {
    const port = freePort();
    const code = libraries.map((name) => `await import("${name}");`).join(" ") +
      `Deno.serve({ hostname: "127.0.0.1", port: ${port}, onListen() {} }, () => new Response("ok"));`;
    // The floor runs under the daemon's V8 flags (its young-generation cap trims RSS), so the difference is homed's.
    const v8 = libraries.length ? [DAEMON_V8_FLAGS] : [];
    const { ms, rss } = await measure(
      ["eval", ...v8, "--no-prompt", "--allow-net=127.0.0.1", "--allow-read=.", "--allow-env", code],
      `http://127.0.0.1:${port}/`,
      {},
    );
    results.ms.push(ms);
    results.rss.push(rss);
  }
  return results;
}

const rows: Record<
  string,
  { healthz_ms: number; rss_mb: number; over_floor_mb?: number; target?: string; runs: string }
> = {};
const row = (result: { ms: number[]; rss: number[] }) => ({
  healthz_ms: percentile(result.ms, 50),
  rss_mb: percentile(result.rss, 50),
  runs: result.ms.map((ms, i) => `${ms} ms / ${result.rss[i]} MB`).join(", "),
});
/** A homed row with its distance to the floor and, where one is set, the target it is held to. */
const homedRow = (result: { ms: number[]; rss: number[] }, allowanceMb?: number) => {
  const figures = row(result);
  const over = Math.round((figures.rss_mb - floor.rss_mb) * 10) / 10;
  return {
    ...figures,
    over_floor_mb: over,
    ...(allowanceMb === undefined
      ? {}
      : { target: `≤ floor + ${allowanceMb} MB: ${over <= allowanceMb ? "met" : "NOT met"}` }),
  };
};
rows["anchor: empty Deno server"] = row(await anchorCase());
const floor = row(await anchorCase(LIBRARIES));
rows["floor: the stack's libraries, listening"] = floor;
rows["homed, empty data dir"] = homedRow(await homedCase(0));
rows["homed, 10k memory documents"] = homedRow(await homedCase(10_000), 24);
rows["homed, 100k memory documents"] = homedRow(await homedCase(100_000), 60);
const bundle = await buildBundle("homed-bench-bundle-");
rows["bundled homed.js, empty data dir"] = homedRow(await homedCase(0, { kind: "bundle", script: bundle }));
rows["bundled homed.js, 10k memory documents"] = homedRow(
  await homedCase(10_000, { kind: "bundle", script: bundle }),
  24,
);
rows["bundled homed.js, 100k memory documents"] = homedRow(
  await homedCase(100_000, { kind: "bundle", script: bundle }),
  60,
);
await Deno.remove(join(bundle, ".."), { recursive: true });
for (const dataDir of seeded.values()) await Deno.remove(dataDir, { recursive: true });

const env = await environment();
await writeResults(new URL("./results.json", import.meta.url), { ...env, runs_each: RUNS, rows });
console.log(`start-up to /healthz and idle RSS (${env.commit.slice(0, 10)}, deno ${env.deno}, ${env.cpu})`);
console.table(Object.fromEntries(Object.entries(rows).map(([name, { runs: _runs, ...figures }]) => [name, figures])));
