import assert from "node:assert/strict";
import { join } from "node:path";
import { getLogger } from "@logtape/logtape";
import { fileRouteStore, RouteTable } from "./route_table.ts";

Deno.test("exact routes beat prefixes, the longest prefix wins, unrouted sources answer themselves", () => {
  const table = new RouteTable(
    { "qq:": "qq:private:1", "qq:group:": "qq:private:2", "qq:group:9": "http" },
    {},
    undefined,
  );
  assert.equal(table.resolve("qq:group:9"), "http");
  assert.equal(table.resolve("qq:group:8"), "qq:private:2");
  assert.equal(table.resolve("qq:private:5"), "qq:private:1");
  assert.equal(table.resolve("http"), "http");
  assert.equal(table.resolve("serial:kitchen"), "serial:kitchen");
});

Deno.test("run-time routes persist across reopening and override config", async () => {
  const dir = await Deno.makeTempDir({ dir: "/tmp" });
  const path = join(dir, "routes.json");
  const store = fileRouteStore(path, getLogger(["test"]));
  const table = await RouteTable.open({ http: "http" }, store);
  await table.set("http", "qq:private:7");
  const reopened = await RouteTable.open({ http: "http" }, fileRouteStore(path, getLogger(["test"])));
  assert.equal(reopened.resolve("http"), "qq:private:7");
  assert.deepEqual(reopened.entries(), [{ source: "http", channel: "qq:private:7", origin: "runtime" }]);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("a corrupt route file is kept aside, never overwritten, and the table starts from config", async () => {
  const dir = await Deno.makeTempDir({ dir: "/tmp" });
  const path = join(dir, "routes.json");
  for (const bad of ['{"http": ', '["x"]', '{"http": 5}']) {
    await Deno.writeTextFile(path, bad);
    const table = await RouteTable.open({ a: "b" }, fileRouteStore(path, getLogger(["test"]), () => 42));
    assert.deepEqual(table.entries(), [{ source: "a", channel: "b", origin: "config" }]);
    assert.equal(await Deno.readTextFile(`${path}.bad-42`), bad);
    await Deno.remove(`${path}.bad-42`);
  }
  await Deno.remove(dir, { recursive: true });
});
