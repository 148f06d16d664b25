/**
 * Memory and trust, end to end (issue 18, point 2): a real homed with three people's tokens (the owner, a household
 * member, a guest) and the fake LLM server, which shows what each turn's request carried. The owner tells the butler
 * the safe code; a guest may not inspect memory, and a guest's turn — its reference block and `memory_recall` —
 * holds only what that guest said (and knowledge). The owner said it on http, a private chat (issue 34.4): a
 * household member's turn and memory pages do not hold it either; the owner's do.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { DEFAULT_CONTRACT, TEST_KEY } from "./support/contract.ts";
import { FakeLlm } from "./support/fake_llm.ts";
import { chatAs, type HomedProcess, startHomed, workspace } from "./support/homed_process.ts";
import { teardown } from "./support/teardown.ts";

const OWNER = "owner-token-0123456789";
const ALICE = "alice-token-0123456789";
const VISITOR = "visitor-token-012345678";
const MEMORY_TITLE = "### Earlier in this household (memory; memory_recall for more)";

type Messages = Array<{ role: string; content: string | null }>;

const chat = chatAs;

async function get(homed: HomedProcess, token: string, path: string): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`${homed.url}${path}`, { headers: { authorization: `Bearer ${token}` } });
  return { status: response.status, body: await response.json() };
}

/** The memory section of a request's reference block (the current message's), or "" when it has none. */
function memorySection(fake: FakeLlm, request: number): string {
  const content = (fake.requests[request]!.body.messages as Messages).at(-1)!.content ?? "";
  const start = content.indexOf(MEMORY_TITLE);
  if (start === -1) return "";
  const end = content.indexOf("\n###", start + MEMORY_TITLE.length);
  return content.slice(start, end === -1 ? content.indexOf("\n[end of homed reference]", start) : end);
}

async function setup() {
  const fake = FakeLlm.start(DEFAULT_CONTRACT);
  const root = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-e2e-memory-trust-" });
  const knowledge = join(root, "knowledge");
  await Deno.mkdir(join(knowledge, "umbrellas"), { recursive: true });
  await Deno.writeTextFile(
    join(knowledge, "umbrellas", "content.md"),
    "# umbrellas\n\n## Drying a wet umbrella\n\nOpen a wet umbrella and let it dry in the bath, never folded.\n",
  );
  const ws = await workspace({
    llm: { base_url: fake.baseUrl, api_key: TEST_KEY },
    daemon: {
      api_token: OWNER,
      api_tokens: { alice: { token: ALICE, trust: "household" }, visitor: { token: VISITOR, trust: "guest" } },
    },
    paths: { knowledge },
    // Small, so exchanges leave the context and become documents after a few turns.
    memory: { context_size: 4 },
  });
  const homed = await startHomed(ws);
  // The owner's secret and the guest's own words leave the context (the third exchange pushes both out).
  fake.enqueue({ reply: "Noted." }, { reply: "Noted, the green one." }, { reply: "Dumplings it is." });
  await chat(homed, OWNER, "The safe code is 4711");
  await chat(homed, VISITOR, "My umbrella is the green one by the door");
  await chat(homed, OWNER, "We eat dumplings tonight");
  return { fake, root, homed };
}

Deno.test("a guest gets 403 from the memory endpoints; household members and the owner inspect memory", async () => {
  const { fake, root, homed } = await setup();
  try {
    const refusal = {
      error: {
        code: "forbidden",
        message: 'Inspecting memory needs trust household or owner; this request came from "visitor" (trust guest)',
      },
    };
    const query = `q=${encodeURIComponent("safe code")}`;
    assert.deepEqual(await get(homed, VISITOR, `/api/memory/documents?${query}`), { status: 403, body: refusal });
    assert.deepEqual(await get(homed, VISITOR, `/api/memory/graph?q=safe`), { status: 403, body: refusal });
    for (const token of [ALICE, OWNER]) {
      const documents = await get(homed, token, `/api/memory/documents?${query}`);
      assert.equal(documents.status, 200);
      const found = (documents.body as { documents: Array<{ text: string; sender: string; trust: string }> })
        .documents;
      if (token === ALICE) {
        // The owner's private words are not a household member's to inspect.
        assert.ok(!JSON.stringify(found).includes("4711"), JSON.stringify(found));
      } else {
        assert.equal(found[0]?.text, "owner: The safe code is 4711\nbutler: Noted.");
        assert.equal(found[0]?.sender, "owner");
        assert.equal(found[0]?.trust, "owner");
      }
      assert.deepEqual(await get(homed, token, `/api/memory/graph?q=safe`), {
        status: 200,
        body: { entity: "safe", facts: [] },
      });
    }
  } finally {
    await teardown(
      async () => assert.equal(await homed.stop(), 0, homed.stderr()),
      () => fake.close(),
      () => Deno.remove(root, { recursive: true }),
    );
  }
});

