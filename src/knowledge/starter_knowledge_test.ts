import assert from "node:assert/strict";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { getLogger } from "@logtape/logtape";
import { seedKnowledge, STARTER_KNOWLEDGE } from "./starter_knowledge.ts";

async function files(dir: string): Promise<Record<string, string>> {
  const found: Record<string, string> = {};
  const walk = async (at: string) => {
    for await (const entry of Deno.readDir(at)) {
      if (entry.isDirectory) await walk(join(at, entry.name));
      else found[relative(dir, join(at, entry.name))] = await Deno.readTextFile(join(at, entry.name));
    }
  };
  await walk(dir);
  return found;
}

Deno.test("the embedded starter knowledge is exactly the knowledge/ folder", async () => {
  assert.deepEqual({ ...STARTER_KNOWLEDGE }, await files(fileURLToPath(new URL("../../knowledge", import.meta.url))));
});

Deno.test("starter knowledge seeds a missing folder once, and never touches an existing one", async () => {
  const base = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-seed-" });
  try {
    const dir = join(base, "var", "lib", "homed", "knowledge");
    assert.equal(await seedKnowledge(dir, getLogger("test")), 3);
    assert.deepEqual(await files(dir), { ...STARTER_KNOWLEDGE });
    await Deno.remove(join(dir, "cooking"), { recursive: true });
    assert.equal(await seedKnowledge(dir, getLogger("test")), 0);
    await assert.rejects(Deno.stat(join(dir, "cooking")), Deno.errors.NotFound, "a deletion stays deleted");
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});
