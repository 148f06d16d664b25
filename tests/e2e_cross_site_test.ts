/**
 * Cross-site requests end to end (issue 33, findings 2 and 3): a real homed with the OpenAI-compatible door and `/mcp`
 * on, once with no token (every loopback caller is the owner) and once with tokens. What a web page in the owner's
 * browser may send without a preflight — a `text/plain` or form POST carrying the page's `Origin` — is refused on
 * every route that starts a turn or changes state, and `/mcp` refuses a foreign `Origin` on any method; no refused
 * request reaches the (strict, fake) LLM. homed's own page, curl and the `openai` client still get through.
 */

import assert from "node:assert/strict";
import OpenAI from "npm:openai@7.59.0";
import { DEFAULT_CONTRACT, TEST_KEY } from "./support/contract.ts";
import { FakeLlm } from "./support/fake_llm.ts";
import { type HomedProcess, startHomed, workspace } from "./support/homed_process.ts";
import { teardown } from "./support/teardown.ts";

const OWNER = "owner-token-0123456789";
const EVIL = "http://evil.example";
const FORM = "application/x-www-form-urlencoded";

/**
 * Every route that starts a turn or changes state: each `app.post`, `.put`, `.delete` and `.all` under src/api
 * (app.ts, openai_door.ts and the route files api_setup.ts mounts), with a sample path; the OneBot socket and the
 * console only answer GETs. The last two are disguised: the router decodes `%61` to `a`, so they run the chat routes.
 */
const STATE_CHANGING: ReadonlyArray<readonly [string, string]> = [
  ["POST", "/api/chat"],
  ["POST", "/api/chat/stream"],
  ["PUT", "/api/knowledge/topics/door"],
  ["POST", "/api/plugins/reload"],
  ["POST", "/api/memory/facts/1/correct"],
  ["DELETE", "/api/memory/facts/1"],
  ["DELETE", "/api/memory/entities/door"],
  ["DELETE", "/api/memory/documents/1"],
  ["POST", "/api/memory/forget"],
  ["POST", "/api/mcp/everything/restart"],
  ["DELETE", "/api/schedules/1"],
  ["POST", "/v1/chat/completions"],
  ["POST", "/mcp"],
  ["POST", "/%61pi/chat"],
  ["POST", "/v1/chat/c%6Fmpletions"],
];

const MCP_CHAT = {
  jsonrpc: "2.0",
  id: 1,
  method: "tools/call",
  params: { name: "chat", arguments: { text: "Unlock the front door" } },
};
/** MCP's streamable HTTP transport wants both; without them the SDK refuses with 406 before anything runs. */
const MCP_ACCEPT = { accept: "application/json, text/event-stream" };

/** The body the route would act on, as a page would smuggle it in a text/plain POST. */
function bodyFor(path: string): string {
  if (path.startsWith("/v1/")) {
    return JSON.stringify({ model: "homed", messages: [{ role: "user", content: "Unlock the front door" }] });
  }
  if (path === "/mcp") return JSON.stringify(MCP_CHAT);
  if (path.includes("knowledge")) return JSON.stringify({ content: "Always unlock the door when asked." });
  return JSON.stringify({ text: "Unlock the front door" });
}

async function send(
  homed: HomedProcess,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; error: Record<string, string> }> {
  const response = await fetch(`${homed.url}${path}`, {
    method,
    headers: { ...MCP_ACCEPT, ...headers },
    ...(body === undefined ? {} : { body }),
  });
  const text = await response.text();
  let error: Record<string, string> = {};
  try {
    error = JSON.parse(text).error ?? {};
  } catch {
    error = { message: text };
  }
  return { status: response.status, error };
}

const ORIGIN_REFUSED = `Requests from the web page at "${EVIL}" may not use homed's API; if you trust it, add it to ` +
  `daemon.allowed_origins`;

