import assert from "node:assert/strict";
import { sameDigest, sameSecret, secretDigest } from "./secret.ts";

Deno.test("secrets compare equal only when equal; digests of another length never match", () => {
  assert.equal(sameSecret("a-long-enough-secret", "a-long-enough-secret"), true);
  assert.equal(sameSecret("a-long-enough-secret", "a-long-enough-secreT"), false);
  assert.equal(sameSecret("", "x"), false);
  assert.equal(sameDigest(secretDigest("x"), secretDigest("x").subarray(0, 31)), false);
});

Deno.test("a secret's digest is its SHA-256, computed without leaving the thread", () => {
  const digest = secretDigest("abc");
  assert.ok(digest instanceof Uint8Array);
  assert.equal(
    [...digest].map((byte) => byte.toString(16).padStart(2, "0")).join(""),
    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
  );
});
