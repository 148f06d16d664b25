/**
 * Memory and trust (issue 18, point 2): a guest's recall — through the facade, the reference block or
 * `memory_recall` — holds only what that guest said; the owner's recall holds everything, a household member's what
 * they may read (issue 34.4: not the owner's private chats, nor facts learnt only there); documents kept before the
 * sender was recorded are the household's.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { getLogger } from "@logtape/logtape";
import { FakeClock } from "../../tests/support/fake_clock.ts";
import { testToolContext } from "../../tests/support/tool_context.ts";
import { ContextWindow } from "../context/context_window.ts";
import type { Trust } from "../identity/trust.ts";
import { ToolRegistry } from "../tools/registry.ts";
import { openMemoryDb, SCHEMA_VERSION } from "./database.ts";
import { type Memory, openMemory } from "./memory.ts";
import { MemoryService } from "./memory_service.ts";

const MINUTE = 60_000;
const logger = getLogger(["test"]);
const VISITOR = { sender: "visitor", trust: "guest" } as const;

/** Journals one exchange (both halves carry the turn's trust) and keeps it as a document. */
async function said(
  memory: Memory,
  clock: FakeClock,
  eventId: string,
  who: { sender: string; trust: Trust },
  text: string,
) {
  const base = { eventId, time: clock.now(), source: "http", trust: who.trust };
  await memory.observe({ ...base, role: "user", sender: who.sender, text });
  await memory.observe({ ...base, role: "assistant", sender: "butler", text: "Noted." });
  memory.keepDocument({
    lines: [{ speaker: who.sender, text }, { speaker: "butler", text: "Noted." }],
    time: base.time,
    provenance: [eventId],
    source: "http",
    ...who,
  });
  clock.advance(MINUTE);
}

