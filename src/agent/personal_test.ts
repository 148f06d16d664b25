import assert from "node:assert/strict";
import { join } from "node:path";
import { DEFAULT_PERSONA_TEXT, loadPersona, MAX_PERSONA_BYTES } from "./personal.ts";

Deno.test("the persona is the file's text byte for byte, frozen", async () => {
  const dir = await Deno.makeTempDir({ dir: "/tmp" });
  const path = join(dir, "personal.md");
  const text = "# 管家\r\n\n  Keep \u00a0this exactly.\n\n";
  await Deno.writeTextFile(path, text);
  const persona = await loadPersona({ path, explicit: true });
  assert.equal(persona.text, text);
  assert.equal(persona.source, path);
  assert.match(persona.sha256, /^[0-9a-f]{64}$/);
  assert.ok(Object.isFrozen(persona));
  await Deno.remove(dir, { recursive: true });
});

Deno.test("a missing default file falls back to the shipped persona; a named one is an error", async () => {
  const missing = "/tmp/homed-no-such-dir/personal.md";
  const fallback = await loadPersona({ path: missing, explicit: false });
  assert.equal(fallback.text, DEFAULT_PERSONA_TEXT);
  assert.equal(fallback.source, "embedded default");
  assert.equal(DEFAULT_PERSONA_TEXT, await Deno.readTextFile(new URL("../../personal.md", import.meta.url)));
  await assert.rejects(
    loadPersona({ path: missing, explicit: true }),
    /^TypeError: paths\.personal: \/tmp\/homed-no-such-dir\/personal\.md does not exist$/,
  );
});

Deno.test("empty, oversize and non-UTF-8 personas are refused, naming the file", async () => {
  const dir = await Deno.makeTempDir({ dir: "/tmp" });
  const path = join(dir, "p.md");
  await Deno.writeTextFile(path, " \n\t\n");
  await assert.rejects(loadPersona({ path, explicit: false }), new RegExp(`paths\\.personal: ${path} is empty`));
  await Deno.writeTextFile(path, "x".repeat(MAX_PERSONA_BYTES + 1));
  await assert.rejects(
    loadPersona({ path, explicit: false }),
    new RegExp(`has ${MAX_PERSONA_BYTES + 1} bytes; allowed: at most ${MAX_PERSONA_BYTES}`),
  );
  await Deno.writeFile(path, new Uint8Array([0x23, 0xff, 0xfe]));
  await assert.rejects(loadPersona({ path, explicit: false }), new RegExp(`${path} is not valid UTF-8 text`));
  await Deno.remove(dir, { recursive: true });
});
