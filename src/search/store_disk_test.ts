import assert from "node:assert/strict";
import { join } from "node:path";
import { StoreHealth } from "../fs/store_health.ts";
import { VectorStore } from "./store.ts";
import { fillDisk, run, tmpfs } from "../../tests/support/tmpfs.ts";

Deno.test({
  name:
    "a search index on a full disk: writes go on (searched, not logged), degraded once, caught up when space returns",
  ignore: tmpfs.ignore,
  fn: async () => {
    tmpfs.assertAvailable();
    const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-index-full-" });
    await run("mount", ["-t", "tmpfs", "-o", "size=512k", "tmpfs", dir]);
    const now = Date.parse("2026-12-04T02:00:00Z");
    const health = new StoreHealth(() => now);
    const told: string[] = [];
    const options = {
      now: () => now,
      health: { record: health, store: "knowledge index" },
      onRecovery: (message: string) => told.push(message),
    };
    const folder = join(dir, "knowledge");
    let store: VectorStore | undefined = await VectorStore.open(folder, options);
    try {
      store.put("d0", "The spare key is under the blue flowerpot");
      await store.sync();
      await fillDisk(join(dir, "filler"));
      const long = (n: number) => `Note ${n}: ${"the dumplings are in the freezer, third drawer. ".repeat(60)}`;
      let n = 0;
      while (!health.degraded.length) {
        assert.ok(n < 200, "the disk never refused a log write");
        store.put(`d${++n}`, long(n));
      }
      assert.deepEqual(health.degraded.map((entry) => [entry.store, entry.kind, entry.path]), [[
        "knowledge index",
        "disk_full",
        folder,
      ]]);
      assert.ok(store.unlogged > 0);
      for (let more = 0; more < 5; more++) store.put(`d${++n}`, long(n));
      store.delete("d0");
      assert.equal(store.search("blue flowerpot").length, 0, "the delete is searched at once");
      assert.equal(store.search("dumplings freezer", { k: 1000 }).length, n, "every put is searched");
      // A compaction cannot write its segment: refused, the old generation still in use, no temporary file left.
      await assert.rejects(() => store!.compact(), /No space left on device/);
      assert.deepEqual([...Deno.readDirSync(folder)].filter((entry) => entry.name.endsWith(".tmp")), []);
      await store.sync(); // the heartbeat: still full, no error
      assert.equal(health.degraded.length, 1);

      await Deno.remove(join(dir, "filler"));
      await store.sync(); // the heartbeat catches up
      assert.equal(store.unlogged, 0);
      assert.deepEqual(health.degraded, []);
      assert.equal(told.filter((line) => line.includes("cannot be written")).length, 1, told.join("\n"));
      await store.close();
      store = await VectorStore.open(folder, options);
      assert.deepEqual(store.report.recovered, [], "no torn or corrupt record in the log");
      assert.equal(store.size, n);
      assert.equal(store.has("d0"), false);
      assert.deepEqual(store.index.verify(), []);
    } finally {
      await store?.close();
      await run("umount", [dir]);
      await Deno.remove(dir, { recursive: true });
    }
  },
});
