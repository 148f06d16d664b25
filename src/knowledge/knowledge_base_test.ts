import assert from "node:assert/strict";
import { join } from "node:path";
import { getLogger } from "@logtape/logtape";
import { FakeClock } from "../../tests/support/fake_clock.ts";
import { VectorStore } from "../search/store.ts";
import { ToolRegistry } from "../tools/registry.ts";
import { testToolContext } from "../../tests/support/tool_context.ts";
import { waitFor } from "../../tests/support/wait.ts";
import { symlink } from "../../tests/support/links.ts";
import { KnowledgeBase } from "./knowledge_base.ts";
import { knowledgePrompt } from "./knowledge_prompt.ts";
import { knowledgeTools } from "./knowledge_tools.ts";

const STARTERS = new URL("../../knowledge/", import.meta.url).pathname;

async function setup(copyStarters = true, extra: { beforeReplace?: (path: string) => Promise<void> | void } = {}) {
  const root = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-knowledge-" });
  const dir = join(root, "knowledge");
  await Deno.mkdir(dir);
  if (copyStarters) {
    for (const topic of ["smart_home", "cooking"]) {
      await Deno.mkdir(join(dir, topic));
      await Deno.copyFile(join(STARTERS, topic, "content.md"), join(dir, topic, "content.md"));
    }
  }
  const storeDir = join(root, "store");
  const clock = new FakeClock(new Date(2026, 10, 30, 9).getTime());
  const store = await VectorStore.open(storeDir);
  const knowledge = await KnowledgeBase.open({ dir, store, clock, logger: getLogger(["test"]), ...extra });
  return { root, dir, storeDir, clock, store, knowledge };
}

async function teardown(parts: { root: string; store: VectorStore; knowledge: KnowledgeBase }) {
  await parts.knowledge.close();
  await parts.store.close();
  await Deno.remove(parts.root, { recursive: true });
}

Deno.test("the starter topics are indexed by section and searchable in both languages", async () => {
  const parts = await setup();
  const { knowledge } = parts;
  assert.deepEqual(knowledge.list().map((t) => [t.topic, t.sections]), [["cooking", 4], ["smart_home", 5]]);
  const [rice] = knowledge.search("电饭煲煮饭放多少水", 1);
  assert.equal(rice!.topic, "cooking");
  assert.equal(rice!.heading, "Rice in a rice cooker · 电饭煲煮饭");
  assert.ok(rice!.score > 0 && rice!.score <= 1.5);
  assert.match(rice!.snippet, /1\.2/);
  assert.equal(
    knowledge.search("smoke alarm keeps chirping", 1)[0]!.heading,
    'Smoke alarm chirping · 烟雾报警器"滴"声',
  );
  assert.equal(knowledge.search("路由器老是掉线", 1)[0]!.topic, "smart_home");
  assert.deepEqual(knowledge.counts(), { topics: 2, sections: 9 });
  await teardown(parts);
});

Deno.test("create makes a new topic, then appends dated sections; search sees them at once", async () => {
  const parts = await setup(false);
  const { knowledge, dir, clock } = parts;
  assert.deepEqual(await knowledge.create("菜谱", "可乐鸡翅：鸡翅煎黄后加一罐可乐收汁。", "可乐鸡翅"), {
    topic: "菜谱",
    created: true,
    heading: "2026-11-30 可乐鸡翅",
  });
  clock.advance(86_400_000);
  assert.deepEqual(await knowledge.create("菜谱", "Steam the fish for 8 minutes after the water boils."), {
    topic: "菜谱",
    created: false,
    heading: "2026-12-01",
  });
  assert.equal(
    await Deno.readTextFile(join(dir, "菜谱", "content.md")),
    "# 菜谱\n\n<!-- learned by homed 2026-11-30 -->\n## 2026-11-30 可乐鸡翅\n\n可乐鸡翅：鸡翅煎黄后加一罐可乐收汁。\n\n" +
      "<!-- learned by homed 2026-12-01 -->\n## 2026-12-01\n\nSteam the fish for 8 minutes after the water boils.\n",
  );
  assert.deepEqual(knowledge.list().map((topic) => [topic.topic, topic.sections, topic.learned]), [["菜谱", 3, true]]);
  assert.equal(knowledge.search("可乐鸡翅怎么做", 1)[0]!.heading, "2026-11-30 可乐鸡翅");
  assert.equal(knowledge.search("how long to steam fish", 1)[0]!.heading, "2026-12-01");
  await teardown(parts);
});

