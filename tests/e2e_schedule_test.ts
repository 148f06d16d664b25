/**
 * End to end (real clock, fake LLM server): a reminder asked for over HTTP fires three seconds later, its turn runs,
 * and the reply reaches a client of `/api/events`; killed with SIGKILL before a reminder is due and started again,
 * homed fires it once, late.
 */

import assert from "node:assert/strict";
import { DEFAULT_CONTRACT, TEST_KEY } from "./support/contract.ts";
import { FakeLlm } from "./support/fake_llm.ts";
import { postJson, startHomed, workspace } from "./support/homed_process.ts";
import { OneBotSim } from "./support/onebot_sim.ts";
import { listenToEvents } from "./support/events.ts";
import { teardown } from "./support/teardown.ts";
import { waitFor } from "./support/wait.ts";

/** An ISO time `ms` from now with a +08:00 offset, as the model would write it for a household in Shanghai. */
function inShanghai(ms: number): string {
  const local = new Date(Date.now() + ms + 8 * 3_600_000).toISOString().replace("Z", "+08:00");
  return local;
}

/** Collects what `/api/events` pushes until `stop`. */
const listen = (url: string) => listenToEvents(url);

Deno.test("a reminder set over HTTP fires 3 s later and its reply reaches /api/events; after SIGKILL it fires once, late", async () => {
  const fake = FakeLlm.start(DEFAULT_CONTRACT);
  const ws = await workspace({
    llm: { base_url: fake.baseUrl, api_key: TEST_KEY },
    daemon: { timezone: "Asia/Shanghai" },
    onebot: { enabled: false },
  });
  let homed = await startHomed(ws);
  let events = listen(homed.url);
  try {
    fake.enqueue(
      {
        toolCalls: [{
          name: "schedule_create",
          arguments: { text: "Tell the owner to stretch", at: inShanghai(3_000) },
        }],
      },
      { reply: "I will remind you in 3 seconds." },
      { reply: "Time to stretch!" },
    );
    const set = await postJson(`${homed.url}/api/chat`, { text: "Remind me in 3 seconds to stretch" });
    assert.equal(set.status, 200, JSON.stringify(set.body));
    const listed = await (await fetch(`${homed.url}/api/schedules`)).json();
    assert.equal(listed.schedules.length, 1);
    assert.equal(listed.schedules[0].creator, "owner");
    assert.equal(listed.schedules[0].channel, "http");
    assert.match(listed.schedules[0].next_run_local, /\(Asia\/Shanghai\)$/);
    await waitFor(() => events.messages.length > 0, "the reminder on /api/events", { limitMs: 15_000 });
    assert.deepEqual(events.messages[0], {
      channel: "http",
      type: "message",
      text: "Time to stretch!",
      reply_to: events.messages[0]!.reply_to,
    });
    const asked = (fake.requests[2]!.body.messages as Array<{ content: string }>).at(-1)!.content;
    assert.match(
      asked,
      /\[via timer:s-[0-9a-f]{8}, from owner, trust owner\] \[Scheduled by owner; due [^\]]+\] Tell the owner to stretch/,
    );
    const status = await (await fetch(`${homed.url}/api/status`)).json();
    assert.equal(status.schedules.active, 0);
    assert.equal(status.schedules.fired, 1);

    // A reminder 3 s ahead, then a crash before it is due.
    fake.enqueue(
      { toolCalls: [{ name: "schedule_create", arguments: { text: "Check the oven", at: inShanghai(3_000) } }] },
      { reply: "Noted." },
    );
    assert.equal((await postJson(`${homed.url}/api/chat`, { text: "In 3 seconds, check the oven" })).status, 200);
    await events.stop();
    assert.equal(await homed.stop({ keep: true, signal: "SIGKILL" }), 137);
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    fake.enqueue({ reply: "Sorry, a little late: please check the oven." });
    homed = await startHomed(ws);
    events = listen(homed.url);
    await waitFor(() => events.messages.length > 0, "the late reminder", { limitMs: 15_000 });
    assert.equal(events.messages[0]!.text, "Sorry, a little late: please check the oven.");
    const late = (fake.requests.at(-1)!.body.messages as Array<{ content: string }>).at(-1)!.content;
    assert.match(late, /late by \d+ seconds \(homed was not running or the machine slept\)\] Check the oven/);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    assert.equal(events.messages.length, 1, "once");
    assert.equal(fake.requests.length, 6, "two chats of two rounds, the first reminder, the late one: nothing more");
    assert.deepEqual(fake.violations, []);
  } finally {
    await teardown(
      () => events.stop(),
      () => homed.stop(),
      () => fake.close(),
    );
  }
});