Deno.test("a guest's recall holds only that guest's own documents and recent entries, and no facts", async () => {
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-memory-trust-" });
  const clock = new FakeClock({ start: Date.UTC(2026, 10, 1, 9) });
  const memory = await openMemory({ dir, clock, logger });
  try {
    await said(memory, clock, "e1", { sender: "owner", trust: "owner" }, "The spare key is under the blue flowerpot.");
    await said(memory, clock, "e2", VISITOR, "My spare umbrella is under the bench.");
    await memory.runJobs(); // the rule fallback makes a fact of e1
    const query = "where is the spare key or the spare umbrella";
    const all = await memory.recall(query, { k: 10, asker: { sender: "owner", trust: "owner" } });
    assert.ok(all.some((item) => item.kind === "fact" && item.provenance.includes("e1")), JSON.stringify(all));
    // The owner said it on http, a private chat: a household member recalls neither the words nor the fact.
    const alice = await memory.recall(query, { k: 10, asker: { sender: "alice", trust: "household" } });
    assert.ok(!alice.some((item) => item.provenance.includes("e1")), JSON.stringify(alice));
    assert.ok(all.some((item) => item.kind === "document" && item.provenance.includes("e1")), JSON.stringify(all));
    assert.deepEqual(
      (await memory.recall(query, { k: 10 })).map((item) => [item.kind, item.provenance]),
      all.map((item) => [item.kind, item.provenance]),
      "without an asker (inspection, the benchmark) recall is as before",
    );

    const guest = await memory.recall(query, { k: 10, asker: VISITOR });
    assert.deepEqual(guest.map((item) => [item.kind, item.text]).sort(), [
      ["context", "visitor: My spare umbrella is under the bench."],
      ["document", "visitor: My spare umbrella is under the bench.\nbutler: Noted."],
    ]);
    assert.deepEqual(await memory.recall(query, { k: 10, asker: { sender: "stranger", trust: "guest" } }), []);
  } finally {
    await memory.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a guest's document is not found by what someone else said just before it", async () => {
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-memory-trust-" });
  const clock = new FakeClock({ start: Date.UTC(2026, 10, 1, 9) });
  const memory = await openMemory({ dir, clock, logger });
  try {
    // The owner speaks in the same chat a minute before; only the guest's exchange becomes a document.
    await memory.observe({
      eventId: "e1",
      time: clock.now(),
      role: "user",
      source: "http",
      sender: "owner",
      trust: "owner",
      text: "The safe code is 4711",
    });
    clock.advance(MINUTE);
    await said(memory, clock, "e2", VISITOR, "Thanks for the tea");
    assert.deepEqual(memory.documents().search("safe code 4711", 3, false, "visitor"), []);
    assert.deepEqual(
      memory.documents().search("thanks for the tea", 3, false, "visitor").map((hit) => hit.document.provenance),
      [["e2"]],
    );
    assert.deepEqual(memory.documents().search("thanks for the tea", 3, false, "alice"), []);
  } finally {
    await memory.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("documents kept before the sender was recorded are the household's after the migration (schema 6)", async () => {
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-memory-trust-" });
  const path = join(dir, "memory.db");
  // A schema-5 database: what schemas 6 and 7 added dropped again, one document written as homed wrote it then.
  const old = openMemoryDb(path);
  old.exec("ALTER TABLE documents DROP COLUMN sender; ALTER TABLE documents DROP COLUMN trust;");
  old.exec("DROP INDEX triples_object; ALTER TABLE triples DROP COLUMN corrected_by;");
  old.exec("UPDATE meta SET value = '5' WHERE key = 'schema'");
  old.prepare(
    `INSERT INTO documents (id, text, summary, created, last_accessed, hits, provenance, context, context_event, session)
     VALUES ('d-old', 'visitor: My umbrella is the green one\nbutler: Noted.', 'visitor: My umbrella is the green one',
       1, 1, 0, '["e9"]', '', '', 'e9')`,
  ).run();
  old.close();
  const clock = new FakeClock({ start: Date.UTC(2026, 10, 1, 9) });
  const memory = await openMemory({ dir, clock, logger });
  try {
    const document = memory.documents().get("d-old")!;
    assert.deepEqual([document.sender, document.trust], ["", "household"]);
    assert.deepEqual(await memory.recall("green umbrella", { k: 5, asker: VISITOR }), []);
    assert.deepEqual((await memory.recall("green umbrella", { k: 5 })).map((item) => item.provenance), [["e9"]]);
  } finally {
    await memory.close();
  }
  const reopened = openMemoryDb(path);
  assert.equal(
    (reopened.prepare("SELECT value FROM meta WHERE key = 'schema'").get() as { value: string }).value,
    String(SCHEMA_VERSION),
  );
  reopened.close();
  await Deno.remove(dir, { recursive: true });
});

Deno.test("the service: memory_recall is for anyone and recalls for its asker; a guest's reference block holds its own words only", async () => {
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-memory-trust-" });
  const clock = new FakeClock({ start: Date.UTC(2026, 10, 1, 9) });
  const memory = new MemoryService({ dir, clock, logger });
  await memory.start();
  const context = new ContextWindow({ maxEntries: 4, onEvict: (gone) => memory.archive(gone) });
  memory.keep(context);
  try {
    const turn = async (eventId: string, who: { sender: string; trust: Trust }, text: string) => {
      const origin = { eventId, time: clock.now(), source: "http", ...who };
      context.appendTurn([{ role: "user", content: `[via http, from ${who.sender}, trust ${who.trust}] ${text}` }, {
        role: "assistant",
        content: "Noted.",
      }], origin);
      await memory.afterTurn({ ...origin, text, reply: "Noted." });
      clock.advance(MINUTE);
    };
    await turn("e1", { sender: "owner", trust: "owner" }, "The safe code is 4711");
    await turn("e2", VISITOR, "My umbrella is the green one");
    await turn("e3", { sender: "owner", trust: "owner" }, "We eat dumplings tonight"); // e1 and e2 leave layer 1
    await memory.recall("anything"); // the documents are kept once the stores are open
    assert.deepEqual(context.records().map((entry) => entry.eventId), ["e3", "e3"]);

    const tools = new ToolRegistry();
    for (const tool of memory.tools()) tools.register(tool);
    assert.equal(memory.tools().find((tool) => tool.name === "memory_recall")!.allow, "anyone");
    const query = JSON.stringify({ query: "safe code umbrella", k: 20 });
    const guest = await tools.call("memory_recall", query, { ...testToolContext("http", "guest"), sender: "visitor" });
    assert.equal(guest.ok, true, guest.content);
    assert.ok(!guest.content.includes("4711"), guest.content);
    assert.deepEqual(
      (JSON.parse(guest.content) as Array<{ kind: string; text: string }>).map((item) => [item.kind, item.text]),
      [
        ["document", "visitor: My umbrella is the green one\nbutler: Noted."],
        ["context", "visitor: My umbrella is the green one"],
      ],
    );
    const owner = await tools.call("memory_recall", query, { ...testToolContext("http", "owner"), sender: "owner" });
    assert.match(owner.content, /owner: The safe code is 4711/);
    // The owner's private words are not a household member's to recall.
    const household = await tools.call("memory_recall", query, testToolContext("http", "household"));
    assert.ok(!household.content.includes("4711"), household.content);

    const input = { text: "the safe code and my umbrella", source: "http", time: clock.now() };
    // Each document shown with who asked in it and their trust then (the prompt's `[said by …, trust …]`).
    const shown = async (sender: string, trust?: Trust) =>
      ((await memory.reference({ ...input, sender, ...(trust ? { trust } : {}) }, []))?.items ?? [])
        .map((item) => `- ${item.text} (${item.sender}, ${item.trust})`).join("\n");
    assert.match(
      await shown("visitor", "guest"),
      /^- \S+ visitor: My umbrella is the green one \/ butler: Noted\. \(visitor, guest\)$/,
    );
    assert.doesNotMatch(await shown("alice", "household"), /4711/);
    assert.match(await shown("owner", "owner"), /owner: The safe code is 4711/);
    assert.equal(await shown("owner"), "", "a message whose trust is not given gets no household memory");
    assert.equal((await memory.inspectDocuments("umbrella", 5))[0]!.trust, "guest");
  } finally {
    await memory.stop();
    await Deno.remove(dir, { recursive: true });
  }
});
