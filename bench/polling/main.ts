/**
 * Resident memory under polling, as a web console or a monitor polls homed all day: a real homed (QQ off, empty data
 * dir), its RSS idle, after 6,000 `GET /healthz` (the anchor: the cheapest route), after 6,000 `GET /api/status`, and
 * after 6,000 more. Growth between the last two rows is memory kept per request — a leak (issue 18's review found
 * ≈ 1 KB per status call: native SQLite statements prepared anew each time).
 *
 * Run: deno task bench:polling (writes bench/out/polling/results.json; --record: bench/polling/results.json).
 */

import { startHomed, workspace } from "../../tests/support/homed_process.ts";
import { environment, rssMb, writeResults } from "../support/report.ts";

const ROUND = 6_000;

const homed = await startHomed(await workspace({ onebot: { enabled: false } }));
const rows: Record<string, { rss_mb: number; ms_per_request?: number }> = {};
try {
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  rows["idle, 2 s after start"] = { rss_mb: await rssMb(homed.pid) };
  const poll = async (label: string, path: string) => {
    const started = performance.now();
    for (let i = 0; i < ROUND; i++) await (await fetch(`${homed.url}${path}`)).arrayBuffer();
    const ms = Math.round((performance.now() - started) / ROUND * 1_000) / 1_000;
    rows[label] = { rss_mb: await rssMb(homed.pid), ms_per_request: ms };
  };
  await poll(`after ${ROUND} GET /healthz`, "/healthz");
  await poll(`after ${ROUND} GET /api/status`, "/api/status");
  await poll(`after ${ROUND} more GET /api/status`, "/api/status");
} finally {
  await homed.stop();
}
const env = await environment();
await writeResults(new URL("./results.json", import.meta.url), { ...env, requests_per_round: ROUND, rows });
console.log(`resident memory under polling (${env.commit.slice(0, 10)}, deno ${env.deno}, ${env.cpu})`);
console.table(rows);