Deno.test("create refuses bad topics and oversize entries, naming them, and writes nothing", async () => {
  const root = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-knowledge-" });
  const store = await VectorStore.open(join(root, "store"));
  const knowledge = await KnowledgeBase.open({
    dir: join(root, "k"),
    store,
    clock: new FakeClock(),
    logger: getLogger(["test"]),
    maxEntryChars: 50,
    maxFileBytes: 100,
  });
  await assert.rejects(
    knowledge.create("../escape", "x"),
    /^RangeError: Topic name "\.\.\/escape" is not allowed: it contains "\.\."$/,
  );
  await assert.rejects(knowledge.create(".git", "x"), /Topic name "\.git" is not allowed: it is a hidden name/);
  await assert.rejects(knowledge.create("/abs", "x"), /Topic name "\/abs" is not allowed: it is an absolute path/);
  await assert.rejects(knowledge.create("ok", "  "), /Knowledge content must be a non-empty text/);
  await assert.rejects(
    knowledge.create("ok", "x".repeat(51)),
    /Knowledge content has 51 characters; allowed: at most 50/,
  );
  await knowledge.create("ok", "x".repeat(40));
  await assert.rejects(
    knowledge.create("ok", "y".repeat(40)),
    /Topic "ok" would grow to \d+ bytes; allowed: at most 100 per topic/,
  );
  assert.deepEqual([...Deno.readDirSync(join(root, "k"))].map((e) => e.name), ["ok"]);
  assert.equal((await Deno.readTextFile(join(root, "k", "ok", "content.md"))).includes("yyy"), false);
  await knowledge.close();
  await store.close();
  await Deno.remove(root, { recursive: true });
});

Deno.test("hand edits, new topics and deleted topics are picked up by sync", async () => {
  const parts = await setup();
  const { knowledge, dir } = parts;
  const cooking = join(dir, "cooking", "content.md");
  await Deno.writeTextFile(
    cooking,
    `${await Deno.readTextFile(cooking)}\n## Dumplings · 饺子\n\nBoil frozen dumplings, add cold water twice.\n`,
  );
  await Deno.mkdir(join(dir, "garden"));
  await Deno.writeTextFile(join(dir, "garden", "content.md"), "# garden\n\nWater tomatoes at dawn.\n");
  await Deno.remove(join(dir, "smart_home"), { recursive: true });
  await Deno.mkdir(join(dir, ".hidden"));
  assert.deepEqual(await knowledge.sync(), { added: ["garden"], updated: ["cooking"], removed: ["smart_home"] });
  assert.equal(knowledge.search("frozen dumplings", 1)[0]!.heading, "Dumplings · 饺子");
  assert.equal(knowledge.search("路由器掉线", 3).filter((h) => h.topic === "smart_home").length, 0);
  assert.deepEqual(await knowledge.sync(), { added: [], updated: [], removed: [] });
  await teardown(parts);
});

Deno.test("the watcher picks up a hand edit without a heartbeat", async () => {
  const parts = await setup();
  const { knowledge, dir } = parts;
  knowledge.watch();
  const cooking = join(dir, "cooking", "content.md");
  await Deno.writeTextFile(
    cooking,
    `${await Deno.readTextFile(cooking)}\n## Pancakes\n\nWhisk flour, milk and eggs; rest the batter.\n`,
  );
  await waitFor(
    () => knowledge.search("pancake batter", 1)[0]?.heading === "Pancakes",
    "the watcher to index the edit",
  );
  // A last edit right before close leaves a debounce timer armed: close must clear it (the sanitizer checks).
  await Deno.writeTextFile(cooking, `${await Deno.readTextFile(cooking)}\n## Tea\n\nSteep 3 minutes.\n`);
  await new Promise((resolve) => setTimeout(resolve, 60));
  await teardown(parts);
});

