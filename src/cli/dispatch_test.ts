import assert from "node:assert/strict";

/**
 * Runs `homed <argv>` with `dispatch` and these commands in a child process, since ending homed is what is tested:
 * `refused` throws a UsageError, `broken` a built-in TypeError, `reported` hands a TypeError to `reportFailure`.
 */
async function homed(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const module = (name: string) => JSON.stringify(new URL(name, import.meta.url).href);
  const script = `
    import { dispatch } from ${module("./dispatch.ts")};
    import { reportFailure } from ${module("./output.ts")};
    import { UsageError } from ${module("./usage_error.ts")};
    await dispatch(${JSON.stringify(argv)}, new Map([
      ["refused", () => { throw new UsageError("refused: name the thing to refuse"); }],
      ["broken", () => { throw new TypeError("Cannot read properties of undefined (reading 'x')"); }],
      ["reported", () => reportFailure("reported: ", () => { throw new TypeError("not a function"); })],
    ]));
  `;
  const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
    args: ["eval", "--no-config", script],
    env: { NO_COLOR: "1" },
    stdin: "null",
  }).output();
  return { code, stdout: new TextDecoder().decode(stdout), stderr: new TextDecoder().decode(stderr) };
}

Deno.test("a UsageError ends homed with exit code 2 and its message, an unknown command or option too", async () => {
  const refused = await homed("refused");
  assert.deepEqual(refused, { code: 2, stdout: "", stderr: "homed: refused: name the thing to refuse\n" });
  const unknown = await homed("frobnicate");
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /^homed: unknown command "frobnicate"\n\nhomed \S+: a 24\/7 butler/);
  const option = await homed("refused", "--frobnicate");
  assert.equal(option.code, 2);
  assert.match(option.stderr, /^homed: Unknown option '--frobnicate'/);
});

Deno.test("a TypeError a command throws is a failure with exit code 1, never a usage error", async () => {
  const broken = await homed("broken");
  assert.equal(broken.code, 1);
  assert.doesNotMatch(broken.stderr, /^homed: /m);
  assert.match(broken.stderr, /Uncaught \(in promise\) TypeError: Cannot read properties of undefined/);
  const reported = await homed("reported");
  assert.deepEqual(reported, { code: 1, stdout: "", stderr: "homed: reported: not a function\n" });
});
