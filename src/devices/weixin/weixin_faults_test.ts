import assert from "node:assert/strict";
import { type Clock, systemClock } from "../../clock.ts";
import type { InputEvent, OutputEvent } from "../../io/event.ts";
import { FakeClock } from "../../../tests/support/fake_clock.ts";
import { FakeWeixin } from "../../../tests/support/fake_weixin.ts";
import { waitFor } from "../../../tests/support/wait.ts";
import { OWNER, type StartedDevice, startWeixinDevice } from "./harness_test.ts";
import { weixinLogin } from "./weixin_login.ts";
import { saveWeixinLogin } from "./weixin_state.ts";

/** A device with no member allowed but the owner; `token` and `recheckMs` as the case needs. */
function startDevice(
  fake: FakeWeixin,
  dataDir: string,
  options: { clock?: Clock; token?: string; recheckMs?: number } = {},
): Promise<StartedDevice> {
  return startWeixinDevice(fake, dataDir, {
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.recheckMs ? { recheckMs: options.recheckMs } : {}),
    settings: { allowUsers: [], ...(options.token !== undefined ? { token: options.token } : {}) },
  });
}

const texts = (inputs: InputEvent[]) => inputs.map((input) => input.payload.text);

Deno.test("a restart neither loses nor repeats a message: the cursor is kept on disk after the inputs", async () => {
  await using fake = FakeWeixin.start({ longPollTimeoutMs: 400 });
  const dataDir = await Deno.makeTempDir({ prefix: "homed-weixin-" });
  try {
    const first = await startDevice(fake, dataDir);
    fake.userSends({ from: OWNER, text: "one" });
    fake.userSends({ from: OWNER, text: "two" });
    await waitFor(() => first.inputs.length === 2, "two inputs");
    await waitFor(
      async () => (await Deno.readTextFile(`${dataDir}/weixin/sync.json`).catch(() => "")) !== "",
      "the cursor on disk",
    );
    await first.device.stop();
    // As live: a message queued before the server sees the stopped poll go would be delivered into a closed socket.
    await waitFor(() => !fake.polling, "the fake to see the stopped poll");
    fake.userSends({ from: OWNER, text: "three, while homed was down" });
    const second = await startDevice(fake, dataDir);
    fake.userSends({ from: OWNER, text: "four" });
    await waitFor(() => second.inputs.length === 2, "the two new messages");
    await new Promise((resolve) => setTimeout(resolve, 500)); // one more poll: nothing else comes
    assert.deepEqual(texts(first.inputs), ["one", "two"]);
    assert.deepEqual(texts(second.inputs), ["three, while homed was down", "four"]);
    const files = [...Deno.readDirSync(`${dataDir}/weixin`)].map((entry) => entry.name).sort();
    assert.deepEqual(files, ["context_tokens.json", "sync.json"]);
    for (const name of files) assert.equal(Deno.statSync(`${dataDir}/weixin/${name}`).mode! & 0o777, 0o600, name);
    // The latest token survives the restart: a reminder can still go out.
    await second.device.send({ target: `weixin:private:${OWNER}`, type: "message", payload: { text: "reminder" } });
    assert.equal(fake.sent[0]!.contextToken, second.inputs[1]!.handle!.context_token);
    await second.device.stop();
  } finally {
    await Deno.remove(dataDir, { recursive: true });
  }
});

