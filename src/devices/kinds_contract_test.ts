/**
 * The contract every device kind passes, run over the one list (as OpenClaw's channel contract suite runs over every
 * channel): each kind is turned on with its own `example`, its peers made unreachable (a closed loopback port, a
 * program homed may not run, a serial port that is not there), and its devices must still behave. A kind added to
 * `kinds.ts` gets these checks without writing them.
 */

import assert from "node:assert/strict";
import type { Logger } from "@logtape/logtape";
import { systemClock } from "../clock.ts";
import { parseConfig } from "../config/load.ts";
import type { Config } from "../config/schema.ts";
import type { Device, DeviceContext, InputDraft } from "../io/device.ts";
import type { InputEvent } from "../io/event.ts";
import { DEVICE_KINDS } from "./kinds.ts";
import type { KindContext, ListedKind } from "./kind.ts";

/** A secret value no output may show; every `${VARIABLE}` of an example reads as one. */
const secretOf = (name: string) => `contract-secret-${name}-7f3a9c2e51`;

/** A loopback port nothing listens on: what an unreachable peer looks like. */
function closedPort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr as Deno.NetAddr;
  listener.close();
  return port;
}

/** The config with only `kind` on, from its example, every URL's host made a closed loopback port. */
function configFor(kind: ListedKind, port: number): Config {
  const example = kind.example.replace(/(\w+:\/\/)[^/"'\s,}]+/g, `$1127.0.0.1:${port}`);
  const [top, ...inner] = kind.key.split(".");
  const section = `${top}: ${inner.reduceRight((value, key) => `{ ${key}: ${value} }`, example)}`;
  const text = [
    // QQ is on by default: off unless it is the kind under test.
    ...(kind.key === "onebot" ? [] : ["onebot: { enabled: false }"]),
    // The servers a device needs are there, but unreachable too.
    `vision: { base_url: "http://127.0.0.1:${port}/v1", model: m }`,
    `speech: { stt: { base_url: "http://127.0.0.1:${port}/v1", model: s }, tts: { base_url: "http://127.0.0.1:${port}/v1", model: t, voice: v } }`,
    section,
  ].join("\n");
  return parseConfig({
    text,
    location: { path: undefined, origin: "embedded defaults" },
    readEnv: (name) => secretOf(name),
    cwd: "/",
  }).config;
}

/** Every line the kind logs, with its properties, as text. */
function recordingLogger(lines: string[]): (name: string) => Logger {
  const keep = (message: unknown, properties?: Record<string, unknown>) => {
    const shown = properties
      ? Object.values(properties).map((value) => value instanceof Error ? `${value.message} ${value.stack}` : value)
      : [];
    lines.push(`${String(message)} ${JSON.stringify(shown, (_key, value) => value ?? null)}`);
  };
  const logger: Logger = new Proxy({} as Logger, {
    get: (_target, key) => {
      if (key === "getChild" || key === "with") return () => logger;
      if (key === "isEnabledFor") return () => true;
      return keep;
    },
  });
  return () => logger;
}

/** What a kind's devices may use of homed: media that fail as an unreachable server would. */
function contextFor(lines: string[]): KindContext {
  const down = () => Promise.reject(new Error("the media server is unreachable"));
  return {
    clock: systemClock,
    random: () => 0.5,
    logger: recordingLogger(lines),
    media: { read: () => Promise.resolve(undefined), hear: down, speak: down, look: down, asSilk: down },
    learnDevices: () => Promise.resolve(),
    channels: () => [],
  };
}

/** A device context that keeps what the device hands in. */
function deviceContext(device: Device, lines: string[], inputs: InputDraft[]): DeviceContext {
  return {
    emit: (draft) => {
      inputs.push(draft);
      return { ...draft, id: crypto.randomUUID(), time: Date.now() } as InputEvent;
    },
    readyAgain: () => {},
    waiting: () => 0,
    clock: systemClock,
    log: recordingLogger(lines)(device.name),
  };
}

/** What `work` settled as, or "hung" when it takes longer than `ms`. */
async function settled(work: Promise<string>, ms: number): Promise<string> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const hung = new Promise<string>((resolve) => timer = setTimeout(() => resolve("hung"), ms));
  try {
    return await Promise.race([work, hung]);
  } finally {
    clearTimeout(timer);
  }
}

/** Waits until `done` or `ms` pass. */
async function within(ms: number, done: () => boolean): Promise<void> {
  const until = Date.now() + ms;
  while (!done() && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 20));
}

