import assert from "node:assert/strict";
import { join } from "node:path";
import { getLogger } from "@logtape/logtape";
import { FakeClock } from "../../tests/support/fake_clock.ts";
import { ALICE, GUS, OWNER, routeApi } from "../../tests/support/route_api.ts";
import { KnowledgeBase } from "../knowledge/knowledge_base.ts";
import { VectorStore } from "../search/store.ts";
import { knowledgeRoutes } from "./knowledge_routes.ts";

async function setup(maxFileBytes?: number) {
  const root = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-knowledge-api-" });
  const dir = join(root, "knowledge");
  const store = await VectorStore.open(join(root, "store"));
  const knowledge = await KnowledgeBase.open({
    dir,
    store,
    clock: new FakeClock(new Date(2026, 11, 1, 9).getTime()),
    logger: getLogger(["test"]),
    ...(maxFileBytes ? { maxFileBytes } : {}),
  });
  const { call } = routeApi([knowledgeRoutes(knowledge)], { maxBodyBytes: 65_536 });
  return {
    dir,
    knowledge,
    call,
    async [Symbol.asyncDispose]() {
      await knowledge.close();
      await store.close();
      await Deno.remove(root, { recursive: true });
    },
  };
}

const topicPath = (topic: string) => `/api/knowledge/topics/${encodeURIComponent(topic)}`;

async function errorOf(response: Response): Promise<{ status: number; code: string; message: string }> {
  const body = await response.json();
  return { status: response.status, code: body.error.code, message: body.error.message };
}

Deno.test("the owner PUTs a topic, GETs it back, and search finds its words at once", async () => {
  await using t = await setup();
  const markdown = "# 茶\n\n## Green tea · 绿茶\n\nSteep sencha at 80 °C for two minutes.\n";
  const put = await t.call("PUT", topicPath("茶"), OWNER, { markdown });
  assert.equal(put.status, 200);
  assert.deepEqual(await put.json(), {
    topic: "茶",
    sections: 2,
    bytes: new TextEncoder().encode(markdown).length,
    created: true,
  });
  assert.equal(await Deno.readTextFile(join(t.dir, "茶", "content.md")), markdown);
  const search = await (await t.call("GET", "/api/knowledge/search?q=sencha", ALICE)).json();
  assert.equal(search.hits[0].topic, "茶");
  assert.equal(search.hits[0].heading, "Green tea · 绿茶");
  const got = await t.call("GET", topicPath("茶"), ALICE);
  assert.equal(got.status, 200);
  const body = await got.json();
  assert.deepEqual(body, {
    topic: "茶",
    markdown,
    updated: body.updated,
    sections: [{ heading: "茶", learned: false }, { heading: "Green tea · 绿茶", learned: false }],
  });
  assert.ok(!Number.isNaN(Date.parse(body.updated)));
  // Replacing it: created is false, the old words are gone from search.
  const oolong = "# 茶\n\nOolong at 95 °C.\n";
  const again = await t.call("PUT", topicPath("茶"), OWNER, { markdown: oolong });
  assert.deepEqual(await again.json(), {
    topic: "茶",
    sections: 1,
    bytes: new TextEncoder().encode(oolong).length,
    created: false,
  });
  assert.equal((await (await t.call("GET", "/api/knowledge/search?q=sencha", OWNER)).json()).hits.length, 0);
  assert.equal((await (await t.call("GET", "/api/knowledge/search?q=oolong", OWNER)).json()).hits[0].topic, "茶");
});