Deno.test("a reminder asked for on QQ is delivered on QQ, to the one who asked, with their trust", async () => {
  const fake = FakeLlm.start(DEFAULT_CONTRACT);
  const member = "30003000";
  const homed = await startHomed(
    await workspace({
      llm: { base_url: fake.baseUrl, api_key: TEST_KEY },
      daemon: { timezone: "Asia/Shanghai" },
      onebot: { owner: "20002000", allow_users: [member], min_send_interval: "0s" },
    }),
  );
  const sim = await OneBotSim.connect(`${homed.url.replace("http", "ws")}/onebot/v11/ws`, { flavour: "napcat" });
  try {
    fake.enqueue(
      { toolCalls: [{ name: "schedule_create", arguments: { text: "Remind them: laundry", at: inShanghai(2_000) } }] },
      { reply: "好的，两秒后提醒你。" },
      { reply: "该收衣服了！" },
    );
    sim.privateMessage(member, "两秒后提醒我收衣服");
    const [ack] = await sim.waitForActions("send_private_msg");
    assert.equal(ack!.params.user_id, Number(member));
    const [, reminder] = await sim.waitForActions("send_private_msg", 2, 15_000);
    assert.deepEqual(reminder!.params, {
      user_id: Number(member),
      message: [{ type: "text", data: { text: "该收衣服了！" } }],
    });
    const asked = (fake.requests[2]!.body.messages as Array<{ content: string }>).at(-1)!.content;
    assert.match(
      asked,
      new RegExp(`\\[via timer:s-[0-9a-f]{8}, from ${member}, trust household\\] \\[Scheduled by ${member};`),
    );
    assert.deepEqual(fake.violations, []);
  } finally {
    await teardown(
      () => sim.close(),
      () => homed.stop(),
      () => fake.close(),
    );
  }
});

Deno.test("on a UTC machine with daemon.timezone Asia/Shanghai: the prompt's now is Shanghai's, and 'every weekday at 7' is 07:00 there", async () => {
  const fake = FakeLlm.start(DEFAULT_CONTRACT);
  const ws = await workspace({
    llm: { base_url: fake.baseUrl, api_key: TEST_KEY },
    daemon: { timezone: "Asia/Shanghai" },
    onebot: { enabled: false },
  });
  // The machine's own zone is UTC, whatever this shell's is.
  const homed = await startHomed({ ...ws, env: { ...ws.env, TZ: "UTC" } });
  try {
    fake.enqueue(
      { toolCalls: [{ name: "schedule_create", arguments: { text: "Wake the owner", cron: "0 7 * * 1-5" } }] },
      { reply: "Every weekday at 7." },
    );
    const { status } = await postJson(`${homed.url}/api/chat`, { text: "wake me every weekday at 7" });
    assert.equal(status, 200);
    const user = (fake.requests[0]!.body.messages as Array<{ role: string; content: string }>).at(-1)!.content;
    const now = /### Now\n> (\d{4}-\d\d-\d\d \d\d:\d\d), \w+day \(Asia\/Shanghai, UTC\+08:00\); (\S+)\n/.exec(user);
    assert.ok(now, user.slice(0, 300));
    const local = new Date(Date.parse(now[2]!) + 8 * 3_600_000).toISOString().slice(0, 16).replace("T", " ");
    assert.equal(now[1], local, "the local time is Shanghai's");
    const schedules = await (await fetch(`${homed.url}/api/schedules`)).json();
    const [schedule] = schedules.schedules as Array<{ timezone: string; next_run: string; next_run_local: string }>;
    assert.equal(schedule!.timezone, "Asia/Shanghai");
    assert.match(schedule!.next_run_local, /^\d{4}-\d\d-\d\d 07:00 \(Asia\/Shanghai\)$/);
    assert.match(schedule!.next_run, /T23:00:00\.000Z$/, "07:00 in Shanghai is 23:00 UTC the day before");
  } finally {
    await teardown(async () => assert.equal(await homed.stop(), 0, homed.stderr()), () => fake.close());
  }
});
