import assert from "node:assert/strict";
import { type DroppedPublish, MqttProtocolError, OversizePublishFilter } from "./oversize_filter.ts";

const utf8 = (text: string) => new TextEncoder().encode(text);

/** MQTT's variable byte integer (§2.2.3): 7 bits a byte, low first, the top bit saying more follow. */
function remainingLength(length: number): number[] {
  const bytes: number[] = [];
  do {
    let byte = length % 128;
    length = Math.floor(length / 128);
    if (length > 0) byte |= 0x80;
    bytes.push(byte);
  } while (length > 0);
  return bytes;
}

/** A PUBLISH packet as a broker sends it (MQTT 3.1.1 §3.3), the payload `payloadBytes` of `fill`. */
function publish(
  topic: string,
  payloadBytes: number,
  options: { qos?: 0 | 1 | 2; packetId?: number; retain?: boolean; fill?: number } = {},
): Uint8Array {
  const qos = options.qos ?? 0;
  const name = utf8(topic);
  const id = qos > 0 ? [(options.packetId ?? 1) >> 8, (options.packetId ?? 1) & 0xff] : [];
  const variable = [name.length >> 8, name.length & 0xff, ...name, ...id];
  const first = 0x30 | (qos << 1) | (options.retain ? 1 : 0);
  const header = [first, ...remainingLength(variable.length + payloadBytes)];
  const packet = new Uint8Array(header.length + variable.length + payloadBytes).fill(options.fill ?? 0x78);
  packet.set([...header, ...variable]);
  return packet;
}

const concat = (...parts: Uint8Array[]) => {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
};

const CONNACK = Uint8Array.of(0x20, 0x02, 0x00, 0x00);
const SUBACK = Uint8Array.of(0x90, 0x04, 0x00, 0x01, 0x01, 0x01);
const PINGRESP = Uint8Array.of(0xd0, 0x00);
const PUBREL = Uint8Array.of(0x62, 0x02, 0x00, 0x09);
const LIMIT = 16;

/** A broker's stream with every case in it, what must come out of it, and the drops it holds. */
function scenario() {
  const kept = [
    CONNACK,
    SUBACK,
    publish("home/hall/motion", 5),
    publish("home/hall/state", LIMIT, { qos: 1, packetId: 2 }), // exactly the limit: kept
    PINGRESP,
    // Remaining length over the limit, the payload under it: the topic is long, not the message.
    publish(`home/${"x".repeat(40)}`, 3, { qos: 1, packetId: 3 }),
    PUBREL,
  ];
  const dropped: DroppedPublish[] = [
    { topic: "home/cam/snapshot", payloadBytes: LIMIT + 1, qos: 0, retain: false, packetId: null },
    { topic: "home/门/state", payloadBytes: 300, qos: 1, retain: true, packetId: 0x1234 },
    { topic: "h", payloadBytes: 20_000, qos: 2, retain: false, packetId: 9 },
  ];
  const packets = [
    kept[0]!,
    kept[1]!,
    kept[2]!,
    publish("home/cam/snapshot", LIMIT + 1),
    kept[3]!,
    publish("home/门/state", 300, { qos: 1, packetId: 0x1234, retain: true }),
    kept[4]!,
    kept[5]!,
    publish("h", 20_000, { qos: 2, packetId: 9 }), // a remaining length of 3 bytes
    kept[6]!,
  ];
  return { stream: concat(...packets), expected: concat(...kept), dropped };
}

/** Runs `chunks` through a fresh filter: what came out, joined, and what it dropped. */
function run(chunks: Uint8Array[], limit = LIMIT) {
  const dropped: DroppedPublish[] = [];
  const filter = new OversizePublishFilter(limit, (publish) => dropped.push(publish));
  const out = chunks.flatMap((chunk) => filter.push(chunk));
  return { out: concat(...out), dropped };
}

Deno.test("every packet but the oversize PUBLISHes comes out in order, whatever the first chunk boundary", () => {
  const { stream, expected, dropped } = scenario();
  for (let cut = 0; cut <= stream.length; cut++) {
    const result = run([stream.subarray(0, cut), stream.subarray(cut)]);
    assert.deepEqual(result.out, expected, `cut at ${cut}`);
    assert.deepEqual(result.dropped, dropped, `cut at ${cut}`);
  }
});