Deno.test("a restart reuses the persisted index: nothing is re-added", async () => {
  const parts = await setup();
  await parts.knowledge.close();
  await parts.store.close();
  const store = await VectorStore.open(parts.storeDir);
  const knowledge = await KnowledgeBase.open({
    dir: parts.dir,
    store,
    clock: parts.clock,
    logger: getLogger(["test"]),
  });
  assert.deepEqual(await knowledge.sync(), { added: [], updated: [], removed: [] });
  assert.equal(knowledge.search("溏心蛋煮几分钟", 1)[0]!.heading, "Soft-boiled eggs · 溏心蛋");
  await knowledge.close();
  await store.close();
  await Deno.remove(parts.root, { recursive: true });
});

Deno.test("an index written by another analyzer is emptied at open and rebuilt from the files at once", async () => {
  const parts = await setup();
  await parts.knowledge.close();
  await parts.store.close();
  await Deno.writeTextFile(join(parts.storeDir, "analyzer"), "engine-0\n"); // as if written by an older homed
  const recovered: string[] = [];
  const store = await VectorStore.open(parts.storeDir, { onRecovery: (message) => recovered.push(message) });
  assert.equal(store.size, 0);
  assert.match(recovered[0]!, /the analyzer changed from engine-0 to engine-\d+/);
  const knowledge = await KnowledgeBase.open({
    dir: parts.dir,
    store,
    clock: parts.clock,
    logger: getLogger(["test"]),
  });
  assert.ok(store.size > 0, "every section indexed again on open");
  assert.equal(knowledge.search("溏心蛋煮几分钟", 1)[0]!.heading, "Soft-boiled eggs · 溏心蛋");
  await knowledge.close();
  await store.close();
  await Deno.remove(parts.root, { recursive: true });
});

Deno.test("tools validate their arguments and report bad topics as error results", async () => {
  const parts = await setup();
  const registry = new ToolRegistry();
  for (const tool of knowledgeTools(parts.knowledge)) registry.register(tool);
  const context = testToolContext();
  const search = await registry.call("knowledge_search", '{"query":"番茄炒蛋","k":1}', context);
  assert.equal(JSON.parse(search.content)[0].heading, "Tomato and egg stir-fry · 番茄炒蛋");
  const bad = await registry.call("knowledge_create", '{"topic":"../x","content":"c"}', context);
  assert.deepEqual(bad, {
    ok: false,
    content: 'Error: tool "knowledge_create" failed: Topic name "../x" is not allowed: it contains ".."',
  });
  for (const name of ["", "../x", "/etc", "a/b", "a\\b", ".git", "two words", "-x", "x".repeat(65), "C:x", "a..b"]) {
    const refused = await registry.call("knowledge_create", JSON.stringify({ topic: name, content: "c" }), context);
    assert.equal(refused.ok, false, name);
    // The schema refuses bad lengths (its message quotes the arguments), the topic check the rest; both show the name.
    const named = refused.content.includes(`Topic name ${JSON.stringify(name)} is not allowed`) ||
      (refused.content.includes('field "topic" must NOT have') &&
        refused.content.includes(`{"topic":${JSON.stringify(name)}`));
    assert.ok(named, `${name}: ${refused.content}`);
  }
  assert.deepEqual([...Deno.readDirSync(parts.dir)].map((e) => e.name).sort(), ["cooking", "smart_home"]);
  const missing = await registry.call("knowledge_create", '{"topic":"cooking"}', context);
  assert.match(missing.content, /missing required field "content"/);
  const made = await registry.call(
    "knowledge_create",
    '{"topic":"cooking","content":"Noodles: 3 minutes.","title":"Noodles"}',
    context,
  );
  assert.equal(made.content, 'Appended section "2026-11-30 Noodles" to topic "cooking"');
  assert.equal(JSON.parse((await registry.call("knowledge_list", "{}", context)).content)[0].sections, 5);
  const contributor = knowledgePrompt(parts.knowledge);
  const system = (await contributor.system!("owner"))!;
  assert.match(system.body, /record it with knowledge_create/);
  assert.match(system.body, /Topics: cooking, smart_home\./);
  assert.doesNotMatch(system.body, /番茄炒蛋/, "matching sections are per message, not in the system message");
  const input = { text: "番茄炒蛋怎么做？", source: "http", sender: "owner", time: 0 };
  const reference = (await contributor.reference!(input, []))!;
  assert.match(reference.body, /^- \[cooking › Tomato and egg stir-fry · 番茄炒蛋\] /);
  assert.equal(await contributor.reference!({ ...input, text: "zzzz qqqq" }, []), undefined);
  await teardown(parts);
});

