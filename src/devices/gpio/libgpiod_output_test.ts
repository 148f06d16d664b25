/**
 * Reading libgpiod's output: gpiomon's event lines of both versions, as the stand-ins print them (the formats of
 * `tools/gpiomon.c`), and `--version` as each branch prints it.
 *
 * @module
 */

import assert from "node:assert/strict";
import { parseGpioVersion, parseMonitorLine } from "./libgpiod_output.ts";
import { v1Line, v2Line, versionText } from "./testdata/libgpiod_stand_ins.ts";

Deno.test("both versions' gpiomon event lines are parsed, padded boot-time timestamps and named lines too", () => {
  assert.deepEqual(parseMonitorLine(v1Line("rising", 17, 1_700_000_000, 123_456_789)), {
    offset: 17,
    edge: "rising",
    timestampMs: 1_700_000_000_123.456789,
  });
  assert.equal(v1Line("falling", 4, 512, 1), "event: FALLING EDGE offset: 4 timestamp: [     512.000000001]");
  assert.deepEqual(parseMonitorLine(v1Line("falling", 4, 512, 1)), {
    offset: 4,
    edge: "falling",
    timestampMs: 512_000.000001,
  });
  assert.deepEqual(parseMonitorLine(v2Line("falling", 17, 5, 5_000_000, "GPIO17")), {
    offset: 17,
    edge: "falling",
    timestampMs: 5_005,
  });
  assert.equal(parseMonitorLine("gpiomon: error waiting for events: Device or resource busy"), undefined);
  assert.equal(parseMonitorLine("1700000000.5\trising\tgpiochip0 17"), undefined, "v2 prints 9 digits of ns");
  assert.equal(parseGpioVersion(versionText("gpiomon", "v1")), "v1");
  assert.equal(parseGpioVersion(versionText("gpiomon", "v2")), "v2");
  assert.equal(parseGpioVersion("GNU sleep 9.1"), undefined);
});
