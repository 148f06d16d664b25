/**
 * Memory end to end, as far as it is built: the conversation survives a restart (layer 1 saved in the data dir), and
 * every exchange is journaled as a memory candidate.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { DEFAULT_CONTRACT, TEST_KEY } from "./support/contract.ts";
import { FakeLlm } from "./support/fake_llm.ts";
import { postJson, startHomed, workspace } from "./support/homed_process.ts";
import { teardown } from "./support/teardown.ts";

Deno.test("the conversation survives a restart, and every exchange is journaled with its event id", async () => {
  const fake = FakeLlm.start(DEFAULT_CONTRACT);
  const ws = await workspace({ llm: { base_url: fake.baseUrl, api_key: TEST_KEY } });
  fake.enqueue({ reply: "Noted: bins on Tuesday." }, { reply: "On Tuesday." });
  let homed = await startHomed(ws);
  try {
    assert.equal((await postJson(`${homed.url}/api/chat`, { text: "The bins go out on Tuesday" })).status, 200);
    assert.equal(await homed.stop({ keep: true }), 0, homed.stderr());
    homed = await startHomed(ws);
    assert.match(homed.stderr(), /Restored 2 context entries/);
    assert.equal((await postJson(`${homed.url}/api/chat`, { text: "When do the bins go out?" })).status, 200);
    const messages = fake.requests[1]!.body.messages as Array<{ role: string; content: string }>;
    assert.deepEqual(messages.slice(1, 3), [
      { role: "user", content: "[via http, from owner, trust owner] The bins go out on Tuesday" },
      { role: "assistant", content: "Noted: bins on Tuesday." },
    ]);
    assert.equal(await homed.stop({ keep: true }), 0, homed.stderr());
    const journal = (await Deno.readTextFile(join(ws.dir, "data", "memory", "candidates.jsonl"))).trim().split("\n")
      .map((line) => JSON.parse(line));
    assert.deepEqual(journal.map((entry) => [entry.role, entry.sender, entry.text]), [
      ["user", "owner", "The bins go out on Tuesday"],
      ["assistant", "butler", "Noted: bins on Tuesday."],
      ["user", "owner", "When do the bins go out?"],
      ["assistant", "butler", "On Tuesday."],
    ]);
    assert.equal(journal[0].eventId, journal[1].eventId, "both halves of an exchange carry its input event id");
  } finally {
    await teardown(
      () => homed.stop(),
      () => fake.close(),
      () => Deno.remove(ws.dir, { recursive: true }).catch(() => {}),
    );
  }
});