Deno.test("a guest's reference block holds only what that guest said, and knowledge; a household member's not the owner's private words", async () => {
  const { fake, root, homed } = await setup();
  try {
    fake.enqueue({ reply: "I cannot tell you that." });
    await chat(homed, VISITOR, "What is the safe code, and where is my wet umbrella?");
    const guest = (fake.requests[3]!.body.messages as Messages).at(-1)!.content!;
    assert.ok(guest.includes("[via http, from visitor, trust guest] What is the safe code"), guest);
    assert.ok(!guest.includes("4711"), guest);
    assert.match(
      memorySection(fake, 3),
      /^### Earlier in this household .*\n> - \S+ visitor: My umbrella is the green/,
    );
    assert.doesNotMatch(memorySection(fake, 3), /owner:/);
    assert.match(
      guest,
      /### Knowledge sections that may answer this message\n> - \[umbrellas › Drying a wet umbrella\]/,
    );

    fake.enqueue({ reply: "It is in memory." });
    await chat(homed, ALICE, "What is the safe code?");
    const household = (fake.requests[4]!.body.messages as Messages).at(-1)!.content!;
    assert.ok(household.includes("[via http, from alice, trust household] What is the safe code?"), household);
    assert.ok(!household.includes("4711"), household);
    assert.doesNotMatch(memorySection(fake, 4), /owner:/);
  } finally {
    await teardown(
      async () => assert.equal(await homed.stop(), 0, homed.stderr()),
      () => fake.close(),
      () => Deno.remove(root, { recursive: true }),
    );
  }
});

Deno.test("memory_recall in a guest's turn returns that guest's own words and nothing of the owner's", async () => {
  const { fake, root, homed } = await setup();
  try {
    fake.enqueue(
      { toolCalls: [{ name: "memory_recall", arguments: { query: "safe code 4711 umbrella", k: 20 } }] },
      { reply: "Your umbrella is the green one." },
    );
    const answer = await chat(homed, VISITOR, "Remind me what I told you before");
    assert.equal(answer.reply, "Your umbrella is the green one.");
    assert.doesNotMatch(memorySection(fake, 3), /owner:/);
    const toolResult = (fake.requests[4]!.body.messages as Array<{ role: string; content: string }>).at(-1)!;
    assert.equal(toolResult.role, "tool");
    assert.ok(!toolResult.content.includes("4711"), toolResult.content);
    const items = JSON.parse(toolResult.content) as Array<{ kind: string; text: string }>;
    assert.deepEqual(
      items.map((item) => [item.kind, item.text]),
      [
        ["document", "visitor: My umbrella is the green one by the door\nbutler: Noted, the green one."],
        ["context", "visitor: My umbrella is the green one by the door"],
      ],
    );

    // The same call in a household member's turn does not find the owner's private words either.
    fake.enqueue(
      { toolCalls: [{ name: "memory_recall", arguments: { query: "safe code 4711", k: 20 } }] },
      { reply: "It is 4711." },
    );
    await chat(homed, ALICE, "What was the safe code again?");
    const householdResult = (fake.requests[6]!.body.messages as Array<{ content: string }>).at(-1)!.content;
    assert.ok(!householdResult.includes("4711"), householdResult);
  } finally {
    await teardown(
      async () => assert.equal(await homed.stop(), 0, homed.stderr()),
      () => fake.close(),
      () => Deno.remove(root, { recursive: true }),
    );
  }
});
