import assert from "node:assert/strict";
import { decodeBase64, encodeBase64 } from "./base64.ts";

Deno.test("base64 round-trips bytes of any size; what is not base64 is refused, not guessed", () => {
  const big = new Uint8Array(3 * 1024 * 1024).map((_, i) => (i * 31) % 256);
  assert.deepEqual(decodeBase64(encodeBase64(big)), big, "3 MiB: no stack overflow");
  assert.equal(encodeBase64(new TextEncoder().encode("hi")), "aGk=");
  assert.deepEqual(decodeBase64("aGk"), new TextEncoder().encode("hi"), "padding is optional");
  for (const bad of ["not base64!", "aGk=\n", "a", "aGk==="]) assert.equal(decodeBase64(bad), undefined, bad);
});
