import assert from "node:assert/strict";
import { collectIdleGarbage, idleCollections } from "./idle_collection.ts";

Deno.test("a full collection is made and counted when the runtime exposes gc, and nothing otherwise", () => {
  const exposed = typeof (globalThis as { gc?: unknown }).gc === "function";
  const before = idleCollections().runs;
  assert.equal(collectIdleGarbage(), exposed);
  const after = idleCollections();
  assert.equal(after.runs, before + (exposed ? 1 : 0));
  if (exposed) assert.ok(after.last_ms !== null && after.last_ms >= 0, JSON.stringify(after));
});

Deno.test("under the daemon's V8 flags gc is exposed, and a collection frees what nothing holds", async () => {
  const { DAEMON_V8_FLAGS } = await import("../rights/command_flags.ts");
  const code = `
    import { collectIdleGarbage, idleCollections } from ${
    JSON.stringify(new URL("./idle_collection.ts", import.meta.url).href)
  };
    let weak = new WeakRef({ big: new Array(100_000).fill(1) });
    await new Promise((resolve) => setTimeout(resolve, 0));
    const ran = collectIdleGarbage();
    console.log(JSON.stringify({ ran, gone: weak.deref() === undefined, runs: idleCollections().runs }));
  `;
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["eval", DAEMON_V8_FLAGS, code],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(output.stdout).trim();
  assert.equal(output.code, 0, new TextDecoder().decode(output.stderr));
  assert.deepEqual(JSON.parse(text), { ran: true, gone: true, runs: 1 });
});
