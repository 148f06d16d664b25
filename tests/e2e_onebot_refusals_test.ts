/**
 * QQ connections homed refuses are visible: a OneBot implementation set up with a wrong token, or dialling a path
 * that is not `onebot.path`, gets its 403 or 404 as before — and homed now logs why (one line per reason a minute,
 * then a count) and counts it under `services.io.devices.qq.refused` of `/api/status`, with where it came from; the
 * connections that do come up are listed with their role, since when and their last event.
 */

import assert from "node:assert/strict";
import { DEFAULT_CONTRACT, TEST_KEY } from "./support/contract.ts";
import { FakeLlm } from "./support/fake_llm.ts";
import { startHomed, workspace } from "./support/homed_process.ts";
import { OneBotSim } from "./support/onebot_sim.ts";
import { teardown } from "./support/teardown.ts";
import { waitFor } from "./support/wait.ts";

const TOKEN = "onebot-token-0123456789";
const OWNER = "20002000";

Deno.test("refused OneBot connections: a wrong token and a wrong path each logged with the reason and counted in status", async () => {
  const fake = FakeLlm.start(DEFAULT_CONTRACT);
  const homed = await startHomed(
    await workspace({
      llm: { base_url: fake.baseUrl, api_key: TEST_KEY },
      onebot: { owner: OWNER, access_token: TOKEN, min_send_interval: "0s" },
    }),
  );
  const ws = `${homed.url.replace("http", "ws")}`;
  const qq = async () => (await (await fetch(`${homed.url}/api/status`)).json()).services.io.devices.qq;
  const sims: OneBotSim[] = [];
  try {
    // NapCat with a wrong token, three times (it redials): refused each time, one log line.
    for (let i = 0; i < 3; i++) {
      await assert.rejects(
        OneBotSim.connect(`${ws}/onebot/v11/ws`, { token: "wrong-token-000000000", selfId: "10001000" }),
      );
    }
    // The right token on a path that is not onebot.path (the suffix left out): the app's 404, now counted too.
    await assert.rejects(
      OneBotSim.connect(`${ws}/onebot/v11?access_token=${TOKEN}`, { token: TOKEN, selfId: "10001000" }),
    );
    // No token at all.
    await assert.rejects(OneBotSim.connect(`${ws}/onebot/v11/ws`, { flavour: "gocq", token: "", selfId: "10001000" }));

    await waitFor(async () => (await qq()).refused.total === 5, "five refusals counted");
    const refused = (await qq()).refused;
    assert.deepEqual(refused.by_reason, { wrong_token: 3, wrong_path: 1, missing_token: 1 });
    const last = new Map(
      (refused.last as Array<Record<string, string>>).map((view) => [view.reason, view]),
    );
    assert.equal(last.get("wrong_token")?.from, "127.0.0.1");
    assert.equal(last.get("wrong_token")?.path, "/onebot/v11/ws");
    assert.equal(last.get("wrong_token")?.self_id, "10001000");
    assert.equal(last.get("wrong_token")?.message, "The OneBot access token is not onebot.access_token");
    assert.equal(last.get("wrong_path")?.path, "/onebot/v11", "the path without its query (it held the token)");
    assert.equal(last.get("wrong_path")?.message, '"/onebot/v11" is not onebot.path ("/onebot/v11/ws")');

    await waitFor(() => /\(wrong_path\)/.test(homed.stderr()), "the wrong path logged");
    const log = homed.stderr();
    const lines = (reason: string) =>
      log.split("\n").filter((line) => line.includes(`Refused a OneBot connection (${reason})`));
    assert.equal(lines("wrong_token").length, 1, `one line a minute per reason:\n${log}`);
    assert.match(
      lines("wrong_token")[0]!,
      /from 127\.0\.0\.1 on "\/onebot\/v11\/ws" as QQ 10001000: The OneBot access token is not onebot\.access_token/,
    );
    assert.match(lines("wrong_path")[0]!, /"\/onebot\/v11" is not onebot\.path \("\/onebot\/v11\/ws"\)/);
    assert.equal(lines("missing_token").length, 1);
    assert.ok(!log.includes(TOKEN), "the token is never logged");
    assert.ok(!log.includes("wrong-token-000000000"), "nor a wrong one");

    // The right one connects; status lists it with its role, since when, and its last event.
    const sim = await OneBotSim.connect(`${ws}/onebot/v11/ws`, { token: TOKEN, selfId: "10001000" });
    sims.push(sim);
    fake.enqueue({ reply: "Hello." });
    sim.privateMessage(OWNER, "hi");
    await sim.waitForActions("send_private_msg");
    const status = await qq();
    assert.equal(status.bots.length, 1);
    const connection = status.bots[0].connections[0];
    assert.equal(connection.self_id, "10001000");
    assert.equal(connection.role, "universal");
    assert.ok(Date.parse(connection.connected_at) > 0);
    assert.ok(Date.parse(connection.last_event_at) >= Date.parse(connection.connected_at), connection.last_event_at);
    assert.equal(status.bots[0].address, "127.0.0.1");
  } finally {
    await teardown(
      ...sims.map((sim) => () => sim.close()),
      async () => assert.equal(await homed.stop(), 0, homed.stderr()),
      () => fake.close(),
    );
  }
});
