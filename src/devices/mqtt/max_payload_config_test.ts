import assert from "node:assert/strict";
import { ConfigError } from "../../config/config_error.ts";
import { parseConfig } from "../../config/load.ts";
import { MQTT_MAX_PAYLOAD_BYTES, MQTT_MAX_PAYLOAD_RANGE } from "./mqtt_device.ts";

const parse = (mqtt: string, vars: Record<string, string> = {}) =>
  parseConfig({
    text: `smart_home:\n  mqtt: ${mqtt}\n`,
    location: { path: "/etc/homed/homed.yaml", origin: "--config" },
    readEnv: (name) => vars[name],
    cwd: "/work",
  }).config.smart_home.mqtt;

function problems(mqtt: string): string[] {
  try {
    parse(mqtt);
  } catch (error) {
    assert.ok(error instanceof ConfigError, String(error));
    return [...error.problems];
  }
  assert.fail("the config was accepted");
}

Deno.test("smart_home.mqtt.max_payload_bytes is 256 KiB unless set; a number or ${VAR} within 1 KiB to 64 MiB", () => {
  assert.equal(parse("{ url: 'mqtt://broker' }")?.max_payload_bytes, 262_144);
  assert.equal(MQTT_MAX_PAYLOAD_BYTES, 262_144, "the device's default is the config's");
  assert.equal(parse("{ url: 'mqtt://broker', max_payload_bytes: 4194304 }")?.max_payload_bytes, 4_194_304);
  assert.equal(
    parse("{ url: 'mqtt://broker', max_payload_bytes: '${MQTT_MAX:-1024}' }")?.max_payload_bytes,
    MQTT_MAX_PAYLOAD_RANGE.min,
  );
});

Deno.test("a bad smart_home.mqtt.max_payload_bytes is a config error naming the key, the value and the range", () => {
  for (const [value, shown] of [["100", "100"], ["67108865", "67108865"], ["1.5", "1.5"], ["'256KiB'", '"256KiB"']]) {
    // A Set: the schema's shared number() says it twice for a value that is both too small and not whole (1.5).
    assert.deepEqual(
      new Set(problems(`{ url: 'mqtt://broker', max_payload_bytes: ${value} }`)),
      new Set([
        `smart_home.mqtt.max_payload_bytes: got ${shown}; allowed: a whole number from 1024 to 67108864`,
      ]),
    );
  }
});
