/**
 * How fast serial lines become inputs: a real pseudo-terminal made by `socat` (its slave end is the port the device
 * opens through `stty` and `dd`, as for a USB adapter), the far end writing N timestamped, numbered lines as fast as
 * the pty takes them, and the reader taking each InputEvent from the IOManager the moment it is queued (the input
 * queue's default lane of 50 per sender, so the device's wait-when-refused path is part of what is measured). Reported:
 * lines/s from the first line written to the last input read, whether every line came, once and in order, and the
 * per-line latency (written → read) p50/p99.
 *
 * Run: `deno run --no-prompt --allow-read=.,/tmp --allow-write=bench,/tmp --allow-sys=cpus --allow-run=git,socat,stty,dd
 * bench/devices/serial.ts [--lines N] [--record]` (writes bench/out/devices/serial.json; `--record`:
 * bench/devices/serial.json).
 *
 * @module
 */

import { getLogger } from "@logtape/logtape";
import { systemClock } from "../../src/clock.ts";
import { SerialDevice } from "../../src/devices/serial/serial_device.ts";
import { IOManager } from "../../src/io/io_manager.ts";
import { RouteTable } from "../../src/io/route_table.ts";
import { ToolRegistry } from "../../src/tools/registry.ts";
import { environment, percentile, writeResults } from "../support/report.ts";

const flag = Deno.args.indexOf("--lines");
const LINES = flag === -1 ? 100_000 : Number(Deno.args[flag + 1]);
/** Lines per write of the far end: what a fast microcontroller's UART driver hands the adapter at once. */
const BATCH = 64;
const WARM_UP = 1_000;
/** Lines written one at a time, for the latency of a line that does not queue behind others. */
const PACED = 2_000;
const round = (x: number) => Math.round(x * 1000) / 1000;

const dir = await Deno.makeTempDir({ prefix: "homed-bench-serial-" });
const path = `${dir}/port`;
const far = new Deno.Command("socat", {
  args: [`pty,raw,echo=0,link=${path}`, "STDIO"],
  stdin: "piped",
  stdout: "null",
  stderr: "null",
}).spawn();
for (let tries = 0;; tries++) {
  try {
    await Deno.lstat(path);
    break;
  } catch {
    if (tries > 500) throw new Error(`socat did not make ${path} within 5 s`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const serial = new SerialDevice({
  ports: {
    bench: { path, baud: 115_200, turns: false, trust: "household", delimiter: "\n", maxLineBytes: 4_096 },
  },
  clock: systemClock,
  logger: getLogger(["bench", "serial"]),
});
const io = new IOManager({
  clock: systemClock,
  routes: new RouteTable({}, {}, undefined),
  tools: new ToolRegistry(),
  logger: getLogger(["bench"]),
});
await io.replaceDevices([serial]);
const writer = far.stdin.getWriter();
const encoder = new TextEncoder();

/** Writes lines `from` … `to - 1` as `<n> <ms written>`; resolves with when the first went. */
async function writeLines(from: number, to: number): Promise<number> {
  const started = performance.now();
  for (let at = from; at < to; at += BATCH) {
    const now = performance.now();
    let chunk = "";
    for (let n = at; n < Math.min(to, at + BATCH); n++) chunk += `${n} ${now}\n`;
    await writer.write(encoder.encode(chunk));
  }
  return started;
}

/** Reads `count` inputs; returns their latencies and how many were missing or out of order. */
async function readLines(first: number, count: number) {
  const latencies: number[] = [];
  let expected = first;
  let disorder = 0;
  let last = 0;
  for (let i = 0; i < count; i++) {
    const event = await io.next();
    if (!event) break;
    last = performance.now();
    const [n, written] = String(event.payload.text).split(" ");
    if (Number(n) !== expected) disorder++;
    expected = Number(n) + 1;
    latencies.push(last - Number(written));
  }
  return { latencies, disorder, last, got: latencies.length };
}

/** Writes `count` lines from `from` one at a time, each once the one before was read: the latency of one line alone. */
async function pacedLines(from: number, count: number): Promise<number[]> {
  const latencies: number[] = [];
  for (let n = from; n < from + count; n++) {
    const [, read] = await Promise.all([writeLines(n, n + 1), readLines(n, 1)]);
    latencies.push(...read.latencies);
  }
  return latencies;
}

// Warm-up: the JIT, the pipes and the pty's buffers.
await Promise.all([writeLines(0, WARM_UP), readLines(0, WARM_UP)]);

const [started, read] = await Promise.all([writeLines(WARM_UP, WARM_UP + LINES), readLines(WARM_UP, LINES)]);
const seconds = (read.last - started) / 1000;
const paced = await pacedLines(WARM_UP + LINES, PACED);
const status = (serial.status().ports as Record<string, { lines: number; queue_waits: number }>).bench!;

await io.close();
try {
  far.kill("SIGTERM");
} catch { /* gone */ }
await writer.close().catch(() => {});
await far.status;
await Deno.remove(dir, { recursive: true });

const env = await environment();
const flood = {
  lines: LINES,
  received: read.got,
  lost: LINES - read.got,
  out_of_order: read.disorder,
  seconds: round(seconds),
  lines_per_second: Math.round(read.got / seconds),
  p50_ms: round(percentile(read.latencies, 50)),
  p99_ms: round(percentile(read.latencies, 99)),
  max_ms: round(Math.max(...read.latencies)),
};
const alone = {
  lines: PACED,
  received: paced.length,
  lost: PACED - paced.length,
  out_of_order: 0,
  p50_ms: round(percentile(paced, 50)),
  p99_ms: round(percentile(paced, 99)),
  max_ms: round(Math.max(...paced)),
};
const rows = {
  "flood: N lines as fast as the pty takes them (latency includes queueing)": flood,
  "one line at a time (written once the one before was read)": alone,
};
await writeResults(new URL("./serial.json", import.meta.url), {
  ...env,
  batch_lines: BATCH,
  warm_up_lines: WARM_UP,
  device_lines: status.lines,
  queue_waits: status.queue_waits,
  rows,
});
console.log(`serial line → InputEvent over a socat pty (${env.commit.slice(0, 10)}, deno ${env.deno}, ${env.cpu})`);
console.table(rows);
console.log(`device: ${status.lines} lines handed in, ${status.queue_waits} waited for the input queue`);
if (flood.lost > 0 || flood.out_of_order > 0 || alone.lost > 0) {
  console.error(`${flood.lost + alone.lost} lines lost, ${flood.out_of_order} out of order`);
  Deno.exit(1);
}