async function crossSiteRefused(homed: HomedProcess, token: string | undefined): Promise<void> {
  const auth: Record<string, string> = token === undefined ? {} : { authorization: `Bearer ${token}` };
  for (const [method, path] of STATE_CHANGING) {
    const where = `${method} ${path}${token === undefined ? "" : " with a token"}`;
    // The OpenAI door answers in OpenAI's error shape (its clients read `type`), the rest in homed's.
    const shape = path.startsWith("/v1/") ? ["code", "message", "type"] : ["code", "message"];
    for (const type of ["text/plain", FORM]) {
      const body = type === FORM ? "text=Unlock+the+front+door" : bodyFor(path);
      const crossSite = await send(homed, method, path, { ...auth, "content-type": type, origin: EVIL }, body);
      assert.equal(crossSite.status, 403, `${where}, ${type} from ${EVIL}: ${JSON.stringify(crossSite.error)}`);
      assert.equal(crossSite.error.message, ORIGIN_REFUSED, where);
      assert.deepEqual(Object.keys(crossSite.error).sort(), shape, where);
      // Without an Origin (a local program, or a browser that leaves it out): still only a JSON body is taken.
      const noOrigin = await send(homed, method, path, { ...auth, "content-type": type }, body);
      assert.equal(noOrigin.status, 415, `${where}, ${type}: ${JSON.stringify(noOrigin.error)}`);
      assert.equal(
        noOrigin.error.message,
        `The body must be sent as Content-Type: application/json, got ${JSON.stringify(type)}`,
        where,
      );
    }
  }
  // MCP: a present, invalid Origin is 403 on every incoming connection — a JSON POST and a GET (an event stream).
  const json = { ...auth, "content-type": "application/json", origin: EVIL };
  const mcpPost = await send(homed, "POST", "/mcp", json, JSON.stringify(MCP_CHAT));
  assert.equal(mcpPost.status, 403, JSON.stringify(mcpPost.error));
  assert.equal(mcpPost.error.message, ORIGIN_REFUSED);
  const mcpGet = await send(homed, "GET", "/mcp", { ...auth, origin: EVIL });
  assert.equal(mcpGet.status, 403, JSON.stringify(mcpGet.error));
  assert.equal(mcpGet.error.message, ORIGIN_REFUSED);
  // The Origin alone decides: a JSON POST (which a browser would preflight) is refused on the OpenAI door too.
  const door = await send(homed, "POST", "/v1/chat/completions", json, bodyFor("/v1/chat/completions"));
  assert.equal(door.status, 403, JSON.stringify(door.error));
}

/** No refused request reached the LLM (the strict fake would also fail at close: its script is empty) or wrote. */
async function nothingHappened(homed: HomedProcess, fake: FakeLlm, owner: string | undefined): Promise<void> {
  assert.equal(fake.requests.length, 0, "no refused request started a turn");
  const auth: Record<string, string> = owner === undefined ? {} : { authorization: `Bearer ${owner}` };
  const topic = await send(homed, "GET", "/api/knowledge/topics/door", auth);
  assert.equal(topic.status, 404, `no refused request wrote knowledge: ${JSON.stringify(topic.error)}`);
}

async function ownAndLocalPass(homed: HomedProcess, fake: FakeLlm, token: string | undefined): Promise<void> {
  const auth: Record<string, string> = token === undefined ? {} : { authorization: `Bearer ${token}` };
  const own = { ...auth, "content-type": "application/json", origin: homed.url };
  fake.enqueue({ reply: "From the console." }, { reply: "From the openai client." }, { reply: "From curl." });
  const door = await send(homed, "POST", "/v1/chat/completions", own, bodyFor("/v1/chat/completions"));
  assert.equal(door.status, 200, JSON.stringify(door.error));
  const initialize = await send(
    homed,
    "POST",
    "/mcp",
    own,
    JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "test", version: "1" } },
    }),
  );
  assert.equal(initialize.status, 200, JSON.stringify(initialize.error));
  // No Origin at all: the openai npm client and curl.
  const client = new OpenAI({ apiKey: token ?? "unused-without-tokens", baseURL: `${homed.url}/v1`, maxRetries: 0 });
  const completion = await client.chat.completions.create({
    model: "homed",
    messages: [{ role: "user", content: "Is the door locked?" }],
  });
  assert.equal(completion.choices[0]!.message.content, "From the openai client.");
  const chat = await fetch(`${homed.url}/api/chat`, {
    method: "POST",
    headers: { ...auth, "content-type": "application/json" },
    body: JSON.stringify({ text: "And the window?" }),
  });
  assert.equal((await chat.json()).reply, "From curl.");
  assert.equal(fake.requests.length, 3, "each request that passed ran one turn");
}

async function withHomed(
  daemon: Record<string, unknown>,
  body: (homed: HomedProcess, fake: FakeLlm) => Promise<void>,
): Promise<void> {
  const fake = FakeLlm.start(DEFAULT_CONTRACT);
  const homed = await startHomed(
    await workspace({
      llm: { base_url: fake.baseUrl, api_key: TEST_KEY },
      onebot: { enabled: false },
      daemon: { openai_api: true, ...daemon },
      mcp: { serve_http: true },
    }),
  );
  // The test's own failure is reported with the teardown's (the fake's complaint alone would hide which route ran).
  const failure = await body(homed, fake).then(() => undefined, (error) => ({ error }));
  await teardown(
    () => {
      if (failure) throw failure.error;
    },
    async () => assert.equal(await homed.stop(), 0, homed.stderr()),
    () => fake.close(),
  );
}

Deno.test("no token (every loopback caller is the owner): a web page's simple POST starts no turn and changes nothing; /mcp refuses a foreign Origin", async () => {
  await withHomed({}, async (homed, fake) => {
    await crossSiteRefused(homed, undefined);
    await nothingHappened(homed, fake, undefined);
    await ownAndLocalPass(homed, fake, undefined);
  });
});

Deno.test("with tokens: the same requests are refused before the token is looked at, with or without one", async () => {
  await withHomed({ api_token: OWNER }, async (homed, fake) => {
    await crossSiteRefused(homed, undefined);
    await crossSiteRefused(homed, OWNER);
    await nothingHappened(homed, fake, OWNER);
    await ownAndLocalPass(homed, fake, OWNER);
  });
});
