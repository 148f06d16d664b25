import assert from "node:assert/strict";
import { GluePatchError, HOOK_GLOBAL, patchGlue, STEPS_GLOBAL } from "./glue_patch.ts";
import { luaWasmPath } from "./wasm_path.ts";

Deno.test("patchGlue adds the step globals to wasmoon's glue, leaves other modules alone, and refuses a glue it does not know", async () => {
  const glue = await Deno.readFile(luaWasmPath());
  const patched = patchGlue(glue)!;
  assert.ok(WebAssembly.validate(patched), "the patched glue validates");
  const names = (bytes: Uint8Array) =>
    WebAssembly.Module.exports(new WebAssembly.Module(bytes as Uint8Array<ArrayBuffer>)).map((entry) => entry.name);
  assert.deepEqual(names(patched), [...names(glue), STEPS_GLOBAL, HOOK_GLOBAL], "the glue's exports are kept");

  // (module (func (export "f") (loop br 0))): not wasmoon's glue.
  const other = new Uint8Array([
    ...[0, 97, 115, 109, 1, 0, 0, 0, 1, 4, 1, 96, 0, 0, 3, 2, 1, 0, 7, 5, 1, 1, 102, 0, 0],
    ...[10, 9, 1, 7, 0, 3, 64, 12, 0, 11, 11],
  ]);
  assert.equal(patchGlue(other), undefined);
  assert.equal(patchGlue(new TextEncoder().encode("not wasm at all")), undefined);

  // Another build of the glue: the matcher's error text differs, so the matcher is not found.
  const changed = glue.slice();
  const text = new TextEncoder().encode("pattern too complex");
  const at = changed.findIndex((_, i) => text.every((byte, k) => changed[i + k] === byte));
  changed[at] = "P".charCodeAt(0);
  assert.throws(() => patchGlue(changed), GluePatchError);
  assert.throws(() => patchGlue(changed), /0 candidates for the function that refers to "pattern too complex"/);
});
