import assert from "node:assert/strict";
import { getLogger } from "@logtape/logtape";
import { systemClock } from "../clock.ts";
import { ToolRegistry } from "../tools/registry.ts";
import { type Device, type DeviceContext, SendInterrupted } from "./device.ts";
import { Capability, type OutputEvent } from "./event.ts";
import { IOManager } from "./io_manager.ts";
import { RouteTable } from "./route_table.ts";

/** A chat device that can be "disconnected": it holds outputs, and a send may lose its connection half-way. */
class LinkDevice implements Device {
  readonly name = "link";
  readonly type = "test";
  readonly description = "a device with a connection that comes and goes";
  readonly hold = { limit: 2, setting: "link.queue_limit" };
  connected = false;
  /** Pieces written, by output text. */
  written: string[] = [];
  /** Loses the connection after this many pieces of the next send. */
  dropAfter: number | undefined;
  context: DeviceContext | undefined;
  #left = new WeakMap<OutputEvent, string[]>();

  tools() {
    return [];
  }
  start(context: DeviceContext): Promise<void> {
    this.context = context;
    return Promise.resolve();
  }
  stop(): Promise<void> {
    return Promise.resolve();
  }
  outputCapabilities(): number {
    return Capability.Text;
  }
  canSend(): boolean {
    return this.connected;
  }
  send(event: OutputEvent): Promise<void> {
    const pieces = this.#left.get(event) ?? String(event.payload.text).split(" ");
    for (let i = 0; i < pieces.length; i++) {
      if (this.dropAfter !== undefined && i === this.dropAfter) {
        this.dropAfter = undefined;
        this.connected = false;
        this.#left.set(event, pieces.slice(i));
        return Promise.reject(new SendInterrupted(`lost after ${i} pieces`));
      }
      this.written.push(pieces[i]!);
    }
    this.#left.delete(event);
    return Promise.resolve();
  }
  reconnect(): void {
    this.connected = true;
    this.context?.readyAgain();
  }
}

async function rig(sendTimeoutMs = 50) {
  const io = new IOManager({
    clock: systemClock,
    routes: new RouteTable({}, {}, undefined),
    tools: new ToolRegistry(),
    logger: getLogger(["test"]),
    sendTimeoutMs,
  });
  const link = new LinkDevice();
  await io.replaceDevices([link]);
  return { io, link };
}

const settled = (promise: Promise<unknown>) =>
  promise.then(() => "delivered", (error: Error) => `failed: ${error.message}`);

Deno.test("one queue per channel: outputs wait for a connection past the send deadline, then go in order, each once", async () => {
  const { io, link } = await rig(50);
  const first = settled(io.send({ target: "link", type: "message", payload: { text: "a b" } }));
  const second = settled(io.send({ target: "link", type: "message", payload: { text: "c" } }));
  const third = await settled(io.send({ target: "link", type: "message", payload: { text: "d" } }));
  assert.equal(
    third,
    'failed: Channel "link" cannot send now, and 2 outputs already wait for it (link.queue_limit); this one was dropped',
  );
  await new Promise((resolve) => setTimeout(resolve, 200)); // four send deadlines: none applies while it waits
  assert.equal(link.context?.waiting(), 2);
  assert.deepEqual(link.written, []);
  link.reconnect();
  assert.deepEqual([await first, await second], ["delivered", "delivered"]);
  assert.deepEqual(link.written, ["a", "b", "c"]);
  assert.equal(link.context?.waiting(), 0);
  await io.close();
});

Deno.test("a send that loses its connection half-way goes again on reconnect with only the pieces left", async () => {
  const { io, link } = await rig();
  link.connected = true;
  link.dropAfter = 1;
  let state = "waiting";
  const sending = io.send({ target: "link", type: "message", payload: { text: "one two three" } }).then(
    () => state = "delivered",
  );
  await new Promise((resolve) => setTimeout(resolve, 100));
  assert.equal(state, "waiting", "an interrupted output is not reported delivered");
  assert.deepEqual(link.written, ["one"]);
  link.reconnect();
  await sending;
  assert.deepEqual(link.written, ["one", "two", "three"]);
  await io.close();
});

Deno.test("stopping a device whose outputs wait for a connection gives them up at once, saying why", async () => {
  const { io } = await rig(30_000);
  const waiting = settled(io.send({ target: "link", type: "message", payload: { text: "late" } }));
  await io.replaceDevices([]);
  // Given up at once ("while its outputs waited"), not after io.send_timeout ("before this output went out").
  assert.equal(
    await waiting,
    'failed: Channel "link": the device was stopped while its outputs waited for it to be ready',
  );
  await io.close();
});
