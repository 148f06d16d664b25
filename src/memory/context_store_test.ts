import assert from "node:assert/strict";
import { join } from "node:path";
import { getLogger } from "@logtape/logtape";
import { ContextWindow } from "../context/context_window.ts";
import { contextProblem, ContextStore } from "./context_store.ts";

Deno.test("the context is saved and restored with its provenance; an unusable file is set aside", async () => {
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-context-" });
  const store = new ContextStore(join(dir, "memory", "context.json"), getLogger(["test"]));
  assert.deepEqual(await store.load(), []);
  const context = new ContextWindow({ maxEntries: 30 });
  context.appendTurn(
    [
      { role: "user", content: "[via http, from owner, trust owner] The bins go out on Tuesday" },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "c1", type: "function", function: { name: "t", arguments: "{}" } }],
      },
      { role: "tool", tool_call_id: "c1", content: "ok" },
      { role: "assistant", content: "Noted." },
    ],
    { eventId: "e1", time: 1, source: "http", sender: "owner" },
  );
  await store.save(context.records());
  assert.deepEqual(await store.load(), context.records());
  await Deno.writeTextFile(store.path, JSON.stringify({ entries: context.records().slice(1) }));
  assert.deepEqual(await store.load(), []);
  const aside = [...Deno.readDirSync(join(dir, "memory"))].map((e) => e.name).filter((n) => n.includes(".bad-"));
  assert.equal(aside.length, 1, "the bad file is kept aside, not overwritten");
  await Deno.remove(dir, { recursive: true });
});

Deno.test("contextProblem names what is wrong with a saved context", () => {
  const entry = (message: Record<string, unknown>) => ({ eventId: "e", time: 0, source: "http", sender: "o", message });
  assert.equal(contextProblem({}), "it is not a list");
  assert.equal(contextProblem([entry({ role: "assistant", content: "x" })]), "it does not start with a user message");
  assert.equal(
    contextProblem([entry({ role: "user", content: "x" }), entry({ role: "tool", tool_call_id: "z", content: "r" })]),
    "entry 1 answers a tool call that is not pending",
  );
  assert.equal(
    contextProblem([
      entry({ role: "user", content: "x" }),
      entry({ role: "assistant", content: null, tool_calls: [{ id: "a" }] }),
    ]),
    "it ends with unanswered tool calls",
  );
  assert.equal(contextProblem([{ eventId: 1 }]), "entry 0 is not a context entry");
});
