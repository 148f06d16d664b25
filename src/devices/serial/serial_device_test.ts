import assert from "node:assert/strict";
import { getLogger } from "@logtape/logtape";
import { outsideNeed, programRuns } from "../../../tests/support/outside_tool.ts";
import { FakeClock } from "../../../tests/support/fake_clock.ts";
import { callDeviceTool } from "../../../tests/support/recording_device.ts";
import { testToolContext } from "../../../tests/support/tool_context.ts";
import { waitFor, within } from "../../../tests/support/wait.ts";
import { FarEnd } from "../../../tests/support/pty_far_end.ts";
import { type Clock, systemClock } from "../../clock.ts";
import type { InputEvent } from "../../io/event.ts";
import { IOManager } from "../../io/io_manager.ts";
import { RouteTable } from "../../io/route_table.ts";
import { ToolRegistry } from "../../tools/registry.ts";
import {
  SERIAL_BACKOFF,
  SerialDevice,
  type SerialPortSettings,
  type SerialPortStatus,
  START_WAIT_MS,
} from "./serial_device.ts";
import type { OpenPort, SerialLink } from "./tty_link.ts";

const socat = await outsideNeed("socat", () => programRuns("socat", ["-V"]));
const stty = await outsideNeed(
  "stty and dd (coreutils)",
  async () => (await programRuns("stty", ["--version"])) ?? (await programRuns("dd", ["--version"])),
);
const ptys = { ignore: socat.ignore || stty.ignore };
const needPtys = () => {
  socat.assertAvailable();
  stty.assertAvailable();
};

const PORT: SerialPortSettings = {
  path: "",
  baud: 115_200,
  turns: false,
  trust: "household",
  delimiter: "\n",
  maxLineBytes: 4_096,
};

/** A serial device on the given ports behind an IOManager, with every input it hands in collected. */
async function setup(
  ports: Record<string, Partial<SerialPortSettings> & { path: string }>,
  options: { clock?: Clock; openPort?: OpenPort; perSender?: number } = {},
) {
  const clock = options.clock ?? systemClock;
  const serial = new SerialDevice({
    ports: Object.fromEntries(Object.entries(ports).map(([name, port]) => [name, { ...PORT, ...port }])),
    clock,
    logger: getLogger(["test", "serial"]),
    random: () => 0.5,
    ...(options.openPort ? { openPort: options.openPort } : {}),
  });
  const io = new IOManager({
    clock,
    routes: new RouteTable({}, {}, undefined),
    tools: new ToolRegistry(),
    logger: getLogger(["test"]),
    ...(options.perSender ? { perSender: options.perSender } : {}),
  });
  await io.replaceDevices([serial]);
  const inputs: InputEvent[] = [];
  const reader = (async () => {
    for (let event = await io.next(); event; event = await io.next()) inputs.push(event);
  })();
  const port = (name: string) => (serial.status().ports as Record<string, SerialPortStatus>)[name]!;
  const close = async (...far: FarEnd[]) => {
    await within(io.close(), 10_000, "the serial device to stop");
    await reader;
    for (const end of far) await end.close();
  };
  return { serial, io, inputs, port, close };
}

async function tempLink(): Promise<{ path: string; [Symbol.asyncDispose](): Promise<void> }> {
  const dir = await Deno.makeTempDir({ prefix: "homed-serial-" });
  return { path: `${dir}/port`, [Symbol.asyncDispose]: () => Deno.remove(dir, { recursive: true }) };
}

Deno.test({
  name: "sensor lines become serial.line events with the port's source, sender and trust; blank lines are not",
  ...ptys,
  fn: async () => {
    needPtys();
    await using link = await tempLink();
    const far = await FarEnd.start(link.path);
    const { inputs, port, close } = await setup({ sensor: { path: link.path, trust: "guest" } });
    assert.equal(port("sensor").state, "open");
    await far.write("temp=21.5\nhum=");
    await far.write("40\r\n\n   \nlast\n");
    await waitFor(() => inputs.length === 3, "three sensor lines");
    assert.deepEqual(inputs.map((e) => [e.source, e.sender, e.trust, e.type, e.payload]), [
      ["serial:sensor", "sensor", "guest", "serial.line", { text: "temp=21.5" }],
      ["serial:sensor", "sensor", "guest", "serial.line", { text: "hum=40" }],
      ["serial:sensor", "sensor", "guest", "serial.line", { text: "last" }],
    ]);
    assert.equal(port("sensor").lines, 3);
    assert.notEqual(port("sensor").last_line_at, null);
    await close(far);
  },
});

