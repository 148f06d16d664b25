/**
 * Sight on real QQ needs host names: QQ serves images and voice notes from its own hosts (`*.qpic.cn`,
 * `multimedia.nt.qq.com.cn`), and homed resolves each one to check its addresses before fetching. Here a real homed,
 * started with exactly the flags `homed flags` computes, resolves a QQ-like name through the system resolver: its own
 * mount namespace's `/etc/resolv.conf` names a DNS server this test runs on 127.0.0.1:53. The name's address is public
 * (as QQ's are), and the "internet" is an HTTP proxy on loopback (`HTTP_PROXY`), so no packet leaves the machine.
 */

import assert from "node:assert/strict";
import { encodeBase64 } from "../src/text/base64.ts";
import { DEFAULT_CONTRACT, TEST_KEY } from "./support/contract.ts";
import { FakeDns } from "./support/fake_dns.ts";
import { FakeLlm } from "./support/fake_llm.ts";
import { FakeVision, samplePng } from "./support/fake_media.ts";
import { workspace } from "./support/homed_process.ts";
import { OneBotSim } from "./support/onebot_sim.ts";
import {
  NAME_SERVER,
  type NamespacedHomed,
  resolverNamespace,
  startHomedWithLoopbackResolver,
} from "./support/resolver_namespace.ts";
import { teardown } from "./support/teardown.ts";

const OWNER = "20002000";
const CHANNEL = `qq:private:${OWNER}`;
const QQ_HOST = "multimedia.nt.qq.example";
/** A public address, as QQ's media hosts have; nothing connects to it: every http fetch goes through the proxy. */
const PUBLIC = "93.184.215.14";

/** Stands in for the internet: an HTTP proxy on loopback that serves the pictures of `QQ_HOST` and logs each ask. */
function internet(files: Record<string, Uint8Array>) {
  const asked: string[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (request) => {
    const url = new URL(request.url);
    asked.push(`${url.host}${url.pathname}`);
    const bytes = url.hostname === QQ_HOST ? files[url.pathname] : undefined;
    return bytes ? new Response(bytes.slice()) : new Response("not here", { status: 404 });
  });
  return { server, asked, url: `http://127.0.0.1:${server.addr.port}` };
}

