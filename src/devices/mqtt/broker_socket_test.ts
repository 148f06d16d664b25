import assert from "node:assert/strict";
import type { MqttClient } from "mqtt";
import { Mosquitto, mosquittoNeed, TestMqttClient } from "../../../tests/support/mosquitto.ts";
import { waitFor, within } from "../../../tests/support/wait.ts";
import { BrokerSocket } from "./broker_socket.ts";
import { newMqttClient, parseBrokerUrl } from "./mqtt_client.ts";
import type { DroppedPublish } from "./oversize_filter.ts";

const broker = await mosquittoNeed();

const utf8 = (text: string) => new TextEncoder().encode(text);

/** A PUBLISH as a broker sends it (MQTT 3.1.1 §3.3), with a 1- or 2-byte remaining length. */
function publish(topic: string, payloadBytes: number, qos: 0 | 1 | 2, packetId = 0): Uint8Array {
  const name = utf8(topic);
  const variable = [0, name.length, ...name, ...(qos > 0 ? [packetId >> 8, packetId & 0xff] : [])];
  const length = variable.length + payloadBytes;
  const header = length < 128 ? [0x30 | (qos << 1), length] : [0x30 | (qos << 1), (length % 128) | 0x80, length >> 7];
  const packet = new Uint8Array(header.length + length).fill(0x61);
  packet.set([...header, ...variable]);
  return packet;
}

const concat = (...parts: Uint8Array[]) => {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  parts.reduce((at, part) => (out.set(part, at), at + part.length), 0);
  return out;
};

/** A loopback listener playing the broker, and a BrokerSocket connected to it. */
async function connected(maxPayloadBytes: number) {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const accepted = listener.accept();
  const { port } = listener.addr as Deno.NetAddr;
  const dropped: DroppedPublish[] = [];
  const limited = new BrokerSocket(() => Deno.connect({ hostname: "127.0.0.1", port }), {
    maxPayloadBytes,
    onDropped: (publish) => dropped.push(publish),
  });
  const far = await accepted;
  listener.close();
  const received: Uint8Array[] = [];
  limited.on("data", (chunk: Uint8Array) => received.push(new Uint8Array(chunk)));
  const closed = new Promise<void>((resolve) => limited.once("close", () => resolve()));
  /** What the far end read until it was closed. */
  const heard = (async () => {
    const parts: Uint8Array[] = [];
    const buffer = new Uint8Array(4_096);
    for (let n = await far.read(buffer).catch(() => null); n !== null; n = await far.read(buffer).catch(() => null)) {
      parts.push(buffer.slice(0, n));
    }
    return concat(...parts);
  })();
  return { far, limited, dropped, received: () => concat(...received), closed, heard };
}

Deno.test("dropped QoS 1 and 2 PUBLISHes are acknowledged with PUBACK and PUBREC; all else goes both ways untouched", async () => {
  const { far, limited, dropped, received, closed, heard } = await connected(100);
  const kept = [Uint8Array.of(0x20, 2, 0, 0), publish("a/ok", 10, 1, 3), Uint8Array.of(0x62, 2, 0, 6)];
  const stream = concat(
    kept[0]!,
    publish("a/big", 150, 1, 0x0105),
    kept[1]!,
    publish("a/big", 200, 2, 6),
    publish("a/big", 300, 0),
    kept[2]!,
  );
  // In pieces cutting the headers, as TCP may deliver them.
  for (const [from, to] of [[0, 3], [3, 9], [9, 170], [170, stream.length]] as const) {
    await far.write(stream.subarray(from, to));
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  await waitFor(() => received().length === concat(...kept).length, "the packets within the limit");
  assert.deepEqual(received(), concat(...kept));
  assert.deepEqual(dropped.map(({ qos, packetId, payloadBytes }) => [qos, packetId, payloadBytes]), [
    [1, 0x0105, 150],
    [2, 6, 200],
    [0, null, 300],
  ]);
  // MQTT.js's own writes (here a PINGREQ) go out after the acknowledgements, each packet whole.
  limited.write(Uint8Array.of(0xc0, 0));
  limited.end();
  assert.deepEqual(
    await within(heard, 5_000, "the far end to read to the end"),
    Uint8Array.of(0x40, 2, 0x01, 0x05, 0x50, 2, 0, 6, 0xc0, 0),
  );
  far.close();
  await within(closed, 5_000, "the stream to close");
});

Deno.test("a fixed header no broker may send ends the stream with an error coded EMQTTPROTO (MQTT.js passes on only coded ones)", async () => {
  const { far, limited, received, closed, heard } = await connected(100);
  const errors: Error[] = [];
  limited.on("error", (error) => errors.push(error));
  await far.write(Uint8Array.of(0xd0, 0, 0x30, 0xff, 0xff, 0xff, 0xff, 0x7f));
  await within(closed, 5_000, "the stream to close");
  assert.deepEqual(received(), new Uint8Array(), "nothing of that chunk reached the reader");
  assert.equal(errors.length, 1);
  assert.equal((errors[0] as Error & { code?: string }).code, "EMQTTPROTO");
  await heard;
  far.close();
});

Deno.test("what the broker sent just before it hung up is all read before the stream closes", async () => {
  const { far, limited, received, closed } = await connected(100);
  limited.pause();
  const last = publish("a/last", 50, 0);
  await far.write(last);
  far.close();
  await new Promise((resolve) => setTimeout(resolve, 50));
  limited.resume();
  await within(closed, 5_000, "the stream to close");
  assert.deepEqual(received(), last);
});

Deno.test({
  name: "through mosquitto, QoS 2: the dropped message's PUBREC and MQTT.js's PUBCOMP free its slot for the next",
  ignore: broker.ignore,
  fn: async () => {
    broker.assertAvailable();
    await using mosquitto = await Mosquitto.start({ config: ["max_inflight_messages 1"] });
    const dropped: DroppedPublish[] = [];
    const client: MqttClient = await newMqttClient(parseBrokerUrl(mosquitto.url, "url"), {
      clientId: "limited-qos2",
      protocolVersion: 4,
      clean: true,
      reconnectPeriod: 0,
    }, { maxPayloadBytes: 1_024, onDropped: (publish) => dropped.push(publish) });
    const messages: string[] = [];
    client.on("message", (topic, payload, packet) => messages.push(`${topic} ${payload.length} QoS ${packet.qos}`));
    try {
      const up = new Promise((resolve) => client.once("connect", resolve));
      client.connect();
      await within(up, 10_000, "the connection");
      await within(client.subscribeAsync("cam/#", { qos: 2 }), 10_000, "the subscription");
      await using camera = await TestMqttClient.connect(mosquitto.url);
      await camera.publish("cam/front", "j".repeat(50_000), { qos: 2 });
      await camera.publish("cam/front", "j".repeat(60_000), { qos: 2 });
      await camera.publish("cam/front", "motion", { qos: 2 });
      await waitFor(() => messages.length === 1, "the small message after the two dropped ones");
      assert.deepEqual(messages, ["cam/front 6 QoS 2"]);
      assert.equal(client.options.writeCache, false, "no 65,536-Buffer number cache kept for a household's rate");
      assert.deepEqual(dropped.map(({ topic, payloadBytes, qos }) => [topic, payloadBytes, qos]), [
        ["cam/front", 50_000, 2],
        ["cam/front", 60_000, 2],
      ]);
    } finally {
      await new Promise<void>((resolve) => client.end(false, {}, () => resolve()));
    }
  },
});
