import assert from "node:assert/strict";
import { getLogger } from "@logtape/logtape";
import { testToolContext } from "../../../tests/support/tool_context.ts";
import { systemClock } from "../../clock.ts";
import { ToolRegistry } from "../../tools/registry.ts";
import { CameraDevice, type Seen } from "./camera_device.ts";

const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]);

/** A stand-in for ffmpeg: a script that prints `bytes` on stdout (as `-f image2 -` does), or misbehaves. */
async function standIn(dir: string, name: string, body: string): Promise<string> {
  const path = `${dir}/${name}`;
  await Deno.writeTextFile(path, `#!/bin/sh\n${body}\n`);
  await Deno.chmod(path, 0o755);
  return path;
}

function camera(command: string[], looked: Uint8Array[], timeoutMs = 2_000) {
  return new CameraDevice({
    settings: { command, timeoutMs, maxImageBytes: 1_024 },
    look: (image): Promise<Seen> => {
      looked.push(image);
      return Promise.resolve({
        text: "the front door, a parcel on the mat",
        media: { id: "ab.png", mime: "image/png" },
      });
    },
    clock: systemClock,
    logger: getLogger(["test"]),
  });
}

Deno.test("camera_snapshot runs the capture command and gives the vision model exactly its picture; guests may not", async () => {
  const dir = await Deno.makeTempDir({ prefix: "homed-camera-" });
  try {
    await Deno.writeFile(`${dir}/frame.png`, PNG);
    const ffmpeg = await standIn(dir, "ffmpeg", `cat "${dir}/frame.png"`);
    const looked: Uint8Array[] = [];
    // Through sh: a stand-in script needs no run right of its own.
    const device = camera(["sh", ffmpeg, "-f", "v4l2", "-i", "/dev/video0"], looked);
    const registry = new ToolRegistry();
    for (const tool of device.tools()) registry.register(tool, "device:camera");
    const result = await registry.call("camera_snapshot", "{}", testToolContext("qq:private:1", "household"));
    assert.equal(result.ok, true, result.content);
    assert.equal(
      result.content,
      "The camera shows: the front door, a parcel on the mat\n(The picture is held as media ab.png.)",
    );
    assert.deepEqual(looked, [PNG]);
    const guest = await registry.call("camera_snapshot", "{}", testToolContext("qq:group:1", "guest"));
    assert.equal(guest.ok, false);
    assert.match(guest.content, /household/);
    assert.equal(looked.length, 1, "no picture for a guest");
    assert.equal((device.status() as { snapshots: number }).snapshots, 1);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a camera command that hangs is killed at its deadline; a missing one, a failing one and an oversize picture say so", async () => {
  const dir = await Deno.makeTempDir({ prefix: "homed-camera-" });
  try {
    const looked: Uint8Array[] = [];
    const hung = camera(["sh", await standIn(dir, "hung", "exec sleep 30")], looked, 300);
    const started = performance.now();
    await assert.rejects(
      hung.snapshot(),
      /^CommandError: sh did not finish within 300 ms and was stopped \(devices\.camera\.command\)$/,
    );
    assert.ok(performance.now() - started < 5_000);
    await assert.rejects(
      camera(["homed-no-such-ffmpeg"], looked).snapshot(),
      /homed-no-such-ffmpeg is not installed \(not found on PATH\); install it or change devices\.camera\.command/,
    );
    const failing = await standIn(dir, "failing", "echo '/dev/video0: No such file or directory' >&2; exit 1");
    await assert.rejects(
      camera(["sh", failing], looked).snapshot(),
      /failed \(exit code 1: \/dev\/video0: No such file or directory\); check devices\.camera\.command/,
    );
    const big = await standIn(dir, "big", "head -c 5000 /dev/zero");
    await assert.rejects(camera(["sh", big], looked).snapshot(), /printed more than 1024 bytes and was stopped/);
    const silent = await standIn(dir, "silent", "exit 0");
    await assert.rejects(camera(["sh", silent], looked).snapshot(), /The camera command printed no picture/);
    assert.deepEqual(looked, [], "nothing reached the vision model");
    const status = hung.status() as { failures: number; last_error: string };
    assert.equal(status.failures, 1);
    assert.match(status.last_error, /did not finish within 300 ms/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