Deno.test("create keeps the mode and owner of a file the user made", async () => {
  const parts = await setup();
  const cooking = join(parts.dir, "cooking", "content.md");
  await Deno.chmod(cooking, 0o644);
  const before = await Deno.stat(cooking);
  await parts.knowledge.create("cooking", "Congee: 1 part rice, 8 parts water, 1 hour.", "Congee");
  const after = await Deno.stat(cooking);
  assert.equal((after.mode! & 0o777).toString(8), "644");
  assert.deepEqual([after.uid, after.gid], [before.uid, before.gid]);
  await Deno.chmod(cooking, 0o664);
  await parts.knowledge.create("cooking", "Tea eggs: simmer 2 hours.", "Tea eggs");
  assert.equal(((await Deno.stat(cooking)).mode! & 0o777).toString(8), "664");
  await parts.knowledge.create("garden", "Water tomatoes at dawn.", "Tomatoes");
  assert.equal(((await Deno.stat(join(parts.dir, "garden", "content.md"))).mode! & 0o777).toString(8), "644");
  assert.deepEqual(
    [...Deno.readDirSync(join(parts.dir, "cooking"))].map((e) => e.name),
    ["content.md"],
    "no temporary file left",
  );
  await teardown(parts);
});

Deno.test("a hand edit that lands while create writes is kept, and the entry is added after it", async () => {
  let edits = 0;
  const parts = await setup(true, {
    beforeReplace: async (path) => {
      if (edits++ === 0) await Deno.writeTextFile(path, `${await Deno.readTextFile(path)}\n## Hand edit\n\nMine.\n`);
    },
  });
  await parts.knowledge.create("cooking", "Porridge: stir often.", "Porridge");
  const text = await Deno.readTextFile(join(parts.dir, "cooking", "content.md"));
  assert.match(
    text,
    /## Hand edit\n\nMine\.\n\n<!-- learned by homed 2026-11-30 -->\n## 2026-11-30 Porridge\n\nPorridge: stir often\.\n$/,
  );
  assert.equal(edits, 2, "one attempt lost to the edit, the second one written");
  assert.equal(parts.knowledge.search("porridge", 1)[0]!.heading, "2026-11-30 Porridge");
  await teardown(parts);
});

Deno.test("a file that keeps changing makes create fail clearly and write nothing", async () => {
  let edits = 0;
  const parts = await setup(true, {
    beforeReplace: async (path) => {
      await Deno.writeTextFile(path, `${await Deno.readTextFile(path)}\nedit ${++edits}\n`);
    },
  });
  const path = join(parts.dir, "cooking", "content.md");
  await assert.rejects(
    parts.knowledge.create("cooking", "Soup: simmer.", "Soup"),
    new RegExp(`^Error: ${path} kept changing while homed tried to add an entry \\(5 attempts\\); nothing was written`),
  );
  const text = await Deno.readTextFile(path);
  assert.ok(text.endsWith("edit 5\n"), "the last hand edit is what is on disk");
  assert.ok(!text.includes("Soup: simmer."));
  assert.deepEqual([...Deno.readDirSync(join(parts.dir, "cooking"))].map((e) => e.name), ["content.md"]);
  await teardown(parts);
});

Deno.test("reindex runs under the same guard as sync and create", async () => {
  const parts = await setup();
  const order: string[] = [];
  const creating = parts.knowledge.create("cooking", "Rice noodles: soak 10 minutes.", "Rice noodles")
    .then(() => order.push("create"));
  const reindexing = parts.knowledge.reindex().then(() => order.push("reindex"));
  const syncing = parts.knowledge.sync().then(() => order.push("sync"));
  await Promise.all([creating, reindexing, syncing]);
  assert.deepEqual(order, ["create", "reindex", "sync"]);
  assert.equal(parts.store.generation, 1);
  assert.equal(parts.knowledge.search("rice noodles soak", 1)[0]!.heading, "2026-11-30 Rice noodles");
  await teardown(parts);
});

