/**
 * The daemon's first start fetches only what the daemon uses: `deno.lock` (what `deno task start` installs) holds none
 * of the test-only packages, and `tests/test.lock` (what the test and check tasks use) is that lock plus them, at the
 * same versions — so the two never drift apart.
 */

import assert from "node:assert/strict";

interface Lock {
  specifiers: Record<string, string>;
  npm: Record<string, unknown>;
}

const TEST_ONLY = ["openai", "playwright-core", "@modelcontextprotocol/server-", "stemmer", "wink-porter2-stemmer"];

async function lock(path: string): Promise<Lock> {
  return JSON.parse(await Deno.readTextFile(new URL(`../${path}`, import.meta.url)));
}

Deno.test("deno.lock holds no test-only package; tests/test.lock is it plus those, at the same versions", async () => {
  const daemon = await lock("deno.lock");
  const tests = await lock("tests/test.lock");
  const testOnly = (name: string) => TEST_ONLY.some((prefix) => name.replace(/^npm:/, "").startsWith(prefix));
  assert.deepEqual(Object.keys(daemon.specifiers).filter(testOnly), [], "specifiers of deno.lock");
  assert.deepEqual(Object.keys(daemon.npm).filter(testOnly), [], "packages of deno.lock");
  for (const [specifier, version] of Object.entries(daemon.specifiers)) {
    assert.equal(tests.specifiers[specifier], version, `${specifier} in tests/test.lock`);
  }
  for (const key of Object.keys(daemon.npm)) assert.ok(key in tests.npm, `${key} in tests/test.lock`);
  const extra = Object.keys(tests.specifiers).filter((specifier) => !(specifier in daemon.specifiers));
  assert.ok(extra.length > 0 && extra.every(testOnly), `only test-only packages are extra: ${extra.join(", ")}`);
});
