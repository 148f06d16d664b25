/**
 * QQ end to end: a real homed, the fake LLM server, and a simulated OneBot implementation dialling homed's reverse
 * WebSocket over loopback — handshakes as go-cqhttp, NapCat and Lagrange send them, a conversation through the LLM
 * and back as an action, CQ-code safety in both message formats, and a reply that outlives its connection.
 */

import assert from "node:assert/strict";
import { DEFAULT_CONTRACT, TEST_KEY } from "./support/contract.ts";
import { FakeLlm } from "./support/fake_llm.ts";
import { type HomedProcess, startHomed, workspace } from "./support/homed_process.ts";
import { handshakeHeaders, handshakeStatus, OneBotSim } from "./support/onebot_sim.ts";
import { teardown } from "./support/teardown.ts";
import { waitFor } from "./support/wait.ts";

const TOKEN = "onebot-token-0123456789";
const OWNER = "20002000";
const GROUP = "500050005";
type Messages = Array<{ role: string; content: string }>;

async function homedWith(fake: FakeLlm, onebot: Record<string, unknown>): Promise<HomedProcess> {
  return await startHomed(
    await workspace({
      llm: { base_url: fake.baseUrl, api_key: TEST_KEY },
      onebot: { owner: OWNER, allow_groups: [GROUP], min_send_interval: "0s", ...onebot },
    }),
  );
}

const wsUrl = (homed: HomedProcess, path = "/onebot/v11/ws") => `${homed.url.replace("http", "ws")}${path}`;

async function qqStatus(homed: HomedProcess) {
  return (await (await fetch(`${homed.url}/api/status`)).json()).services.io.devices.qq;
}

Deno.test("handshakes: go-cqhttp's Token scheme, Lagrange's split Api/Event roles, refusals before the upgrade", async () => {
  const fake = FakeLlm.start(DEFAULT_CONTRACT);
  const homed = await homedWith(fake, { access_token: TOKEN });
  const sims: OneBotSim[] = [];
  try {
    const url = wsUrl(homed);
    assert.deepEqual(await handshakeStatus(url, handshakeHeaders("gocq", "10001000", "")), {
      status: 401,
      message: "The OneBot connection needs onebot.access_token (Authorization: Bearer/Token, or ?access_token=)",
    });
    assert.equal(
      (await handshakeStatus(url, handshakeHeaders("napcat", "10001000", ""))).status,
      401,
      '"Bearer " is no token',
    );
    assert.deepEqual(await handshakeStatus(url, handshakeHeaders("gocq", "10001000", "wrong-token-000000000")), {
      status: 403,
      message: "The OneBot access token is not onebot.access_token",
    });
    assert.deepEqual(await handshakeStatus(url, handshakeHeaders("napcat", undefined, TOKEN)), {
      status: 400,
      message: 'X-Self-ID must be the bot\'s QQ number, got ""',
    });
    assert.match((await handshakeStatus(url, handshakeHeaders("napcat", "bot-one", TOKEN))).message, /got "bot-one"/);
    assert.match((await handshakeStatus(url, handshakeHeaders("gocq", "1", TOKEN, "Admin"))).message, /X-Client-Role/);
    // A web page posing as an implementation (cross-site WebSocket): browsers always send an Origin.
    assert.deepEqual(
      await handshakeStatus(url, { ...handshakeHeaders("napcat", "10001000", TOKEN), Origin: "http://evil.example" }),
      {
        status: 403,
        message: 'OneBot connections come from QQ implementations, not web pages (Origin "http://evil.example")',
      },
    );

    sims.push(await OneBotSim.connect(url, { flavour: "gocq", token: TOKEN, selfId: "10001000" }));
    sims.push(
      await OneBotSim.connect(`${url}/`, { flavour: "lagrange", token: TOKEN, selfId: "10002000", role: "Api" }),
    );
    sims.push(
      await OneBotSim.connect(`${url}/?access_token=${TOKEN}`, {
        flavour: "lagrange",
        token: "",
        selfId: "10002000",
        role: "Event",
      }),
    );
    await waitFor(async () => (await qqStatus(homed)).bots.length === 2, "two bots connected");
    const bots = (await qqStatus(homed)).bots as Array<{ self_id: string; connections: Array<{ role: string }> }>;
    assert.deepEqual(
      bots.map((bot) => [bot.self_id, bot.connections.map((c) => c.role).sort()]).sort(),
      [["10001000", ["universal"]], ["10002000", ["api", "event"]]],
    );
    // A second Universal socket for the same bot replaces the first, which homed closes.
    const again = await OneBotSim.connect(url, { flavour: "gocq", token: TOKEN, selfId: "10001000" });
    sims.push(again);
    await sims[0]!.closed;
  } finally {
    await teardown(
      ...sims.map((sim) => () => sim.close()),
      async () => assert.equal(await homed.stop(), 0, homed.stderr()),
      () => fake.close(),
    );
  }
});

