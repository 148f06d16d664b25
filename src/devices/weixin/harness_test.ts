/**
 * The WeChat device's tests' harness (no tests of its own): a device pointed at a {@link FakeWeixin}, a context that
 * records what it hands in, a logger that keeps every line, and the notices it leaves for the owner.
 *
 * @module
 */

import type { OwnerNotice } from "../kind.ts";
import { type Clock, systemClock } from "../../clock.ts";
import type { DeviceContext, InputDraft } from "../../io/device.ts";
import type { InputEvent } from "../../io/event.ts";
import type { FakeWeixin } from "../../../tests/support/fake_weixin.ts";
import { recordingLogger } from "../../../tests/support/recording_logger.ts";
import { WeixinDevice, type WeixinDeviceOptions } from "./weixin_device.ts";

export const OWNER = "wxid_owner@im.wechat";
export const MEMBER = "wxid_member@im.wechat";
export const STRANGER = "wxid_stranger@im.wechat";

/** What a device did: the lists a harness's devices record into. */
export interface Recorded {
  inputs: InputEvent[];
  lines: string[];
  /** How often the device said it may send again. */
  ready: { count: number };
  /** What the owner was told on another chat. */
  told: OwnerNotice[];
}

/** Empty lists to record into. */
export function recorded(): Recorded {
  return { inputs: [], lines: [], ready: { count: 0 }, told: [] };
}

/** A started device and what it did. */
export type StartedDevice = Recorded & { device: WeixinDevice };

/** The device's options, each settled by the harness unless given; `settings` are merged one by one. */
export type DeviceOverrides = Partial<Omit<WeixinDeviceOptions, "settings">> & {
  settings?: Partial<WeixinDeviceOptions["settings"]>;
};

/**
 * Starts a device on `dataDir` against `fake`: the owner and one allowed member, fast polls, and the official retry
 * shape (2 s growing to 30 s) at a tenth of the time, so a 10 s outage is 1 s here. Devices given the same `into`
 * (a restart on the same data dir) record into the same lists.
 *
 * @example
 * ```ts
 * import { FakeWeixin } from "../../../tests/support/fake_weixin.ts";
 *
 * await using fake = FakeWeixin.start({ longPollTimeoutMs: 400 });
 * const started = await startWeixinDevice(fake, await Deno.makeTempDir());
 * fake.userSends({ from: OWNER, text: "你好" });
 * ```
 */
export async function startWeixinDevice(
  fake: FakeWeixin,
  dataDir: string,
  overrides: DeviceOverrides = {},
  into: Recorded = recorded(),
): Promise<StartedDevice> {
  const clock: Clock = overrides.clock ?? systemClock;
  const { inputs, lines, ready, told } = into;
  const { settings, ...options } = overrides;
  const device = new WeixinDevice({
    clock,
    logger: recordingLogger(lines),
    random: () => 0.5,
    retry: { minMs: 200, maxMs: 3_000 },
    tellOwner: (notice) => told.push(notice),
    ...options,
    settings: {
      token: fake.botToken ?? "",
      baseUrl: fake.baseUrl,
      cdnUrl: fake.cdnBaseUrl,
      owner: OWNER,
      allowUsers: [MEMBER],
      splitAt: 2_000,
      minSendIntervalMs: 600,
      pollTimeoutMs: 400,
      queueLimit: 10,
      dataDir,
      ...settings,
    },
  });
  const context: DeviceContext = {
    emit: (draft: InputDraft) => {
      const event = { ...draft, id: crypto.randomUUID(), time: clock.now() } as InputEvent;
      inputs.push(event);
      return event;
    },
    readyAgain: () => ready.count++,
    waiting: () => 0,
    clock,
    log: recordingLogger(lines),
  };
  await device.start(context);
  return { ...into, device };
}