Deno.test({
  name: "an image from a QQ-like host name is resolved and fetched under the daemon's real computed flags",
  ignore: resolverNamespace.ignore,
  fn: async () => {
    resolverNamespace.assertAvailable();
    const photo = samplePng(8_000);
    const dns = await FakeDns.start({ [QQ_HOST]: PUBLIC, "loop.qq.example": "127.0.0.1" }, {
      hostname: NAME_SERVER,
      port: 53,
    });
    const web = internet({ "/download/plant.png": photo });
    const llm = FakeLlm.start(DEFAULT_CONTRACT);
    const vision = FakeVision.start({ model: "vision-test" });
    let homed: NamespacedHomed | undefined;
    let sim: OneBotSim | undefined;
    try {
      const proxy = { HTTP_PROXY: web.url, http_proxy: web.url, NO_PROXY: "127.0.0.1,localhost" };
      homed = await startHomedWithLoopbackResolver(
        await workspace({
          llm: { base_url: llm.baseUrl, api_key: TEST_KEY },
          onebot: { owner: OWNER, min_send_interval: "0s" },
          vision: { base_url: vision.baseUrl, model: "vision-test", timeout: "5s" },
          // As a user lists QQ's own media hosts: a wildcard, no port.
          media: { fetch_hosts: ["*.qq.example"], fetch_timeout: "5s" },
        }),
        { ...proxy, no_proxy: proxy.NO_PROXY },
      );
      const net = homed.flags.find((flag) =>
        flag.startsWith("--allow-net=")
      )?.slice("--allow-net=".length).split(",") ??
        [];
      assert.ok(net.includes(`${NAME_SERVER}:53`), `the name server, and only its DNS port: ${homed.flags.join(" ")}`);
      assert.ok(net.includes("*.qq.example"));
      assert.ok(!net.includes(NAME_SERVER) && !net.includes("*"), "nothing broader");

      sim = await OneBotSim.connect(`${homed.url.replace("http", "ws")}/onebot/v11/ws`);
      const port = homed.workspace.port;
      const qqUrl = `http://${QQ_HOST}/download/plant.png`;
      vision.enqueue({ description: "A fern on a windowsill." });
      llm.enqueue(
        {
          toolCalls: [
            { name: "output_send", arguments: { channel: CHANNEL, type: "image", url: qqUrl } },
            // A name that resolves to this machine: on homed's own port (its API), and on another.
            {
              name: "output_send",
              arguments: { channel: CHANNEL, type: "image", url: `http://loop.qq.example:${port}/api/status` },
            },
            { name: "output_send", arguments: { channel: CHANNEL, type: "image", url: "http://loop.qq.example/x" } },
          ],
        },
        { reply: "A fern; I sent it back to you." },
      );
      sim.privateMessage(OWNER, [
        { type: "text", data: { text: "这是什么？" } },
        { type: "image", data: { file: "plant.image", url: qqUrl } },
      ]);
      const sent = await sim.waitForActions("send_private_msg", 2);

      assert.deepEqual(vision.requests.map((request) => request.images), [[{ mime: "image/png", bytes: photo }]]);
      const messages = llm.requests[0]!.body.messages as Array<{ role: string; content: string }>;
      assert.match(messages.at(-1)!.content, /\[image: A fern on a windowsill\.\]$/);
      // Through the system resolver, the name server of /etc/resolv.conf: for the picture seen, then sent.
      const asked = dns.questions.filter((question) => question.type === "A" && question.name.endsWith(".qq.example"));
      assert.deepEqual([...new Set(asked.map((question) => question.name))], [QQ_HOST, "loop.qq.example"]);
      assert.deepEqual(web.asked, [`${QQ_HOST}/download/plant.png`, `${QQ_HOST}/download/plant.png`]);

      const results = (llm.requests[1]!.body.messages as Array<{ role: string; content: string }>)
        .filter((message) => message.role === "tool").map((message) => message.content);
      assert.deepEqual(results, [
        `Queued image for ${CHANNEL}`,
        `Error: tool "output_send" failed: url "http://loop.qq.example:${port}/api/status" was refused: port ${port} ` +
        `on loop.qq.example is homed's own listener (127.0.0.1:${port}); homed never fetches from itself`,
        'Error: tool "output_send" failed: url "http://loop.qq.example/x" was refused: loop.qq.example resolves to ' +
        "127.0.0.1, a loopback address; list the host in media.allow_hosts to allow it",
      ]);
      const segments = sent.flatMap((action) => action.params.message as Array<{ type: string; data: unknown }>);
      assert.deepEqual(segments.filter((segment) => segment.type === "image"), [
        { type: "image", data: { file: `base64://${encodeBase64(photo)}` } },
      ]);
    } finally {
      await teardown(
        async () => await sim?.close(),
        async () => homed && assert.equal(await homed.stop(), 0, homed.stderr()),
        () => web.server.shutdown(),
        () => dns.close(),
        () => llm.close(),
        () => vision.close(),
      );
    }
  },
});

Deno.test({
  name: "a name server that changed after the flags were computed: homed still starts, and says what to do",
  ignore: resolverNamespace.ignore,
  fn: async () => {
    resolverNamespace.assertAvailable();
    const llm = FakeLlm.start(DEFAULT_CONTRACT);
    let homed: NamespacedHomed | undefined;
    try {
      // The flags grant 127.0.0.1:53; by the time homed starts, resolv.conf names 127.0.0.2 (no packet is sent).
      homed = await startHomedWithLoopbackResolver(
        await workspace({
          llm: { base_url: llm.baseUrl, api_key: TEST_KEY },
          onebot: { owner: OWNER },
          vision: { base_url: "http://127.0.0.1:9/v1", model: "vision-test" },
          media: { fetch_hosts: ["*.qq.example"] },
        }),
        {},
        { nameServerAfterFlags: "127.0.0.2" },
      );
      assert.ok(homed.flags.some((flag) => flag.startsWith("--allow-net=") && flag.includes(`${NAME_SERVER}:53`)));
      assert.match(
        homed.stderr(),
        /homed: warning: \/etc\/resolv\.conf names name servers homed was not granted \(127\.0\.0\.2:53\): pictures and voice notes from host names cannot be fetched until homed runs with the flags `homed flags` prints now/,
      );
    } finally {
      await teardown(
        async () => assert.equal(await homed?.stop(), 0, homed?.stderr()),
        () => llm.close(),
      );
    }
  },
});
