/**
 * What glibc's malloc holds in a running homed, and how much of it is in use: attaches gdb for a moment (the process
 * pauses ≈ 1 s) and asks the process itself for `malloc_info`, which needs no debug symbols. Beside a soak, taken every
 * few minutes, it tells memory homed's native code still uses (in use: SQLite, Deno's own buffers) from memory glibc
 * keeps after it was freed (held, free in its arenas) — a leak grows the first, fragmentation the second.
 *
 * Run (root, with Debian's gdb): deno run --allow-run=gdb --allow-read=/tmp --allow-write=/tmp
 * bench/soak/malloc_info.ts --pid PID [--every S --times N]
 *
 * @module
 */

function option(name: string, fallback: string): string {
  const at = Deno.args.indexOf(`--${name}`);
  return at >= 0 ? Deno.args[at + 1]! : fallback;
}

const PID = Number(option("pid", "0"));
if (!(PID > 0)) throw new Error(`--pid: got ${option("pid", "(none)")}; allowed: the process id of a running homed`);
const EVERY_S = Number(option("every", "300"));
const TIMES = Number(option("times", "1"));

/** One reading: bytes glibc holds from the system, of it free in its arenas, and mmapped chunks in use. */
export interface MallocReading {
  arenas: number;
  heldBytes: number;
  freeBytes: number;
  mmappedBytes: number;
}

/** Reads `malloc_info`'s XML (its totals) from `xml`. */
export function parseMallocInfo(xml: string): MallocReading {
  // The whole process's figures come after the last </heap>; each <heap> has its own before that.
  const whole = xml.slice(xml.lastIndexOf("</heap>"));
  const total = (type: string) =>
    Number(new RegExp(`<total type="${type}" count="\\d+" size="(\\d+)"`).exec(whole)?.[1] ?? 0);
  return {
    arenas: [...xml.matchAll(/<heap nr=/g)].length,
    heldBytes: Number(/<system type="current" size="(\d+)"/.exec(whole)?.[1] ?? 0),
    freeBytes: total("fast") + total("rest"),
    mmappedBytes: total("mmap"),
  };
}

async function read(pid: number): Promise<MallocReading> {
  const out = await Deno.makeTempFile({ dir: "/tmp", prefix: "homed-malloc-", suffix: ".xml" });
  try {
    const gdb = await new Deno.Command("gdb", {
      args: [
        "-p",
        String(pid),
        "-batch",
        "-nx",
        "-ex",
        `set $f = (void*)fopen("${out}", "w")`,
        "-ex",
        "call (int)malloc_info(0, $f)",
        "-ex",
        "call (int)fclose($f)",
      ],
      stdout: "null",
      stderr: "null",
      signal: AbortSignal.timeout(60_000),
    }).output();
    if (!gdb.success) {
      throw new Error(`gdb could not attach to ${pid} (exit ${gdb.code}): is it running, and are you root?`);
    }
    return parseMallocInfo(await Deno.readTextFile(out));
  } finally {
    await Deno.remove(out).catch(() => {});
  }
}

if (import.meta.main) {
  const mb = (bytes: number) => (bytes / 1e6).toFixed(2);
  for (let n = 0; n < TIMES; n++) {
    if (n) await new Promise((resolve) => setTimeout(resolve, EVERY_S * 1_000));
    const r = await read(PID);
    console.log(
      `${new Date().toISOString()} arenas ${r.arenas}: held ${mb(r.heldBytes)} MB, free in arenas ${
        mb(r.freeBytes)
      }, ` +
        `in use ${mb(r.heldBytes - r.freeBytes)} + mmapped ${mb(r.mmappedBytes)}`,
    );
  }
}