Deno.test("write replaces a topic whole and search sees it at once; read gives the file, its sections and what was learned", async () => {
  const parts = await setup(false);
  const { knowledge, dir } = parts;
  assert.equal(await knowledge.read("tea"), undefined);
  const markdown = "# Tea\n\n## Green tea\n\nSteep sencha at 80 °C for two minutes.\n";
  assert.deepEqual(await knowledge.write("tea", markdown), {
    topic: "tea",
    sections: 2,
    bytes: new TextEncoder().encode(markdown).length,
    created: true,
  });
  assert.equal(await Deno.readTextFile(join(dir, "tea", "content.md")), markdown);
  assert.equal((await Deno.stat(join(dir, "tea", "content.md"))).mode! & 0o777, 0o644);
  assert.equal(knowledge.search("sencha steeping", 1)[0]!.heading, "Green tea");
  // The butler learns one more; the owner edits the file by hand around it and writes it back whole.
  await knowledge.create("tea", "Oolong: 95 °C, rinse the leaves once.", "Oolong");
  const learned = await knowledge.read("tea");
  assert.deepEqual(learned!.sections, [
    { heading: "Tea", learned: false },
    { heading: "Green tea", learned: false },
    { heading: "2026-11-30 Oolong", learned: true },
  ]);
  assert.equal(knowledge.list()[0]!.learned, true);
  const edited = learned!.markdown.replace("95 °C", "90 °C") + "\n## Black tea\n\nBoiling water, four minutes.\n";
  assert.deepEqual(await knowledge.write("tea", edited), {
    topic: "tea",
    sections: 4,
    bytes: new TextEncoder().encode(edited).length,
    created: false,
  });
  const again = await knowledge.read("tea");
  assert.equal(again!.markdown, edited);
  assert.deepEqual(again!.sections.map((s) => [s.heading, s.learned]), [
    ["Tea", false],
    ["Green tea", false],
    ["2026-11-30 Oolong", true],
    ["Black tea", false],
  ]);
  assert.equal(knowledge.search("oolong temperature", 1)[0]!.snippet.includes("90 °C"), true);
  assert.equal(knowledge.search("learned by homed", 3).length, 0, "the marker is not indexed");
  // Dropping the marker by hand makes the section the household's own.
  await Deno.writeTextFile(join(dir, "tea", "content.md"), edited.replace(/<!--.*-->\n/, ""));
  await knowledge.sync();
  assert.equal(knowledge.list()[0]!.learned, false);
  await teardown(parts);
});

Deno.test("write refuses bad topics, blank or oversize content and a linked folder, and writes nothing", async () => {
  const root = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-knowledge-" });
  const store = await VectorStore.open(join(root, "store"));
  const dir = join(root, "k");
  const knowledge = await KnowledgeBase.open({
    dir,
    store,
    clock: new FakeClock(),
    logger: getLogger(["test"]),
    maxFileBytes: 100,
  });
  try {
    assert.equal(knowledge.maxFileBytes, 100);
    await assert.rejects(knowledge.write("../x", "# x"), /^RangeError: Topic name "\.\.\/x" is not allowed/);
    await assert.rejects(knowledge.write("ok", " \n"), /^RangeError: Knowledge content must be a non-empty text$/);
    await assert.rejects(
      knowledge.write("ok", "é".repeat(51)),
      /^RangeError: Knowledge content has 102 bytes; allowed: at most 100 per topic$/,
    );
    await Deno.mkdir(join(root, "outside"));
    await symlink(join(root, "outside"), join(dir, "linked"));
    await assert.rejects(knowledge.write("linked", "# x"), /linked is a symbolic link; homed does not follow links/);
    await assert.rejects(knowledge.read("linked"), /linked is a symbolic link/);
    assert.deepEqual([...Deno.readDirSync(join(root, "outside"))], []);
    assert.deepEqual([...Deno.readDirSync(dir)].map((e) => e.name), ["linked"]);
  } finally {
    await knowledge.close();
    await store.close();
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("write keeps the mode of a file the user made", async () => {
  const parts = await setup();
  const path = join(parts.dir, "cooking", "content.md");
  await Deno.chmod(path, 0o640);
  await parts.knowledge.write("cooking", "# Cooking\n\nOnly this now.\n");
  assert.equal((await Deno.stat(path)).mode! & 0o777, 0o640);
  assert.deepEqual(parts.knowledge.list().find((t) => t.topic === "cooking")!.sections, 1);
  await teardown(parts);
});
