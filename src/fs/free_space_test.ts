import assert from "node:assert/strict";
import { formatBytes, freeSpace } from "./free_space.ts";

Deno.test("the free space of a real folder: within the disk's size, and a missing folder says so", () => {
  const space = freeSpace(Deno.cwd());
  assert.ok("free_bytes" in space, JSON.stringify(space));
  assert.ok(space.total_bytes > 0 && space.free_bytes >= 0 && space.free_bytes <= space.total_bytes);
  const missing = freeSpace("/nonexistent/homed-data");
  assert.ok("unknown" in missing);
  assert.match(missing.unknown, /cannot read the free space of \/nonexistent\/homed-data/);
});

/** `freeSpace(dir)` in a child Deno with exactly `flags` (`deno run`, which grants nothing unasked), as the daemon. */
async function inChild(flags: string[], dir: string): Promise<Record<string, unknown>> {
  const module = new URL("./free_space.ts", import.meta.url).href;
  const script = `${dir}/probe.ts`;
  await Deno.writeTextFile(
    script,
    `import { freeSpace } from ${JSON.stringify(module)};\nconsole.log(JSON.stringify(freeSpace(${
      JSON.stringify(dir)
    })));\n`,
  );
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--no-prompt", "--no-config", "--no-lock", ...flags, script],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  return JSON.parse(new TextDecoder().decode(out.stdout));
}

Deno.test("the daemon's rights are enough: read access to the folder and --allow-sys=statfs, no program run", async () => {
  const dir = await Deno.makeTempDir({ dir: "/tmp" });
  try {
    const read = `--allow-read=${dir},${new URL(".", import.meta.url).pathname}`;
    const granted = await inChild([read, "--allow-sys=statfs"], dir);
    assert.equal(typeof granted.free_bytes, "number", JSON.stringify(granted));
    // Without the sys right: unknown, with what to do, and no crash.
    const refused = await inChild([read], dir);
    assert.match(String(refused.unknown), /needs --allow-sys=statfs/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("sizes as people read them", () => {
  assert.equal(formatBytes(0), "0 B");
  assert.equal(formatBytes(1023), "1023 B");
  assert.equal(formatBytes(268_435_456), "256 MB");
  assert.equal(formatBytes(1_610_612_736), "1.5 GB");
  assert.equal(formatBytes(5 * 1024 ** 3 + 1), "5 GB");
});