Deno.test("a QQ conversation: the owner's message reaches the LLM tagged, the reply goes back as segments", async () => {
  const fake = FakeLlm.start(DEFAULT_CONTRACT);
  const homed = await homedWith(fake, {});
  const sim = await OneBotSim.connect(wsUrl(homed), { flavour: "napcat" }); // no token configured: "Bearer " passes
  try {
    fake.enqueue({ reply: "好的，已经开灯。" }, { reply: "Here: [CQ:at,qq=all] is just text." });
    sim.privateMessage(OWNER, [{ type: "text", data: { text: "把客厅的灯打开" } }]);
    const [reply] = await sim.waitForActions("send_private_msg");
    assert.deepEqual(reply!.params, {
      user_id: Number(OWNER),
      message: [{ type: "text", data: { text: "好的，已经开灯。" } }],
    });
    const asked = (fake.requests[0]!.body.messages as Messages).at(-1)!.content;
    assert.ok(
      asked.endsWith(`[via qq:private:${OWNER}, from ${OWNER} as "nick${OWNER}", trust owner] 把客厅的灯打开`),
      asked,
    );

    // String format, escaped CQ text from the user; an @everyone in the model's answer stays text.
    sim.groupMessage(GROUP, OWNER, `[CQ:at,qq=${sim.selfId}] repeat &#91;CQ:at,qq=all&#93;`);
    const [group] = await sim.waitForActions("send_group_msg");
    const segments = group!.params.message as Array<{ type: string; data: Record<string, string> }>;
    assert.deepEqual(segments.map((s) => s.type), ["reply", "at", "text", "text"]);
    assert.deepEqual(segments[1]!.data, { qq: OWNER });
    assert.equal(segments[3]!.data.text, "Here: [CQ:at,qq=all] is just text.");
    const groupAsked = (fake.requests[1]!.body.messages as Messages).at(-1)!.content;
    assert.ok(groupAsked.endsWith(`trust owner] repeat [CQ:at,qq=all]`), groupAsked);

    // Group chatter without a mention and strangers cost no LLM call.
    sim.groupMessage(GROUP, "77007700", "nobody asked the butler");
    sim.privateMessage("88008800", "hello stranger here");
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(fake.requests.length, 2);
    assert.match(homed.stderr(), /Ignored a QQ private message from 88008800: not the owner, a listed user or group/);
  } finally {
    await teardown(
      () => sim.close(),
      async () => assert.equal(await homed.stop(), 0, homed.stderr()),
      () => fake.close(),
    );
  }
});

Deno.test("a reply finished while QQ is disconnected is sent once, after the implementation redials", async () => {
  const fake = FakeLlm.start(DEFAULT_CONTRACT);
  let release!: () => void;
  const gate = new Promise<void>((resolve) => release = resolve);
  fake.enqueue({
    raw: async (request) => {
      await gate;
      return Response.json({
        id: "held",
        object: "chat.completion",
        created: 0,
        model: request.body.model,
        choices: [{
          index: 0,
          message: { role: "assistant", content: "Done, the heating is on." },
          finish_reason: "stop",
        }],
        usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
      });
    },
  });
  const homed = await homedWith(fake, {});
  let sim = await OneBotSim.connect(wsUrl(homed));
  try {
    sim.privateMessage(OWNER, "Turn the heating on");
    await fake.received(1);
    await sim.close(); // the implementation goes away mid-turn
    release();
    await waitFor(async () => (await qqStatus(homed)).queued_replies === 1, "the reply to wait in the queue");
    sim = await OneBotSim.connect(wsUrl(homed));
    const [sent] = await sim.waitForActions("send_private_msg");
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(sim.actions.filter((a) => a.action === "send_private_msg").length, 1, "sent exactly once");
    assert.equal((sent!.params.message as Array<{ data: { text: string } }>)[0]!.data.text, "Done, the heating is on.");
  } finally {
    await teardown(
      () => sim.close(),
      async () => assert.equal(await homed.stop(), 0, homed.stderr()),
      () => fake.close(),
    );
  }
});