Deno.test("any two chunk boundaries, and one byte at a time, give the same bytes and drops", () => {
  // Without the 20,000-byte one, so every pair of cuts stays quick; it is cut everywhere in the test above.
  const { stream, expected, dropped } = scenario();
  const short = stream.subarray(0, stream.length - publish("h", 20_000, { qos: 2 }).length - PUBREL.length);
  const shortExpected = expected.subarray(0, expected.length - PUBREL.length);
  for (let a = 0; a <= short.length; a++) {
    for (let b = a; b <= short.length; b++) {
      const result = run([short.subarray(0, a), short.subarray(a, b), short.subarray(b)]);
      assert.deepEqual(result.out, shortExpected, `cuts at ${a} and ${b}`);
      assert.equal(result.dropped.length, 2, `cuts at ${a} and ${b}`);
    }
  }
  const bytewise = run([...stream].map((byte) => Uint8Array.of(byte)));
  assert.deepEqual(bytewise.out, expected);
  assert.deepEqual(bytewise.dropped, dropped);
});

Deno.test("a chunk with nothing to take out comes back as itself, not a copy", () => {
  const filter = new OversizePublishFilter(LIMIT, () => assert.fail("nothing is over the limit"));
  const chunk = concat(CONNACK, publish("a/b", 4), PINGRESP);
  const out = filter.push(chunk);
  assert.equal(out.length, 1);
  assert.equal(out[0], chunk);
  // A header cut by the chunk's end is held, and goes on in front of the next chunk.
  const first = filter.push(Uint8Array.of(0xd0));
  assert.deepEqual(first, []);
  assert.deepEqual(concat(...filter.push(Uint8Array.of(0x00, 0x20, 0x02, 0x00, 0x00))), concat(PINGRESP, CONNACK));
});

Deno.test("a 20 MB payload streamed past in 64 KiB chunks is skipped without being kept; the next packet goes on", () => {
  const dropped: DroppedPublish[] = [];
  const filter = new OversizePublishFilter(262_144, (publish) => dropped.push(publish));
  const payload = 20 * 1_048_576;
  // The real remaining length (4 bytes of it), then the topic and packet id, as the broker sends them.
  const name = utf8("home/cam/jpeg");
  const variable = [0, name.length, ...name, 0, 77];
  const header = Uint8Array.of(0x32, ...remainingLength(variable.length + payload), ...variable);
  assert.equal(header.length - variable.length, 5, "a remaining length of 4 bytes");
  let out = filter.push(concat(CONNACK, header));
  assert.deepEqual(concat(...out), CONNACK);
  const block = new Uint8Array(65_536);
  let passed = 0;
  for (let sent = 0; sent < payload - block.length; sent += block.length) {
    passed += filter.push(block).reduce((sum, part) => sum + part.length, 0);
  }
  const last = payload % block.length || block.length;
  out = filter.push(concat(block.subarray(0, last), publish("home/ok", 2)));
  assert.equal(passed, 0, "no byte of the payload was passed on");
  assert.deepEqual(concat(...out), publish("home/ok", 2));
  assert.deepEqual(dropped, [{ topic: "home/cam/jpeg", payloadBytes: payload, qos: 1, retain: false, packetId: 77 }]);
});

Deno.test("a fixed header no server may send is an MqttProtocolError; other packets are never inspected", () => {
  const filter = () => new OversizePublishFilter(LIMIT, () => {});
  assert.throws(
    () => filter().push(Uint8Array.of(0x30, 0xff, 0xff, 0xff, 0xff, 0x01)),
    (error: unknown) =>
      error instanceof MqttProtocolError && error.code === "EMQTTPROTO" && /more than 4 bytes/.test(error.message),
  );
  assert.throws(() => filter().push(Uint8Array.of(0x36, 100, 0, 1, 0x61)), /PUBLISH with QoS 3/);
  // A SUBACK as long as a PUBLISH that would be dropped goes through whole: only PUBLISH payloads are limited.
  const suback = concat(Uint8Array.of(0x90, 42, 0, 1), new Uint8Array(40).fill(1));
  assert.deepEqual(concat(...filter().push(suback)), suback);
  assert.throws(() => new OversizePublishFilter(-1, () => {}), /maxPayloadBytes: -1 is not a whole number of bytes/);
});
