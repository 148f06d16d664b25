/**
 * Runs the fake LLM server in a Worker, so its work and its garbage collection happen on another thread and
 * isolate, as a remote LLM's would, instead of inside the process being measured.
 *
 * Protocol (postMessage): `{op: "enqueue", steps}` → `{queued: true}`; `{op: "drain"}` → `{serverMs: number[], prompts:
 * string[]}` (server time and serialized prompt of each request since the last drain); `{op: "close"}` →
 * `{closed: true}`. The first message out is `{baseUrl}`.
 *
 * @module
 */

/// <reference lib="deno.worker" />

import { FakeLlm, type FakeStep } from "../../tests/support/fake_llm.ts";

/**
 * The prompt as a provider's prefix cache sees it: tool declarations first, then the messages in order (DeepSeek and
 * OpenAI render tools ahead of the conversation).
 */
function serializedPrompt(body: Record<string, unknown>): string {
  const messages = (body.messages ?? []) as unknown[];
  return [JSON.stringify(body.tools ?? []), ...messages.map((message) => JSON.stringify(message))].join("\n");
}

const fake = FakeLlm.start({});
self.postMessage({ baseUrl: fake.baseUrl });
self.onmessage = async (message: MessageEvent<{ op: string; steps?: FakeStep[] }>) => {
  const { op, steps } = message.data;
  if (op === "enqueue") {
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