/** What a status that says why the device cannot work contains. */
const SAYS_WHY =
  /error|refused|denied|not (?:connected|found|installed|allowed)|missing|unreachable|cannot|failed|no such/i;

Deno.test("every device kind's example is a section homed accepts, and turns the kind on", () => {
  const port = closedPort();
  for (const kind of DEVICE_KINDS) {
    const config = configFor(kind, port);
    const made = kind.create(config, contextFor([]));
    assert.ok(made.devices.length + (made.http?.length ?? 0) > 0, `${kind.key}: its example makes nothing`);
  }
});

for (const kind of DEVICE_KINDS) {
  Deno.test(`device kind ${kind.key}: the contract with its peer unreachable`, async () => {
    const port = closedPort();
    const config = configFor(kind, port);
    const lines: string[] = [];
    const made = kind.create(config, contextFor(lines));
    const secrets = kind.secrets(config);
    const shown: string[] = [];
    for (const device of made.devices) {
      // Tools: the same on every call, each declaring who may cause it.
      const specs = () => device.tools().map(({ execute: _execute, ...spec }) => JSON.stringify(spec));
      assert.deepEqual(specs(), specs(), `${device.name}: tools() differs between calls`);
      for (const tool of device.tools()) {
        assert.ok(
          tool.allow !== undefined,
          `${device.name}: tool ${tool.name} does not declare its trust (allow)`,
        );
      }
      // A device that may refuse a send says how many it holds meanwhile, and under which setting.
      if (device.canSend) {
        assert.ok(device.hold, `${device.name}: canSend without hold`);
        assert.match(device.hold.setting, /^[a-z_.]+$/, `${device.name}: hold.setting names a config key`);
        assert.ok(device.hold.limit > 0, `${device.name}: hold.limit`);
      }
      const inputs: InputDraft[] = [];
      // Start: within a deadline though its peer is not there, and twice is once.
      const started = device.start(deviceContext(device, lines, inputs)).then(() => "started");
      assert.equal(await settled(started, 10_000), "started", `${device.name}: start hangs`);
      await device.start(deviceContext(device, lines, inputs));
      // Its status says why it cannot work, and is JSON as it is.
      const status = () => device.status?.() ?? {};
      await within(3_000, () => SAYS_WHY.test(JSON.stringify(status())));
      const body = status();
      assert.deepEqual(JSON.parse(JSON.stringify(body)), body, `${device.name}: status() is not plain JSON`);
      assert.match(JSON.stringify(body), SAYS_WHY, `${device.name}: status does not say its peer is unreachable`);
      shown.push(JSON.stringify(body));
      // Sending while the peer is away: a clear refusal or held, never a hang.
      const sent = device.send({ target: `${device.name}`, type: "message", payload: { text: "contract" } })
        .then(() => "sent", (error: Error) => (shown.push(error.message), "refused"));
      assert.notEqual(await settled(sent, 15_000), "hung", `${device.name}: send hangs`);
      // Stop: idempotent; the test's sanitizers then find every timer, child process and socket it left.
      await device.stop();
      await device.stop();
    }
    for (const service of made.services ?? []) {
      await service.start();
      await service.stop();
    }
    // Secrets: never in status, logs or errors.
    for (const secret of secrets) {
      for (const text of [...shown, ...lines]) {
        assert.ok(!text.includes(secret), `${kind.key}: a secret is shown: ${text.slice(0, 200)}`);
      }
    }
    if (kind.example.includes("${")) assert.ok(secrets.length > 0, `${kind.key}: its example's secrets are not listed`);
  });
}
