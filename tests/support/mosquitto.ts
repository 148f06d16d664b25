/**
 * A real MQTT broker for tests: Debian's `mosquitto`, started on a free loopback port with a config of its own in a
 * temporary directory (anonymous clients allowed, nothing persisted, errors and warnings on stderr), and stopped and
 * started again on the same port to play a broker restart. {@link TestMqttClient} is the other side — a device, a
 * wall switch — publishing and subscribing through MQTT.js as homed does.
 *
 * Tests that need it use {@link mosquittoNeed} (ARCHITECTURE §8): ignored with the reason outside CI when mosquitto
 * is not installed, failing under `CI=true`. They need `--allow-run=mosquitto,/usr/sbin/mosquitto` (Debian installs
 * it in /usr/sbin, which is not on every user's PATH), `--allow-net=127.0.0.1` and read/write rights on /tmp.
 *
 * @module
 */

import type { MqttClient } from "mqtt";
import { newMqttClient, parseBrokerUrl } from "../../src/devices/mqtt/mqtt_client.ts";
import { type OutsideNeed, outsideNeed } from "./outside_tool.ts";
import { waitFor, within } from "./wait.ts";

/** Where mosquitto may be: on PATH, or where Debian puts it. */
const CANDIDATES = ["mosquitto", "/usr/sbin/mosquitto"] as const;

let found: Promise<string | undefined> | undefined;

/** The first mosquitto that runs, or `undefined`. `mosquitto -h` exits with 3, so its banner is what is checked. */
function findMosquitto(): Promise<string | undefined> {
  found ??= (async () => {
    for (const program of CANDIDATES) {
      try {
        const out = await new Deno.Command(program, { args: ["-h"], stdin: "null", stdout: "piped", stderr: "piped" })
          .output();
        const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
        if (/mosquitto version \d/.test(text)) return program;
      } catch {
        // Not there, or not allowed to run: the next candidate.
      }
    }
    return undefined;
  })();
  return found;
}

/**
 * Whether mosquitto tests run here; await it once at the top of a test file.
 *
 * @example
 * ```ts
 * const broker = await mosquittoNeed();
 * Deno.test({ name: "a message reaches the broker", ignore: broker.ignore, fn: async () => {
 *   broker.assertAvailable();
 *   await using mosquitto = await Mosquitto.start();
 * } });
 * ```
 */
export function mosquittoNeed(): Promise<OutsideNeed> {
  return outsideNeed("mosquitto (the Debian package mosquitto)", async () => {
    if (await findMosquitto()) return undefined;
    return `neither ${CANDIDATES.join(" nor ")} runs (install the Debian package mosquitto)`;
  });
}

/** A free TCP port on 127.0.0.1 (the kernel's pick, released at once for the broker to take). */
function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr as Deno.NetAddr;
  listener.close();
  return port;
}

/** Options of {@link Mosquitto.start}. */
export interface MosquittoOptions {
  /** More lines for mosquitto.conf (e.g. `max_queued_messages 0`). */
  config?: string[];
}

/** One mosquitto process on a port of its own; `await using` stops it and removes its directory. */
export class Mosquitto {
  readonly port: number;
  readonly url: string;
  readonly #program: string;
  readonly #dir: string;
  #child: Deno.ChildProcess | undefined;
  #paused = false;
  #stderr = "";
  #pumped: Promise<void> = Promise.resolve();

  private constructor(program: string, dir: string, port: number) {
    this.#program = program;
    this.#dir = dir;
    this.port = port;
    this.url = `mqtt://127.0.0.1:${port}`;
  }

  /**
   * Starts mosquitto on a free port and resolves once it accepts connections.
   *
   * @example
   * ```ts
   * await using broker = await Mosquitto.start();
   * broker.url; // "mqtt://127.0.0.1:40123"
   * ```
   */
  static async start(options: MosquittoOptions = {}): Promise<Mosquitto> {
    const program = await findMosquitto();
    if (!program) throw new Error(`mosquitto is not installed: neither ${CANDIDATES.join(" nor ")} runs`);
    const dir = await Deno.makeTempDir({ prefix: "homed-mosquitto-" });
    const port = freePort();
    const config = [
      `listener ${port} 127.0.0.1`,
      "allow_anonymous true",
      "persistence false",
      "log_dest stderr",
      "log_type error",
      "log_type warning",
      ...(options.config ?? []),
    ];
    await Deno.writeTextFile(`${dir}/mosquitto.conf`, `${config.join("\n")}\n`);
    const broker = new Mosquitto(program, dir, port);
    try {
      await broker.restart();
    } catch (error) {
      await broker.close();
      throw error;
    }
    return broker;
  }

  /** Whether the process is running. */
  get running(): boolean {
    return this.#child !== undefined;
  }

  /** What mosquitto wrote on stderr so far (its errors and warnings). */
  get log(): string {
    return this.#stderr;
  }

