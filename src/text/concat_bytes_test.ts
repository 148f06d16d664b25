import assert from "node:assert/strict";
import { concatBytes } from "./concat_bytes.ts";

Deno.test("concatBytes joins chunks in order, returns a lone chunk itself, and an empty array for none", () => {
  assert.deepEqual(concatBytes([]), new Uint8Array());
  const lone = new Uint8Array([9, 8]);
  assert.equal(concatBytes([lone]), lone);
  const joined = concatBytes([new Uint8Array([1, 2]), new Uint8Array(), new Uint8Array([3]), new Uint8Array([4, 5])]);
  assert.deepEqual(joined, new Uint8Array([1, 2, 3, 4, 5]));
  // A view into a larger buffer counts from its own start.
  const backing = new Uint8Array([0, 6, 7, 0]);
  assert.deepEqual(concatBytes([backing.subarray(1, 3), new Uint8Array([8])]), new Uint8Array([6, 7, 8]));
});
