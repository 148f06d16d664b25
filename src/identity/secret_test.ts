import assert from "node:assert/strict";
import { sameDigest, sameSecret, secretDigest } from "./secret.ts";

Deno.test("secrets compare equal only when equal; digests of another length never match", async () => {
  assert.equal(await sameSecret("a-long-enough-secret", "a-long-enough-secret"), true);
  assert.equal(await sameSecret("a-long-enough-secret", "a-long-enough-secreT"), false);
  assert.equal(await sameSecret("", "x"), false);
  assert.equal(sameDigest(await secretDigest("x"), (await secretDigest("x")).subarray(0, 31)), false);
});