Deno.test({
  name: "a console's lines are messages with its trust, and a reply sent to serial:console arrives with the delimiter",
  ...ptys,
  fn: async () => {
    needPtys();
    await using link = await tempLink();
    const far = await FarEnd.start(link.path);
    const { io, inputs, close } = await setup({ console: { path: link.path, turns: true, trust: "owner" } });
    await far.write("lights on\n");
    await waitFor(() => inputs.length === 1, "the console line");
    assert.deepEqual([inputs[0]!.source, inputs[0]!.sender, inputs[0]!.trust, inputs[0]!.type, inputs[0]!.payload], [
      "serial:console",
      "console",
      "owner",
      "message",
      { text: "lights on" },
    ]);
    // The route table's default: the reply goes back where the message came from.
    assert.equal(io.replyChannel(inputs[0]!), "serial:console");
    await io.reply(inputs[0]!, "serial:console", "message", { text: "The lights are on" });
    await io.send({ target: "serial:console", type: "error", payload: { text: "The model timed out", code: "x" } });
    await waitFor(() => far.received.includes("timed out\n"), "the reply at the far end");
    assert.equal(far.received, "The lights are on\nThe model timed out\n");
    await close(far);
  },
});

Deno.test({
  name: "serial_write writes the text and delimiter now; an unknown port and a non-text output are refused",
  ...ptys,
  fn: async () => {
    needPtys();
    await using link = await tempLink();
    const far = await FarEnd.start(link.path);
    const { serial, io, close } = await setup({ relay: { path: link.path } });
    const result = await callDeviceTool(serial, "serial_write", { device: "relay", text: "AT+ON" }, testToolContext());
    assert.equal(result, `Wrote 6 bytes to serial:relay (${link.path})`);
    await waitFor(() => far.received === "AT+ON\n", "the written line at the far end");
    const tool = serial.tools().find((t) => t.name === "serial_write")!;
    assert.equal(tool.allow, "household");
    assert.deepEqual((tool.parameters.properties as Record<string, { enum?: string[] }>).device!.enum, ["relay"]);
    await assert.rejects(
      io.send({ target: "serial:nope", type: "message", payload: { text: "hi" } }),
      /"serial:nope" is not a port configured under devices\.serial; configured: serial:relay/,
    );
    await assert.rejects(
      serial.send({ target: "serial:relay", type: "structured", payload: { data: {} } }),
      /serial:relay takes text \(message or error outputs\), not structured/,
    );
    await close(far);
  },
});

Deno.test({
  name: "the far end going away and coming back under the same path: reopened, held replies and lines flow again",
  ...ptys,
  fn: async () => {
    needPtys();
    await using link = await tempLink();
    const first = await FarEnd.start(link.path);
    const { serial, io, inputs, port, close } = await setup({ console: { path: link.path, turns: true } });
    await first.write("before\n");
    await waitFor(() => inputs.length === 1, "the line before the outage");
    await first.close();
    await waitFor(() => port("console").state !== "open", "the device to notice the far end went away");
    assert.notEqual(port("console").last_error, null);
    // While closed: a reply waits in the IO queue, and serial_write fails saying so.
    const held = io.send({ target: "serial:console", type: "message", payload: { text: "held reply" } });
    await assert.rejects(
      callDeviceTool(serial, "serial_write", { device: "console", text: "now" }, testToolContext()),
      /Serial port console \(.*\) is (closed|opening)/,
    );
    assert.equal(serial.canSend({ target: "serial:console", type: "message", payload: {} }), false);
    const second = await FarEnd.start(link.path);
    await within(held, 10_000, "the held reply to go out after the reopen");
    await waitFor(() => second.received === "held reply\n", "the held reply at the new far end");
    await second.write("after\n");
    await waitFor(() => inputs.length === 2, "a line after the reopen");
    assert.equal(inputs[1]!.payload.text, "after");
    assert.equal(port("console").state, "open");
    assert.equal(port("console").reopens, 1);
    await close(second);
  },
});