Deno.test("forward WebSocket: homed dials an implementation that only serves, converses, and redials after a drop", async () => {
  const fake = FakeLlm.start(DEFAULT_CONTRACT);
  const sockets: WebSocket[] = [];
  const actions: Array<{ action: string; params: Record<string, unknown>; echo: string }> = [];
  const auth: string[] = [];
  // The implementation's forward server (NapCat serves on 127.0.0.1:3001 by default).
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (request) => {
    auth.push(request.headers.get("authorization") ?? "");
    const { socket, response } = Deno.upgradeWebSocket(request);
    socket.addEventListener("open", () => {
      sockets.push(socket);
      socket.send(
        JSON.stringify({
          post_type: "meta_event",
          meta_event_type: "lifecycle",
          sub_type: "connect",
          self_id: 10001000,
          time: 0,
        }),
      );
    });
    socket.addEventListener("message", (message) => {
      const frame = JSON.parse(String(message.data));
      actions.push(frame);
      socket.send(
        JSON.stringify({
          status: "ok",
          retcode: 0,
          data: { message_id: 7, user_id: 10001000, nickname: "阿福" },
          echo: frame.echo,
        }),
      );
    });
    return response;
  });
  const homed = await homedWith(fake, { forward_url: `ws://127.0.0.1:${server.addr.port}/`, access_token: TOKEN });
  try {
    await waitFor(() => sockets.length === 1, "homed to dial the forward server");
    assert.equal(auth[0], `Bearer ${TOKEN}`);
    fake.enqueue({ reply: "Forward works." }, { reply: "Still here after the drop." });
    const message = (text: string) =>
      JSON.stringify({
        time: 0,
        self_id: 10001000,
        post_type: "message",
        message_type: "private",
        sub_type: "friend",
        message_id: 1,
        user_id: Number(OWNER),
        message: text,
        raw_message: text,
        font: 0,
        sender: { nickname: "主人" },
      });
    sockets[0]!.send(message("hello over forward"));
    await waitFor(() => actions.some((a) => a.action === "send_private_msg"), "the reply action");
    sockets[0]!.close(1001, "implementation restarting");
    await waitFor(() => sockets.length === 2, "homed to redial", { limitMs: 15_000 });
    sockets[1]!.send(message("and again"));
    await waitFor(() => actions.filter((a) => a.action === "send_private_msg").length === 2, "the second reply");
    const texts = actions.filter((a) => a.action === "send_private_msg")
      .map((a) => (a.params.message as Array<{ data: { text: string } }>)[0]!.data.text);
    assert.deepEqual(texts, ["Forward works.", "Still here after the drop."]);
    const status = (await (await fetch(`${homed.url}/api/status`)).json()).services["onebot-forward"];
    assert.equal(status.connected, true);
    assert.equal(status.self_id, "10001000");
  } finally {
    await teardown(
      async () => assert.equal(await homed.stop(), 0, homed.stderr()),
      () => server.shutdown(),
      () => fake.close(),
    );
  }
});

Deno.test("QQ from a plugin: onebot.enabled false, plugins/qq with native onebot provides the device; removed, it is gone", async () => {
  const fake = FakeLlm.start(DEFAULT_CONTRACT);
  const ws = await workspace({
    llm: { base_url: fake.baseUrl, api_key: TEST_KEY },
    onebot: { enabled: false, owner: OWNER, min_send_interval: "0s" },
    plugins: { watch: false },
  });
  const homed = await startHomed(ws);
  const sims: OneBotSim[] = [];
  try {
    const off = await handshakeStatus(wsUrl(homed), handshakeHeaders("napcat", "10001000", ""));
    assert.deepEqual(off, {
      status: 503,
      message: 'QQ is not on: set onebot.enabled: true, or add a plugin with native: "onebot" (plugins/qq)',
    });
    await Deno.mkdir(`${ws.dir}/plugins/qq`, { recursive: true });
    await Deno.writeTextFile(
      `${ws.dir}/plugins/qq/skill.json`,
      JSON.stringify({ name: "qq", version: "1.0.0", description: "QQ through OneBot V11", native: "onebot" }),
    );
    const reload = await fetch(`${homed.url}/api/plugins/reload`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    assert.deepEqual(await reload.json(), { skills: 0, eligible: 0, problems: [] });
    const channels = await (await fetch(`${homed.url}/api/channels`)).json();
    assert.ok((channels.channels as Array<{ name: string }>).some((channel) => channel.name === "qq"));
    const listed = (await (await fetch(`${homed.url}/api/plugins`)).json()).plugins as Array<Record<string, unknown>>;
    assert.deepEqual(
      listed.map((p) => [p.name, p.kind, p.eligible, p.reasons]),
      [["qq", "native", true, ["its device comes from the onebot factory"]]],
    );
    const sim = await OneBotSim.connect(wsUrl(homed), { flavour: "napcat" });
    sims.push(sim);
    fake.enqueue({ reply: "QQ works through the plugin." });
    sim.privateMessage(OWNER, "hello from QQ");
    const [reply] = await sim.waitForActions("send_private_msg");
    assert.deepEqual(reply!.params, {
      user_id: Number(OWNER),
      message: [{ type: "text", data: { text: "QQ works through the plugin." } }],
    });
    await Deno.remove(`${ws.dir}/plugins/qq`, { recursive: true });
    const removed = await fetch(`${homed.url}/api/plugins/reload`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    assert.equal(removed.status, 200, await removed.text());
    const gone = await handshakeStatus(wsUrl(homed), handshakeHeaders("napcat", "10001000", ""));
    assert.equal(gone.status, 503, "the plugin's device left the table");
  } finally {
    await teardown(
      ...sims.map((sim) => () => sim.close()),
      async () => assert.equal(await homed.stop(), 0, homed.stderr()),
      () => fake.close(),
    );
  }
});
