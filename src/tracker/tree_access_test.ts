/**
 * The tracker's guard at the moment of each access (`tree_access.ts`), with real links: the state a folder swapped
 * for a link right before a write leaves is refused by the write itself, whatever was checked earlier.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { symlink } from "../../tests/support/links.ts";
import {
  findEntry,
  listFolder,
  lstatEntry,
  readEntry,
  removeEntry,
  writeEntryFile,
  writeInPlace,
} from "./tree_access.ts";

async function setup(): Promise<{ dir: string; base: string; outside: string }> {
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-tree-access-" });
  const base = join(dir, "knowledge");
  const outside = join(dir, "outside");
  await Deno.mkdir(base);
  await Deno.mkdir(outside);
  await Deno.writeTextFile(join(outside, "a.md"), "outside a\n");
  await symlink(outside, join(base, "notes"));
  return { dir, base, outside };
}

async function names(dir: string): Promise<string[]> {
  return (await Array.fromAsync(Deno.readDir(dir))).map((entry) => entry.name).sort();
}

Deno.test("reads: behind a link nothing is there; the link itself is an entry with its target", async () => {
  const { dir, base, outside } = await setup();
  try {
    assert.equal(await findEntry(base, "notes/a.md"), "other");
    assert.equal(await readEntry(base, "notes/a.md"), undefined);
    assert.equal(await lstatEntry(base, "notes/a.md"), undefined);
    assert.equal(await listFolder(base, "notes"), undefined);
    assert.deepEqual(await findEntry(base, "notes"), { kind: "link", target: outside });
    assert.equal(await findEntry(base, "nothing.md"), "missing");
    await assert.rejects(findEntry(base, "../outside/a.md"), TypeError);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("writes: a link on the way is refused at the write, naming it; a link at the name is replaced, not written through", async () => {
  const { dir, base, outside } = await setup();
  try {
    const bytes = new TextEncoder().encode("committed\n");
    await assert.rejects(
      writeEntryFile(base, "notes/a.md", bytes, 0o644),
      (error: Error) => {
        assert.equal(
          error.message,
          `${join(base, "notes")} is a symbolic link, and the tracker never writes through a link`,
        );
        return true;
      },
    );
    await assert.rejects(
      writeEntryFile(base, "notes/new/b.md", bytes, 0o644),
      /notes is a symbolic link, and the tracker never writes through a link/,
    );
    await assert.rejects(
      removeEntry(base, "notes/a.md", { kind: "file" }),
      (error: Error) => {
        assert.equal(
          error.message,
          `${join(base, "notes")} is a symbolic link, and the tracker never removes through a link`,
        );
        return true;
      },
    );
    assert.deepEqual(await names(outside), ["a.md"], "nothing created or removed outside");
    assert.equal(await Deno.readTextFile(join(outside, "a.md")), "outside a\n");

    await symlink(join(outside, "a.md"), join(base, "leak.md"));
    await assert.rejects(
      writeInPlace(base, "leak.md", bytes, 0o644),
      (error: Error) => {
        assert.equal(error.message, `${join(base, "leak.md")} is a symbolic link; the tracker does not write it`);
        return true;
      },
    );
    await writeEntryFile(base, "leak.md", bytes, 0o640);
    const info = await Deno.lstat(join(base, "leak.md"));
    assert.ok(info.isFile && !info.isSymlink && (info.mode! & 0o777) === 0o640, "the link itself was replaced");
    assert.equal(await Deno.readTextFile(join(outside, "a.md")), "outside a\n", "its target untouched");
    assert.deepEqual(await names(base), ["leak.md", "notes"], "no temporary file left");
    assert.deepEqual(await names(outside), ["a.md"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