  /** Starts it again on the same port (after {@link Mosquitto.stop}); resolves once it accepts connections. */
  async restart(): Promise<void> {
    if (this.#child) throw new Error("mosquitto is already running");
    const child = new Deno.Command(this.#program, {
      args: ["-c", `${this.#dir}/mosquitto.conf`],
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    }).spawn();
    this.#child = child;
    this.#pumped = (async () => {
      for await (const text of child.stderr.pipeThrough(new TextDecoderStream())) this.#stderr += text;
    })();
    let exited = false;
    void child.status.then(() => (exited = true));
    try {
      await waitFor(async () => {
        if (exited) throw new Error(`mosquitto exited at start: ${this.#stderr.trim() || "(nothing on stderr)"}`);
        try {
          (await Deno.connect({ hostname: "127.0.0.1", port: this.port })).close();
          return true;
        } catch {
          return false;
        }
      }, `mosquitto to listen on 127.0.0.1:${this.port}`);
    } catch (error) {
      await this.stop();
      throw error;
    }
  }

  /**
   * Freezes it (SIGSTOP): connections stay open but nothing is answered — a broker that hangs, or a network that
   * drops packets silently.
   *
   * @example
   * ```ts
   * await using broker = await Mosquitto.start();
   * broker.pause();
   * // … a publish now waits for an acknowledgement that does not come …
   * broker.resume();
   * ```
   */
  pause(): void {
    if (!this.#child) throw new Error("mosquitto is not running");
    this.#child.kill("SIGSTOP");
    this.#paused = true;
  }

  /** Lets a paused broker go on (SIGCONT). */
  resume(): void {
    if (!this.#child || !this.#paused) return;
    this.#child.kill("SIGCONT");
    this.#paused = false;
  }

  /** Stops it (SIGTERM, SIGKILL after 5 s) and waits until it has exited; the port stays this broker's. */
  async stop(): Promise<void> {
    const child = this.#child;
    if (!child) return;
    // A stopped process does not act on SIGTERM until it runs again.
    this.resume();
    this.#child = undefined;
    try {
      child.kill("SIGTERM");
    } catch { /* already gone */ }
    const timer = setTimeout(() => {
      try {
        child.kill("SIGKILL");
      } catch { /* already gone */ }
    }, 5_000);
    try {
      await child.status;
      await this.#pumped;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Stops it and removes its directory. */
  async close(): Promise<void> {
    await this.stop();
    await Deno.remove(this.#dir, { recursive: true }).catch(() => {});
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}

/** A message as {@link TestMqttClient} received it. */
export interface ReceivedMessage {
  topic: string;
  payload: string;
  qos: number;
  retain: boolean;
}

/** The test's own MQTT client: connects, subscribes, publishes, and records what it receives. */
export class TestMqttClient {
  /** Everything received, in order. */
  readonly received: ReceivedMessage[] = [];
  /** Errors the client reported after it connected (a broker that went away). */
  readonly errors: Error[] = [];
  readonly #client: MqttClient;

  private constructor(client: MqttClient) {
    this.#client = client;
    // An EventEmitter without an `error` listener throws: a broker stopped under a connected client must not.
    client.on("error", (error) => this.errors.push(error));
    client.on("message", (topic, payload, packet) => {
      this.received.push({ topic, payload: new TextDecoder().decode(payload), qos: packet.qos, retain: packet.retain });
    });
  }

  /**
   * Connects to `url` (one attempt, no reconnect) and resolves once the broker accepted the connection.
   *
   * @example
   * ```ts
   * await using broker = await Mosquitto.start();
   * await using device = await TestMqttClient.connect(broker.url);
   * await device.publish("home/hall/motion", "ON");
   * ```
   */
  static async connect(url: string, clientId = `test${crypto.randomUUID().slice(0, 8)}`): Promise<TestMqttClient> {
    const client = await newMqttClient(parseBrokerUrl(url, "url"), {
      clientId,
      protocolVersion: 4,
      clean: true,
      reconnectPeriod: 0,
      connectTimeout: 5_000,
    });
    const connected = new Promise<void>((resolve, reject) => {
      client.once("connect", () => resolve());
      client.once("error", reject);
      client.once("close", () => reject(new Error(`the test client could not connect to ${url}`)));
    });
    client.connect();
    try {
      await within(connected, 10_000, `the test client to connect to ${url}`);
    } catch (error) {
      await new Promise<void>((resolve) => client.end(true, {}, () => resolve()));
      throw error;
    }
    return new TestMqttClient(client);
  }

  /** Subscribes to `filter` and resolves once the broker granted it (within 10 s, else a failure naming it). */
  async subscribe(filter: string, qos: 0 | 1 | 2 = 1): Promise<void> {
    const granted = await within(this.#client.subscribeAsync(filter, { qos }), 10_000, `the broker to grant ${filter}`);
    if (granted.some((grant) => grant.qos === 128)) throw new Error(`The broker refused the subscription to ${filter}`);
  }

  /**
   * Publishes and resolves once it was acknowledged (QoS 1, 2) or written (QoS 0), within 10 s — a broker that
   * drops the connection instead (mosquitto does for a topic with control characters) is a failure, not a hang.
   */
  async publish(topic: string, payload: string, options: { qos?: 0 | 1 | 2; retain?: boolean } = {}): Promise<void> {
    await within(
      this.#client.publishAsync(topic, payload, { qos: options.qos ?? 1, retain: options.retain ?? false }),
      10_000,
      `the broker to take the message to ${JSON.stringify(topic)}`,
    );
  }

  /**
   * Publishes without waiting (QoS 0), for floods; call {@link TestMqttClient.flushed} after the last.
   *
   * @example
   * ```ts
   * declare const client: TestMqttClient;
   * for (let i = 0; i < 1_000; i++) client.publishNow("bench/a/seq", String(i));
   * await client.flushed();
   * ```
   */
  publishNow(topic: string, payload: string): void {
    this.#client.publish(topic, payload, { qos: 0 });
  }

  /** Resolves once the broker has read everything published so far. */
  async flushed(): Promise<void> {
    // A QoS 1 publish to a topic nobody hears, sent after the rest on the same socket, is acknowledged after them.
    await within(this.#client.publishAsync("homed-test/flush", "", { qos: 1 }), 60_000, "the broker to read the flood");
  }

  /** Whether it is connected. */
  get connected(): boolean {
    return this.#client.connected;
  }

  /** Disconnects (force: drop the socket without DISCONNECT). */
  async close(force = false): Promise<void> {
    await new Promise<void>((resolve) => this.#client.end(force, {}, () => resolve()));
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close(true);
  }
}
