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
    assert.equal(await Deno.readTextFile(`${path}.damaged-1970-01-01T00:00:00.042Z`), bad);
    await Deno.remove(`${path}.damaged-1970-01-01T00:00:00.042Z`);
  }
  await Deno.remove(dir, { recursive: true });
});

Deno.test("a sender's own route routes only that sender's messages from that source, before the source's route", () => {
  const table = new RouteTable({ "qq:group:": "qq:private:1" }, { http: "qq:private:2" }, undefined, {
    http: { alice: "qq:private:3" },
    "qq:group:9": { "30003000": "qq:private:30003000" },
  });
  assert.equal(table.resolve("http", "alice"), "qq:private:3");
  assert.equal(table.resolve("http", "owner"), "qq:private:2");
  assert.equal(table.resolve("http"), "qq:private:2");
  assert.equal(table.resolve("qq:group:9", "30003000"), "qq:private:30003000");
  assert.equal(table.resolve("qq:group:9", "40004000"), "qq:private:1");
  assert.equal(table.resolve("qq:group:8", "30003000"), "qq:private:1", "a sender's route is for one source");
  assert.deepEqual(table.entries(), [
    { source: "http", channel: "qq:private:2", origin: "runtime" },
    { source: "http", sender: "alice", channel: "qq:private:3", origin: "runtime" },
    { source: "qq:group:", channel: "qq:private:1", origin: "config" },
    { source: "qq:group:9", sender: "30003000", channel: "qq:private:30003000", origin: "runtime" },
  ]);
});

Deno.test("an older homed's routes.json is read as the owner's; it stays in that format until a sender has a route", async () => {
  const dir = await Deno.makeTempDir({ dir: "/tmp" });
  const path = join(dir, "routes.json");
  // As an older homed wrote it; a source named "version" is a route like any other there.
  await Deno.writeTextFile(path, '{\n  "http": "qq:private:7",\n  "version": "http"\n}\n');
  const table = await RouteTable.open({}, fileRouteStore(path, getLogger(["test"])));
  assert.equal(table.resolve("http", "alice"), "qq:private:7");
  assert.equal(table.resolve("version", "owner"), "http");
  await table.set("qq:group:5", "http");
  assert.equal(
    await Deno.readTextFile(path),
    '{\n  "http": "qq:private:7",\n  "version": "http",\n  "qq:group:5": "http"\n}\n',
  );
  await table.setForSender("http", "alice", "qq:private:8");
  assert.deepEqual(JSON.parse(await Deno.readTextFile(path)), {
    version: 2,
    routes: { http: "qq:private:7", version: "http", "qq:group:5": "http" },
    senders: { http: { alice: "qq:private:8" } },
  });
  const reopened = await RouteTable.open({}, fileRouteStore(path, getLogger(["test"])));
  assert.equal(reopened.resolve("http", "alice"), "qq:private:8");
  assert.equal(reopened.resolve("http", "bob"), "qq:private:7");
  assert.deepEqual(reopened.entries(), table.entries());
  await Deno.remove(dir, { recursive: true });
});

Deno.test("a route file of an unknown version or shape is kept aside like a corrupt one", async () => {
  const dir = await Deno.makeTempDir({ dir: "/tmp" });
  const path = join(dir, "routes.json");
  const bad = [
    '{"version": 3, "routes": {}}',
    '{"version": 2, "routes": []}',
    '{"version": 2, "senders": {"http": "qq:private:1"}}',
    '{"version": 2, "senders": {"http": {"alice": 5}}}',
  ];
  for (const text of bad) {
    await Deno.writeTextFile(path, text);
    const table = await RouteTable.open({}, fileRouteStore(path, getLogger(["test"]), () => 7));
    assert.deepEqual(table.entries(), [], text);
    assert.equal(await Deno.readTextFile(`${path}.damaged-1970-01-01T00:00:00.007Z`), text);
    await Deno.remove(`${path}.damaged-1970-01-01T00:00:00.007Z`);
  }
  await Deno.remove(dir, { recursive: true });
});