Deno.test({
  name: "1 MB without a newline is one cut, marked line, handed in before the newline comes; the rest is dropped",
  ...ptys,
  fn: async () => {
    needPtys();
    await using link = await tempLink();
    const far = await FarEnd.start(link.path);
    const { inputs, port, close } = await setup({ sensor: { path: link.path, maxLineBytes: 4_096 } });
    await far.write(new Uint8Array(1_048_576).fill(0x78));
    // Handed in while the line is still open: the device cut it at the limit instead of buffering the megabyte.
    await waitFor(() => inputs.length === 1, "the cut line");
    assert.equal(
      inputs[0]!.payload.text,
      `${"x".repeat(4_096)} […cut: line over devices.serial.sensor.max_line_bytes]`,
    );
    await waitFor(() => port("sensor").dropped_bytes === 1_048_576 - 4_096, "the rest of the megabyte dropped");
    await far.write("\nnext\n");
    await waitFor(() => inputs.length === 2, "the line after");
    assert.equal(inputs[1]!.payload.text, "next");
    assert.equal(port("sensor").cut_lines, 1);
    await close(far);
  },
});

Deno.test({
  name: "invalid UTF-8 becomes replacement characters and is counted, and the port goes on",
  ...ptys,
  fn: async () => {
    needPtys();
    await using link = await tempLink();
    const far = await FarEnd.start(link.path);
    const { inputs, port, close } = await setup({ sensor: { path: link.path } });
    await far.write(new Uint8Array([0x6f, 0x6b, 0xff, 0xc3, 0x0a]));
    await far.write("温度 21\n");
    await waitFor(() => inputs.length === 2, "both lines");
    assert.deepEqual(inputs.map((e) => e.payload.text), ["ok\uFFFD\uFFFD", "温度 21"]);
    assert.equal(port("sensor").invalid_utf8, 1);
    await close(far);
  },
});

Deno.test({
  name: 'a custom delimiter (";") splits the input and ends what is written',
  ...ptys,
  fn: async () => {
    needPtys();
    await using link = await tempLink();
    const far = await FarEnd.start(link.path);
    const { serial, inputs, close } = await setup({ meter: { path: link.path, delimiter: ";" } });
    await far.write("a=1;b=2\n;c");
    await waitFor(() => inputs.length === 2, "two lines");
    assert.deepEqual(inputs.map((e) => e.payload.text), ["a=1", "b=2\n"]);
    await callDeviceTool(serial, "serial_write", { device: "meter", text: "read" }, testToolContext());
    await waitFor(() => far.received === "read;", "the written line");
    await close(far);
  },
});

Deno.test({
  name: "a port missing at start is retried with backoff and opens once it appears; status shows the wait",
  ...ptys,
  fn: async () => {
    needPtys();
    await using link = await tempLink();
    const { port, inputs, close } = await setup({ sensor: { path: link.path } });
    const waiting = port("sensor");
    assert.equal(waiting.state, "closed");
    assert.match(
      waiting.last_error ?? "",
      /^stty failed \(exit code 1: .*No such file or directory\); check devices\.serial\.sensor$/,
    );
    assert.ok(waiting.failed_opens >= 1);
    assert.notEqual(waiting.next_retry_at, null);
    const far = await FarEnd.start(link.path);
    await waitFor(() => port("sensor").state === "open", "the port to open", { limitMs: 5_000 });
    assert.equal(port("sensor").reopens, 0);
    await far.write("hello\n");
    await waitFor(() => inputs.length === 1, "a line");
    await close(far);
  },
});

