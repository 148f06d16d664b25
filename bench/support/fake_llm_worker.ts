/**
 * Runs the fake LLM server in a Worker, so its work and its garbage collection happen on another thread and
 * isolate, as a remote LLM's would, instead of inside the process being measured.
 *
 * Protocol (postMessage): first `{op: "start", expect}` (the contract the fake holds requests to) → `{baseUrl}`; then
 * `{op: "enqueue", steps}` → `{queued: true}`; `{op: "drain"}` → `{serverMs: number[], prompts:
 * string[]}` (server time and serialized prompt of each request since the last drain); `{op: "close"}` →
 * `{closed: true}`.
 *
 * @module
 */

/// <reference lib="deno.worker" />

import { type FakeExpectations, FakeLlm, type FakeStep } from "../../tests/support/fake_llm.ts";

/**
 * The prompt as a provider's prefix cache sees it: tool declarations first, then the messages in order (DeepSeek and
 * OpenAI render tools ahead of the conversation).
 */
function serializedPrompt(body: Record<string, unknown>): string {
  const messages = (body.messages ?? []) as unknown[];
  return [JSON.stringify(body.tools ?? []), ...messages.map((message) => JSON.stringify(message))].join("\n");
}

let fake: FakeLlm;
self.onmessage = async (message: MessageEvent<{ op: string; steps?: FakeStep[]; expect?: FakeExpectations }>) => {
  const { op, steps, expect } = message.data;
  if (op === "start") {
    fake = FakeLlm.start(expect ?? {});
    self.postMessage({ baseUrl: fake.baseUrl });
  } else if (op === "enqueue") {
    fake.enqueue(...(steps ?? []));
    self.postMessage({ queued: true });
  } else if (op === "drain") {
    const serverMs = fake.requests.map((request) => request.finishedAt - request.receivedAt);
    const prompts = fake.requests.map((request) => serializedPrompt(request.body));
    // Absolute times (epoch ms, sub-millisecond), comparable across threads.
    const receivedAt = fake.requests.map((request) => performance.timeOrigin + request.receivedAt);
    fake.requests.length = 0;
    self.postMessage({ serverMs, prompts, receivedAt });
  } else if (op === "close") {
    await fake.close();
    self.postMessage({ closed: true });
    self.close();
  }
};
