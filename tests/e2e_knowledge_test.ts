/**
 * Knowledge end to end: a real homed with a knowledge folder outside the repo, the HTTP endpoints, learning through
 * a tool call, the prompt's knowledge block, and a hand edit picked up while running.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { DEFAULT_CONTRACT, TEST_KEY } from "./support/contract.ts";
import { FakeLlm } from "./support/fake_llm.ts";
import { postJson, REPO, startHomed, workspace } from "./support/homed_process.ts";
import { teardown } from "./support/teardown.ts";
import { waitFor } from "./support/wait.ts";

async function knowledgeFolder(): Promise<string> {
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-e2e-knowledge-" });
  for (const topic of ["smart_home", "cooking"]) {
    await Deno.mkdir(join(dir, topic));
    await Deno.copyFile(join(REPO, "knowledge", topic, "content.md"), join(dir, topic, "content.md"));
  }
  return dir;
}

Deno.test("knowledge over HTTP, learning through knowledge_create, and hand edits while running", async () => {
  const fake = FakeLlm.start(DEFAULT_CONTRACT);
  const dir = await knowledgeFolder();
  const homed = await startHomed(
    await workspace({
      llm: { base_url: fake.baseUrl, api_key: TEST_KEY },
      paths: { knowledge: dir },
      daemon: { heartbeat_interval: "1s" },
    }),
  );
  try {
    const listed = await (await fetch(`${homed.url}/api/knowledge`)).json();
    assert.deepEqual(listed.topics.map((t: { topic: string }) => t.topic), ["cooking", "smart_home"]);
    assert.equal(listed.sections, 9);
    const search = await (await fetch(`${homed.url}/api/knowledge/search?q=${encodeURIComponent("番茄炒蛋")}&k=2`))
      .json();
    assert.equal(search.hits[0].heading, "Tomato and egg stir-fry · 番茄炒蛋");
    assert.equal(search.hits.length, 2);
    const missing = await fetch(`${homed.url}/api/knowledge/search`);
    assert.equal(missing.status, 400);
    assert.equal((await missing.json()).error.message, 'Query parameter "q" is missing or empty');
    const badK = await fetch(`${homed.url}/api/knowledge/search?q=x&k=0`);
    assert.equal((await badK.json()).error.message, 'Query parameter "k" must be a whole number from 1 to 50, got "0"');

    fake.enqueue(
      {
        toolCalls: [{
          name: "knowledge_create",
          arguments: {
            topic: "cooking",
            title: "Cola chicken wings",
            content: "Brown the wings, add a can of cola, reduce.",
          },
        }],
      },
      { reply: "Noted the recipe." },
    );
    const chat = await postJson(`${homed.url}/api/chat`, { text: "番茄炒蛋怎么做？顺便记住可乐鸡翅的做法" });
    assert.equal(chat.status, 200, JSON.stringify(chat.body));
    const system = (fake.requests[0]!.body.messages as Array<{ content: string }>)[0]!.content;
    assert.match(system, /## \[homed\] Knowledge \(learned about the world, not household memory\)\n/);
    assert.doesNotMatch(system, /番茄炒蛋/, "matching sections are not in the (cached) system message");
    const asked = (fake.requests[0]!.body.messages as Array<{ content: string }>).at(-1)!.content;
    assert.match(
      asked,
      /### Knowledge sections that may answer this message\n> - \[cooking › Tomato and egg stir-fry · 番茄炒蛋\]/,
    );
    assert.ok(asked.endsWith("[via http, from owner, trust owner] 番茄炒蛋怎么做？顺便记住可乐鸡翅的做法"));
    const toolResult = (fake.requests[1]!.body.messages as Array<{ role: string; content: string }>).at(-1)!;
    assert.match(toolResult.content, /^Appended section "\d{4}-\d\d-\d\d Cola chicken wings" to topic "cooking"$/);
    const file = await Deno.readTextFile(join(dir, "cooking", "content.md"));
    assert.match(file, /\n## \d{4}-\d\d-\d\d Cola chicken wings\n\nBrown the wings, add a can of cola, reduce\.\n$/);

    await Deno.writeTextFile(
      join(dir, "cooking", "content.md"),
      `${file}\n## Garlic bread\n\nButter, garlic, 8 minutes at 200 °C.\n`,
    );
    await waitFor(async () => {
      const found = await (await fetch(`${homed.url}/api/knowledge/search?q=garlic+bread`)).json();
      return found.hits[0]?.heading === "Garlic bread";
    }, "the hand-edited section to be searchable");
    const status = await (await fetch(`${homed.url}/api/status`)).json();
    assert.deepEqual(status.knowledge, { topics: 2, sections: 11 });
  } finally {
    await teardown(
      async () => assert.equal(await homed.stop(), 0, homed.stderr()),
      () => fake.close(),
      () => Deno.remove(dir, { recursive: true }),
    );
  }
});