Deno.test("what the butler learned is marked per section and per topic, and survives the owner's edit", async () => {
  await using t = await setup();
  await t.call("PUT", topicPath("cooking"), OWNER, {
    markdown: "# Cooking\n\n## Rice\n\n1 cup rice, 1.2 cups water.\n",
  });
  await t.knowledge.create("cooking", "Brown the wings, add a can of cola, reduce.", "Cola chicken wings");
  await t.call("PUT", topicPath("garden"), OWNER, { markdown: "# Garden\n\nWater the roses at dawn.\n" });
  const listed = await (await t.call("GET", "/api/knowledge", ALICE)).json();
  assert.deepEqual(listed.topics.map((topic: { topic: string; learned: boolean }) => [topic.topic, topic.learned]), [
    ["cooking", true],
    ["garden", false],
  ]);
  const got = await (await t.call("GET", topicPath("cooking"), OWNER)).json();
  assert.deepEqual(got.sections, [
    { heading: "Cooking", learned: false },
    { heading: "Rice", learned: false },
    { heading: "2026-12-01 Cola chicken wings", learned: true },
  ]);
  assert.match(got.markdown, /\n<!-- learned by homed 2026-12-01 -->\n## 2026-12-01 Cola chicken wings\n/);
  // The owner edits the learned text and writes the file back whole: the section is still the butler's.
  const edited = got.markdown.replace("reduce.", "reduce for 10 minutes.");
  assert.equal((await t.call("PUT", topicPath("cooking"), OWNER, { markdown: edited })).status, 200);
  const after = await (await t.call("GET", topicPath("cooking"), OWNER)).json();
  assert.deepEqual(after.sections.map((s: { learned: boolean }) => s.learned), [false, false, true]);
  assert.equal(after.markdown, edited);
});

Deno.test("reading needs household or owner, writing the owner; refusals name the trust", async () => {
  await using t = await setup();
  await t.call("PUT", topicPath("tea"), OWNER, { markdown: "# Tea\n" });
  assert.deepEqual(await errorOf(await t.call("GET", topicPath("tea"), GUS)), {
    status: 403,
    code: "forbidden",
    message: 'Reading a knowledge topic needs trust household or owner; this request came from "gus" (trust guest)',
  });
  for (const [token, name, trust] of [[ALICE, "alice", "household"], [GUS, "gus", "guest"]]) {
    assert.deepEqual(await errorOf(await t.call("PUT", topicPath("tea"), token!, { markdown: "# Mine\n" })), {
      status: 403,
      code: "forbidden",
      message: `Editing knowledge needs trust owner; this request came from "${name}" (trust ${trust})`,
    });
  }
  assert.equal(await Deno.readTextFile(join(t.dir, "tea", "content.md")), "# Tea\n", "nothing was written");
});

Deno.test("bad topics and bodies are 400s naming the field and the value; an unknown topic is a 404", async () => {
  await using t = await setup(100);
  const cases: Array<[string, unknown, string, string]> = [
    [topicPath(".git"), { markdown: "# x" }, "bad_request", 'Topic name ".git" is not allowed: it is a hidden name'],
    [topicPath("a b"), { markdown: "# x" }, "bad_request", 'Topic name "a b" is not allowed: it contains white space'],
    [topicPath("../etc"), { markdown: "# x" }, "bad_request", 'Topic name "../etc" is not allowed: it contains ".."'],
    [topicPath("ok"), "{", "bad_json", "The body is not valid JSON"],
    [topicPath("ok"), [1], "bad_request", "The body must be a JSON object, got [1]"],
    [topicPath("ok"), {}, "bad_request", 'Field "markdown" is missing'],
    [topicPath("ok"), { markdown: 5 }, "bad_request", 'Field "markdown" must be a non-empty string, got 5'],
    [topicPath("ok"), { markdown: " \n" }, "bad_request", 'Field "markdown" must be a non-empty string, got " \\n"'],
    [topicPath("ok"), { markdown: "x", text: 1 }, "bad_request", 'Unknown field "text"; allowed fields: markdown'],
    [
      topicPath("ok"),
      { markdown: "y".repeat(101) },
      "bad_request",
      `Field "markdown" has 101 bytes, starting "${"y".repeat(38)}…; allowed: at most 100 per topic`,
    ],
  ];
  for (const [path, body, code, message] of cases) {
    const error = await errorOf(await t.call("PUT", path, OWNER, body));
    assert.equal(error.status, 400, message);
    assert.equal(error.code, code);
    assert.ok(error.message.startsWith(message), `${error.message} starts with ${message}`);
  }
  const long = await errorOf(await t.call("GET", topicPath("x".repeat(300)), OWNER));
  assert.equal(long.status, 400);
  assert.ok(long.message.length < 200, long.message);
  assert.match(long.message, /^Topic name "x{80}…" is not allowed: it is longer than 64 characters$/);
  assert.deepEqual(await errorOf(await t.call("GET", topicPath("nothing"), OWNER)), {
    status: 404,
    code: "not_found",
    message: 'No knowledge topic "nothing"',
  });
  assert.deepEqual([...Deno.readDirSync(t.dir)], [], "nothing was written");
});