Deno.test("an expired session pauses polling (no tight loop), says so once, and resumes after a new login is stored", async () => {
  await using fake = FakeWeixin.start({ longPollTimeoutMs: 400, qrPollMs: 100 });
  const dataDir = await Deno.makeTempDir({ prefix: "homed-weixin-" });
  // Waits and re-checks are timers on this clock: only the test moves them.
  const clock = new FakeClock({ start: Date.UTC(2026, 2, 1, 9) });
  try {
    const { device, inputs, lines, told } = await startDevice(fake, dataDir, { clock });
    fake.userSends({ from: OWNER, text: "before" });
    await waitFor(() => inputs.length === 1, "the first input");
    fake.expireSession();
    await waitFor(() => device.status().session_expired === true, "the expiry seen");
    await new Promise((resolve) => setTimeout(resolve, 800));
    // The held poll answered -14; nothing asked since.
    assert.equal(fake.callsWhileExpired, 0, "no call after the expiry, until the re-check");
    const status = device.status();
    assert.equal(status.session_expired_since, new Date(clock.now()).toISOString());
    assert.match(String(status.problem), /session expired: run `homed weixin login` again/);
    const reply: OutputEvent = { target: `weixin:private:${OWNER}`, type: "message", payload: { text: "held" } };
    assert.equal(device.canSend(reply), false, "replies wait in the IO queue");
    clock.advance(10 * 60_000);
    await waitFor(() => fake.callsWhileExpired === 1, "the re-check after 10 minutes");
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(fake.callsWhileExpired, 1, "one call per re-check");
    assert.equal(lines.filter((line) => line.includes("session expired")).length, 1, "logged once, not per check");
    assert.equal(told.length, 1, "the owner is told once, on another chat");
    assert.match(told[0]!.en, /WeChat session expired.*homed weixin login/);
    assert.match(told[0]!.zh, /微信登录已失效/);
    // The owner logs in again (what `homed weixin login` does) and the new token is stored.
    const login = weixinLogin({ baseUrl: fake.baseUrl, clock: systemClock, onStep: () => {} });
    await waitFor(() => fake.login.status === "wait", "a QR code");
    fake.login.confirm({ userId: OWNER });
    await saveWeixinLogin(dataDir, await login);
    clock.advance(10 * 60_000);
    await waitFor(() => device.status().session_expired === false, "the new token taken up");
    fake.userSends({ from: OWNER, text: "after" });
    await waitFor(() => inputs.length === 2, "the message after the login");
    assert.equal(device.canSend(reply), true);
    await device.stop();
  } finally {
    await Deno.remove(dataDir, { recursive: true });
  }
});

Deno.test("a network outage costs a few backed-off calls; replies wait and go once polls succeed again", async () => {
  await using fake = FakeWeixin.start({ longPollTimeoutMs: 400 });
  const dataDir = await Deno.makeTempDir({ prefix: "homed-weixin-" });
  try {
    const { device, inputs, ready } = await startDevice(fake, dataDir);
    fake.userSends({ from: OWNER, text: "are you there?" });
    await waitFor(() => inputs.length === 1, "the input");
    const readyBefore = ready.count;
    fake.outage(1_000);
    const reply: OutputEvent = {
      target: inputs[0]!.source,
      type: "message",
      payload: { text: "yes" },
      replyTo: { id: inputs[0]!.id, source: inputs[0]!.source, sender: OWNER, handle: inputs[0]!.handle! },
    };
    await waitFor(() => !device.canSend(reply), "the device to see the outage");
    assert.match(String(device.status().last_error), /HTTP 503/);
    await waitFor(() => ready.count > readyBefore, "polls to succeed again", { limitMs: 8_000 });
    assert.ok(fake.callsDuringOutage <= 6, `${fake.callsDuringOutage} calls during the outage`);
    assert.ok(device.canSend(reply));
    await device.send(reply);
    assert.deepEqual(fake.sent.map((each) => each.text), ["yes"]);
    await device.stop();
  } finally {
    await Deno.remove(dataDir, { recursive: true });
  }
});

Deno.test("a send cut by the network is interrupted (it waits and goes again), not failed", async () => {
  await using fake = FakeWeixin.start({ longPollTimeoutMs: 400 });
  const dataDir = await Deno.makeTempDir({ prefix: "homed-weixin-" });
  try {
    const { device, inputs } = await startDevice(fake, dataDir);
    fake.userSends({ from: OWNER, text: "hi" });
    await waitFor(() => inputs.length === 1, "the input");
    fake.outage(300);
    const reply: OutputEvent = { target: inputs[0]!.source, type: "message", payload: { text: "hello" } };
    await assert.rejects(device.send(reply), (error: Error) => error.name === "SendInterrupted");
    assert.equal(device.canSend(reply), false);
    await waitFor(() => device.canSend(reply), "polls again", { limitMs: 5_000 });
    await device.send(reply);
    assert.deepEqual(fake.sent.map((each) => each.text), ["hello"]);
    assert.equal(device.status().failed, 0);
    await device.stop();
  } finally {
    await Deno.remove(dataDir, { recursive: true });
  }
});