/** A link in memory: `feed` gives it bytes, `hangUp` ends it; writes are recorded. */
class MemoryLink implements SerialLink {
  readonly written: string[] = [];
  #chunks: Array<Uint8Array | undefined> = [];
  #wake: (() => void) | undefined;

  feed(chunk: Uint8Array | undefined): void {
    this.#chunks.push(chunk);
    this.#wake?.();
  }

  async read(): Promise<Uint8Array | undefined> {
    while (this.#chunks.length === 0) await new Promise<void>((resolve) => (this.#wake = resolve));
    return this.#chunks.shift();
  }

  write(bytes: Uint8Array): Promise<void> {
    this.written.push(new TextDecoder().decode(bytes));
    return Promise.resolve();
  }

  close(): Promise<void> {
    this.feed(undefined);
    return Promise.resolve();
  }

  closed(): Promise<string> {
    return Promise.resolve("hung up");
  }
}

Deno.test("reopening backs off from 0.5 s, doubling to 30 s, and starts over after the port stayed open", async () => {
  const clock = new FakeClock();
  const links: MemoryLink[] = [];
  let failures = 8;
  const openPort: OpenPort = () => {
    if (failures-- > 0) return Promise.reject(new Error("No such file or directory"));
    const link = new MemoryLink();
    links.push(link);
    return Promise.resolve(link);
  };
  const { port, close } = await setup({ sensor: { path: "/dev/ttyUSB9" } }, { clock, openPort });
  await waitFor(() => port("sensor").state === "open", "the port to open after eight failures");
  assert.deepEqual(clock.sleeps, [500, 1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000]);
  assert.equal(port("sensor").failed_opens, 8);
  clock.advance(SERIAL_BACKOFF.stableMs);
  links[0]!.feed(undefined); // unplugged after a stable stretch: the wait starts over
  await waitFor(() => links.length === 2, "the second open");
  assert.equal(clock.sleeps.at(-1), 500);
  assert.equal(port("sensor").reopens, 1);
  assert.equal(port("sensor").last_error, "hung up");
  await close();
});

Deno.test("lines the input queue refuses wait, unread, until taken: none is lost and the order holds", async () => {
  const link = new MemoryLink();
  const { inputs, port, close } = await setup({ sensor: { path: "/dev/ttyUSB9" } }, {
    openPort: () => Promise.resolve(link),
    perSender: 2,
  });
  const lines = Array.from({ length: 500 }, (_, i) => `reading ${i}`);
  link.feed(new TextEncoder().encode(lines.map((line) => `${line}\n`).join("")));
  await waitFor(() => inputs.length === 500, "all 500 lines through a lane of 2");
  assert.deepEqual(inputs.map((e) => e.payload.text), lines);
  assert.equal(port("sensor").lines, 500);
  await close();
});

Deno.test("an opening that hangs holds start up only until its deadline, and stop ends it at once", async () => {
  const clock = new FakeClock();
  let aborted = false;
  const openPort: OpenPort = ({ signal }) =>
    new Promise((_, reject) =>
      signal.addEventListener("abort", () => {
        aborted = true;
        reject(signal.reason);
      }, { once: true })
    );
  const starting = setup({ sensor: { path: "/dev/ttyUSB9" } }, { clock, openPort });
  await clock.timersArmed(1);
  clock.advance(START_WAIT_MS);
  const { port, close } = await within(starting, 1_000, "start to give up waiting for the hung opening");
  assert.equal(port("sensor").state, "opening");
  await within(close(), 1_000, "stop with an opening in progress");
  assert.equal(aborted, true);
  assert.equal(port("sensor").state, "closed");
});

Deno.test("a speed no tty can be set to is refused at construction, naming the key and the speeds allowed", () => {
  assert.throws(
    () =>
      new SerialDevice({
        ports: { sensor: { ...PORT, path: "/dev/ttyUSB0", baud: 250_000 } },
        clock: systemClock,
        logger: getLogger(["test"]),
      }),
    /^TypeError: devices\.serial\.sensor\.baud: 250000 is not a speed a tty can be set to; use one of 50, 75, .*, 4000000$/,
  );
});
