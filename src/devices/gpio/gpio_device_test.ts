/**
 * The GPIO device against stand-ins for libgpiod's tools: shell scripts that answer `--version` like libgpiod 1.6.3
 * or 2.2.1, print gpiomon's event lines in that version's format (as `tools/gpiomon.c` prints them), record the
 * command lines they were given, and hang or exit on demand.
 *
 * @module
 */

import assert from "node:assert/strict";
import { getLogger, type Logger } from "@logtape/logtape";
import { FakeClock } from "../../../tests/support/fake_clock.ts";
import { callDeviceTool, RecordingDevice } from "../../../tests/support/recording_device.ts";
import { testToolContext } from "../../../tests/support/tool_context.ts";
import { waitFor } from "../../../tests/support/wait.ts";
import { type Clock, systemClock } from "../../clock.ts";
import type { InputEvent } from "../../io/event.ts";
import { IOManager } from "../../io/io_manager.ts";
import { RouteTable } from "../../io/route_table.ts";
import { log, setupLogging, stopLogging } from "../../log/logging.ts";
import { ToolRegistry } from "../../tools/registry.ts";
import { CommandError } from "../../process/run_command.ts";
import { GpioDevice, type GpioDeviceOptions, type GpioLineSettings, type GpioTools } from "./gpio_device.ts";
import { v1Line, v2Line, writeStandIns } from "./testdata/libgpiod_stand_ins.ts";

type Version = "v1" | "v2";

/** An input line on gpiochip0 with the config's defaults but no debounce. */
function line(offset: number, settings: Partial<GpioLineSettings> = {}): GpioLineSettings {
  return {
    chip: "gpiochip0",
    line: offset,
    direction: "in",
    edge: "both",
    turns: false,
    trust: "household",
    debounceMs: 0,
    activeLow: false,
    ...settings,
  };
}

interface Setup {
  gpio: GpioDevice;
  registry: ToolRegistry;
  inputs: InputEvent[];
  dir: string;
  tools: GpioTools;
  clock: Clock;
  /** The lines a stand-in recorded (its arguments, one call a line). */
  recorded(file: "mon.args" | "get.args" | "set.args"): Promise<string[]>;
  close(): Promise<void>;
}

/**
 * A GPIO device on stand-ins of version `v` (whose files `prepare` writes first), in an IOManager whose inputs are
 * collected, with `others` beside it.
 */
async function setup(
  v: Version,
  lines: Record<string, GpioLineSettings>,
  options: {
    prepare?: (dir: string, tools: GpioTools) => Promise<void>;
    device?: Partial<GpioDeviceOptions>;
    others?: RecordingDevice[];
    logger?: Logger;
  } = {},
): Promise<Setup> {
  const dir = await Deno.makeTempDir({ prefix: "homed-gpio-" });
  const tools = await writeStandIns(dir, v);
  await options.prepare?.(dir, tools);
  const clock = options.device?.clock ?? new FakeClock();
  const gpio = new GpioDevice({
    lines,
    tools,
    // The stand-ins are scripts in a temp folder: run through sh, they need no run right of their own.
    launcher: ["sh"],
    clock,
    logger: options.logger ?? getLogger(["test"]),
    random: () => 0.5,
    ...options.device,
  });
  const registry = new ToolRegistry();
  const io = new IOManager({
    clock,
    routes: new RouteTable({}, {}, undefined),
    tools: registry,
    logger: getLogger(["test"]),
  });
  await io.replaceDevices([gpio, ...(options.others ?? [])]);
  const inputs: InputEvent[] = [];
  const reader = (async () => {
    for (let event = await io.next(); event; event = await io.next()) inputs.push(event);
  })();
  return {
    gpio,
    registry,
    inputs,
    dir,
    tools,
    clock,
    recorded: async (file) => {
      const text = await Deno.readTextFile(`${dir}/${file}`).catch(() => "");
      return text.split("\n").filter(Boolean);
    },
    close: async () => {
      await io.close();
      await reader;
      await Deno.remove(dir, { recursive: true });
    },
  };
}

const write = (dir: string, name: string, lines: string[]) =>
  Deno.writeTextFile(`${dir}/${name}`, lines.join("\n") + "\n");

type LineStatus = {
  last_value: number | null;
  edges: number;
  events: number;
  debounced: number;
  last_event_at: string | null;
};
const lineStatus = (gpio: GpioDevice, name: string) => (gpio.status().lines as Record<string, LineStatus>)[name]!;
type MonitorStatus = { running: boolean; starts: number; last_error: string | null; restart_in_ms: number | null };
const monitorStatus = (gpio: GpioDevice, chip = "gpiochip0") =>
  (gpio.status().monitor as Record<string, MonitorStatus>)[chip]!;

Deno.test("libgpiod v1: `gpiomon -b <chip> <offsets>` per chip, its event lines become gpio.edge events", async () => {
  const t = await setup("v1", {
    door: line(17),
    window: line(27, { trust: "guest" }),
    shed: line(4, { chip: "gpiochip1" }),
  }, {
    prepare: async (dir) => {
      await write(dir, "get.1.out", ["1 0"]); // gpiochip0's levels, before gpiomon holds the lines
      await write(dir, "mon.gpiochip0.1.out", [
        v1Line("falling", 17, 1_700_000_000, 123_456_789),
        v1Line("rising", 27, 1_700_000_001, 0),
      ]);
      await write(dir, "mon.gpiochip1.1.out", [v1Line("rising", 4, 512, 1)]);
    },
  });
  try {
    await waitFor(() => t.inputs.length === 3, "three edges");
    const at = new Date(t.clock.now()).toISOString();
    const bySource = Object.fromEntries(t.inputs.map((event) => [event.source, event]));
    assert.deepEqual(
      { ...bySource["gpio:door"], id: "", time: 0 },
      {
        id: "",
        time: 0,
        source: "gpio:door",
        sender: "door",
        trust: "household",
        type: "gpio.edge",
        payload: { edge: "falling", value: 0, at },
      },
    );
    assert.deepEqual(bySource["gpio:window"]!.payload, { edge: "rising", value: 1, at });
    assert.equal(bySource["gpio:window"]!.trust, "guest");
    assert.deepEqual(bySource["gpio:shed"]!.payload, { edge: "rising", value: 1, at });
    assert.deepEqual((await t.recorded("mon.args")).sort(), ["-b gpiochip0 17 27", "-b gpiochip1 4"]);
    assert.deepEqual(await t.recorded("get.args"), ["gpiochip0 17 27", "gpiochip1 4"]);
    const status = t.gpio.status();
    assert.equal(status.version, "v1");
    assert.equal(status.libgpiod, "1.6.3");
    assert.deepEqual(lineStatus(t.gpio, "door"), {
      chip: "gpiochip0",
      line: 17,
      direction: "in",
      last_event_at: at,
      last_value: 0,
      edges: 1,
      events: 1,
      debounced: 0,
    });
    assert.equal(monitorStatus(t.gpio, "gpiochip1").running, true);
  } finally {
    await t.close();
  }
});

Deno.test("libgpiod v2: `gpiomon -C homed -c <chip> -e both <offsets>`, tab-separated lines, named or not", async () => {
  const t = await setup("v2", { door: line(17), bell: line(27) }, {
    prepare: (dir) =>
      write(dir, "mon.gpiochip0.1.out", [
        v2Line("rising", 17, 1_700_000_000, 123_456_789, "GPIO17"),
        v2Line("falling", 27, 1_700_000_000, 223_456_789),
      ]),
  });
  try {
    await waitFor(() => t.inputs.length === 2, "two edges");
    assert.deepEqual(t.inputs.map((event) => [event.source, event.payload.edge, event.payload.value]), [
      ["gpio:door", "rising", 1],
      ["gpio:bell", "falling", 0],
    ]);
    assert.deepEqual(await t.recorded("mon.args"), ["-C homed -c gpiochip0 -e both 17 27"]);
    assert.deepEqual(await t.recorded("get.args"), ["--numeric -C homed -c gpiochip0 17 27"]);
    assert.equal(t.gpio.status().version, "v2");
    assert.equal(t.gpio.status().libgpiod, "2.2.1");
  } finally {
    await t.close();
  }
});

Deno.test("an edge within debounceMs of the line's last accepted one is dropped, judged by the tool's timestamps", async () => {
  const ms = 1_000_000; // nanoseconds
  const t = await setup("v2", {
    bell: line(27, { debounceMs: 50 }),
    button: line(17, { debounceMs: 50, edge: "rising" }),
  }, {
    prepare: (dir) =>
      write(dir, "mon.gpiochip0.1.out", [
        v2Line("rising", 27, 100, 0),
        v2Line("falling", 27, 100, 5 * ms), // 5 ms later: a bounce
        v2Line("rising", 17, 100, 0), // a press…
        v2Line("falling", 17, 100, 2 * ms), // …bouncing
        v2Line("rising", 17, 100, 4 * ms),
        v2Line("falling", 17, 100, 300 * ms), // the release: accepted, but the line reports rising edges only
        v2Line("rising", 17, 100, 303 * ms), // the release's bounce is no press
        v2Line("rising", 17, 101, 0), // the next press
      ]),
  });
  try {
    await waitFor(() => lineStatus(t.gpio, "button").edges === 6 && t.inputs.length === 3, "the button's 6 edges");
    assert.deepEqual(t.inputs.map((event) => [event.source, event.payload.edge]), [
      ["gpio:bell", "rising"],
      ["gpio:button", "rising"],
      ["gpio:button", "rising"],
    ]);
    assert.deepEqual(
      { events: lineStatus(t.gpio, "bell").events, debounced: lineStatus(t.gpio, "bell").debounced },
      { events: 1, debounced: 1 },
    );
    assert.deepEqual(
      { events: lineStatus(t.gpio, "button").events, debounced: lineStatus(t.gpio, "button").debounced },
      { events: 2, debounced: 3 },
    );
    // The level follows every edge, bounces included: the bell's last one left it low.
    assert.equal(lineStatus(t.gpio, "bell").last_value, 0);
    // The fake clock never moved: only the tool's timestamps told the edges apart.
    assert.ok(t.inputs.every((event) => event.payload.at === new Date(t.clock.now()).toISOString()));
  } finally {
    await t.close();
  }
});

Deno.test("active_low inverts the value and so swaps the edges, in events, reads and gpio_set", async () => {
  const t = await setup("v1", {
    door: line(17, { activeLow: true, edge: "rising" }),
    porch: line(22, { direction: "out", activeLow: true }),
  }, {
    prepare: async (dir) => {
      await write(dir, "get.1.out", ["1"]); // the wire is high: the door is inactive
      await write(dir, "mon.gpiochip0.1.out", [
        v1Line("falling", 17, 200, 0), // the wire falls: the door becomes active, a logical rising edge
        v1Line("rising", 17, 201, 0), // the wire rises: a logical falling edge, which the line does not report
      ]);
    },
  });
  try {
    assert.equal(lineStatus(t.gpio, "door").last_value, 0, "read at start: the wire is high, so inactive");
    await waitFor(() => lineStatus(t.gpio, "door").edges === 2 && t.inputs.length === 1, "both edges");
    assert.equal(lineStatus(t.gpio, "door").last_value, 0);
    assert.deepEqual(t.inputs[0]!.payload, { edge: "rising", value: 1, at: new Date(t.clock.now()).toISOString() });
    assert.equal(
      await callDeviceTool(t.gpio, "gpio_set", { name: "porch", value: true }, testToolContext()),
      "Set porch to 1 (gpiochip0 line 22 driven low, active-low)",
    );
    assert.deepEqual(await t.recorded("set.args"), ["gpiochip0 22=0"]);
  } finally {
    await t.close();
  }
});

Deno.test("turns: true makes each edge a message to the butler from gpio:<name>, with the line's trust", async () => {
  const t = await setup("v2", { doorbell: line(5, { turns: true, trust: "guest", edge: "rising" }) }, {
    prepare: (dir) => write(dir, "mon.gpiochip0.1.out", [v2Line("rising", 5, 10, 0)]),
  });
  try {
    await waitFor(() => t.inputs.length === 1, "the ring");
    const [ring] = t.inputs;
    assert.equal(ring!.type, "message");
    assert.equal(ring!.source, "gpio:doorbell");
    assert.equal(ring!.sender, "doorbell");
    assert.equal(ring!.trust, "guest");
    assert.equal(ring!.payload.text, "doorbell: rising edge (now 1)");
  } finally {
    await t.close();
  }
});

Deno.test("lines gpiomon should not print are counted and logged at most 10 per 10 s, and never stop the events", async () => {
  const logged: string[] = [];
  setupLogging({ level: "info", format: "text", secrets: [], write: (text) => logged.push(text.trim()) });
  const garbage = Array.from({ length: 12 }, (_, i) => `garbage ${i}`);
  const t = await setup("v1", { door: line(17) }, {
    logger: log("gpio"),
    prepare: (dir) =>
      write(dir, "mon.gpiochip0.1.out", [...garbage, v1Line("rising", 99, 1, 0), v1Line("rising", 17, 2, 0)]),
  });
  try {
    await waitFor(() => t.inputs.length === 1, "the one real edge");
    assert.equal(t.gpio.status().unparsed, 13);
    assert.equal(
      t.gpio.status().last_error,
      `devices.gpio (gpiochip0): ignored a line of gpiomon's output, about line 99, which is not watched: ` +
        JSON.stringify(v1Line("rising", 99, 1, 0)),
    );
  } finally {
    await t.close();
    stopLogging();
  }
  const ignored = logged.filter((text) => text.includes("ignored a line of gpiomon's output"));
  assert.equal(ignored.length, 10);
  assert.match(
    ignored[0]!,
    /devices\.gpio \(gpiochip0\): ignored a line of gpiomon's output, not a gpiomon event line: "garbage 0"$/,
  );
  assert.ok(
    logged.some((text) => text.endsWith("devices.gpio: 3 more lines of gpiomon's output ignored in the last 10 s")),
  );
});

Deno.test("gpio_set runs each version's gpioset, exiting once set, and says what it set", async () => {
  for (const [v, argv] of [["v1", "gpiochip0 22=1"], ["v2", "-t0 -C homed -c gpiochip0 22=1"]] as const) {
    const t = await setup(v, { porch: line(22, { direction: "out" }) });
    try {
      const result = await t.registry.call("gpio_set", '{"name": "porch", "value": 1}', testToolContext());
      assert.deepEqual(result, { ok: true, content: "Set porch to 1 (gpiochip0 line 22 driven high)" }, v);
      await callDeviceTool(t.gpio, "gpio_set", { name: "porch", value: false }, testToolContext());
      assert.deepEqual(await t.recorded("set.args"), [argv, argv.replace("=1", "=0")], v);
      assert.deepEqual(t.gpio.status().monitor, {}, "no input line: no gpiomon");
      assert.equal(lineStatus(t.gpio, "porch").last_value, 0);
    } finally {
      await t.close();
    }
  }
});

Deno.test("home targets: an output line switches by its name through gpio_set (toggle by its last value); an input is read", async () => {
  const t = await setup("v2", { porch_light: line(22, { direction: "out" }), door: line(17) });
  try {
    const [porch, door] = t.gpio.homeTargets();
    assert.deepEqual(porch!.names, ["porch_light", "porch light"]);
    assert.equal(porch!.kind, "switch");
    assert.equal(porch!.state, undefined, "not set since start: unknown");
    assert.equal(porch!.plan({ kind: "toggle" }), undefined, "toggle needs a known value");
    const on = porch!.plan({ kind: "turn_on" });
    assert.deepEqual(on, { tool: "gpio_set", args: { name: "porch_light", value: 1 } });
    const result = await t.registry.call(
      "gpio_set",
      JSON.stringify(on && "args" in on ? on.args : {}),
      testToolContext(),
    );
    assert.equal(result.ok, true, result.content);
    assert.equal(porch!.state, "on");
    assert.deepEqual(porch!.plan({ kind: "toggle" }), { tool: "gpio_set", args: { name: "porch_light", value: 0 } });
    assert.equal(porch!.plan({ kind: "brightness", percent: 50 }), undefined);
    assert.equal(door!.kind, "binary_sensor");
    assert.equal(door!.plan({ kind: "turn_on" }), undefined, "an input line is never set");
  } finally {
    await t.close();
  }
});

Deno.test("gpio_set takes configured output lines only: inputs, unknown names and other values are refused", async () => {
  const t = await setup("v2", { door: line(17), porch: line(22, { direction: "out" }) });
  try {
    const input = await t.registry.call("gpio_set", '{"name": "door", "value": 1}', testToolContext());
    assert.equal(input.ok, false);
    assert.match(input.content, /field "name" must be one of "porch"/);
    const guest = await t.registry.call("gpio_set", '{"name": "porch", "value": 1}', testToolContext("qq", "guest"));
    assert.match(guest.content, /^Error: tool "gpio_set" is for /);
    await assert.rejects(
      callDeviceTool(t.gpio, "gpio_set", { name: "door", value: 1 }, testToolContext()),
      new Error(
        'name: door is an input line (devices.gpio.door.direction is "in"); gpio_set drives output lines only: porch',
      ),
    );
    await assert.rejects(
      callDeviceTool(t.gpio, "gpio_set", { name: "garage", value: 1 }, testToolContext()),
      new Error('name: no output GPIO line "garage" in devices.gpio; the output lines are: porch'),
    );
    await assert.rejects(
      callDeviceTool(t.gpio, "gpio_set", { name: "porch", value: 2 }, testToolContext()),
      new Error("value: got 2; allowed: 0, 1, true or false"),
    );
    assert.deepEqual(await t.recorded("set.args"), [], "nothing ran");
  } finally {
    await t.close();
  }
});

Deno.test("gpio_get: v2 reads an output --as-is, an input from its edges while gpiomon holds it; v1 outputs as last set", async () => {
  const v2 = await setup("v2", { door: line(17), porch: line(22, { direction: "out" }) }, {
    prepare: async (dir) => {
      await write(dir, "get.1.out", ["1"]); // the door's level at start
      await write(dir, "get.2.out", ["1"]); // the porch light, read later
    },
  });
  try {
    await waitFor(() => monitorStatus(v2.gpio).running, "gpiomon");
    const guest = testToolContext("qq", "guest");
    const porch = await v2.registry.call("gpio_get", '{"name": "porch"}', guest);
    assert.deepEqual(JSON.parse(porch.content), { name: "porch", direction: "out", value: 1, how: "read now" });
    const door = await callDeviceTool(v2.gpio, "gpio_get", { name: "door" }, guest) as Record<string, unknown>;
    assert.equal(door.value, 1);
    assert.match(String(door.how), /^as last seen at .* \(gpiomon holds the line; homed follows its edges\)$/);
    assert.deepEqual(await v2.recorded("get.args"), [
      "--numeric -C homed -c gpiochip0 17",
      "--as-is --numeric -C homed -c gpiochip0 22",
    ]);
  } finally {
    await v2.close();
  }

  const v1 = await setup("v1", { porch: line(22, { direction: "out" }) });
  try {
    await assert.rejects(
      callDeviceTool(v1.gpio, "gpio_get", { name: "porch" }, testToolContext()),
      /^Error: The level of porch is not known: homed has not set it since it started, and libgpiod v1's gpioget would turn the output into an input to read it$/,
    );
    await callDeviceTool(v1.gpio, "gpio_set", { name: "porch", value: 1 }, testToolContext());
    const porch = await callDeviceTool(v1.gpio, "gpio_get", { name: "porch" }, testToolContext());
    assert.deepEqual(porch, {
      name: "porch",
      direction: "out",
      value: 1,
      how: `as homed last set it, at ${new Date(v1.clock.now()).toISOString()}`,
    });
    assert.deepEqual(await v1.recorded("get.args"), [], "v1's gpioget never touches an output");
  } finally {
    await v1.close();
  }
});

Deno.test("a missing gpiomon: the device starts, status says why, the rest goes on, and it is tried again", async () => {
  const other = new RecordingDevice("tv");
  const t = await setup("v1", { door: line(17), porch: line(22, { direction: "out" }) }, {
    others: [other],
    prepare: async (dir, tools) => {
      await Deno.rename(tools.mon, `${dir}/gpiomon.later`);
    },
  });
  try {
    const status = t.gpio.status();
    assert.equal(status.version, null);
    // Through the tests' sh launcher a missing script is sh's complaint, named after the tool; without one, Deno's
    // NotFound gives "… is not installed" (the next test).
    const missing = String(status.last_error);
    assert.match(missing, new RegExp(`^${t.tools.mon} failed \\(exit code \\d+: .*cannot open ${t.tools.mon}`));
    assert.deepEqual(monitorStatus(t.gpio), { running: false, starts: 0, last_error: missing, restart_in_ms: 1_000 });
    const set = await t.registry.call("gpio_set", '{"name": "porch", "value": 1}', testToolContext());
    assert.deepEqual(set, { ok: false, content: `Error: tool "gpio_set" failed: ${missing}` });

    other.emit("still here");
    await waitFor(() => t.inputs.some((event) => event.source === "tv"), "the other device's input");

    await Deno.rename(`${t.dir}/gpiomon.later`, t.tools.mon); // installed meanwhile
    await (t.clock as FakeClock).timersArmed();
    (t.clock as FakeClock).advance(1_000);
    await waitFor(() => monitorStatus(t.gpio).running, "gpiomon, once it is there");
    assert.equal(t.gpio.status().version, "v1");
    assert.deepEqual(await t.recorded("mon.args"), ["-b gpiochip0 17"]);
  } finally {
    await t.close();
  }
});

Deno.test("a gpiomon not on PATH: status says it is not installed and what to install", async () => {
  const gpio = new GpioDevice({
    lines: { door: line(17) },
    tools: { get: "homed-no-such-gpioget", set: "homed-no-such-gpioset", mon: "homed-no-such-gpiomon" },
    clock: new FakeClock(),
    logger: getLogger(["test"]),
    random: () => 0.5,
  });
  const io = new IOManager({
    clock: new FakeClock(),
    routes: new RouteTable({}, {}, undefined),
    tools: new ToolRegistry(),
    logger: getLogger(["test"]),
  });
  await io.replaceDevices([gpio]);
  try {
    await waitFor(() => gpio.status().last_error !== null, "the failed detection");
    assert.equal(
      gpio.status().last_error,
      "homed-no-such-gpiomon is not installed (not found on PATH); install it or change devices.gpio " +
        "(libgpiod's tools; Debian: apt install gpiod)",
    );
  } finally {
    await io.close();
  }
});

Deno.test("a gpiomon that exits is started again after its backoff, and its error shows meanwhile", async () => {
  const t = await setup("v1", { door: line(17) }, {
    prepare: async (dir) => {
      await write(dir, "mon.gpiochip0.1.out", [v1Line("rising", 17, 1, 0)]);
      await write(dir, "mon.gpiochip0.1.exit", []);
      await write(dir, "mon.gpiochip0.2.out", [v1Line("falling", 17, 2, 0)]);
    },
  });
  try {
    await waitFor(() => monitorStatus(t.gpio).restart_in_ms !== null, "the first exit");
    assert.deepEqual(monitorStatus(t.gpio), {
      running: false,
      starts: 1,
      last_error:
        `${t.tools.mon} exited with code 1: ${t.tools.mon}: error waiting for events: No such file or directory`,
      restart_in_ms: 1_000,
    });
    assert.match(String(t.gpio.status().last_error), /error waiting for events/);
    (t.clock as FakeClock).advance(1_000);
    await waitFor(() => t.inputs.length === 2, "the edge of the second run");
    assert.deepEqual(t.inputs.map((event) => event.payload.edge), ["rising", "falling"]);
    assert.equal(monitorStatus(t.gpio).starts, 2);
  } finally {
    await t.close();
  }
});

Deno.test("a gpioset that hangs is killed at its deadline and the call says so", async () => {
  const t = await setup("v2", { porch: line(22, { direction: "out" }) }, {
    device: { clock: systemClock, commandTimeoutMs: 300 },
    prepare: (dir) => write(dir, "set.hang", []),
  });
  try {
    const started = performance.now();
    const error = await callDeviceTool(t.gpio, "gpio_set", { name: "porch", value: 1 }, testToolContext()).then(
      () => undefined,
      (error) => error,
    );
    assert.ok(error instanceof CommandError, String(error));
    assert.equal(error.code, "timeout");
    assert.equal(error.message, `${t.tools.set} did not finish within 300 ms and was stopped (devices.gpio.porch)`);
    assert.ok(performance.now() - started < 5_000, "not the 30 s it wanted");
    assert.equal(t.gpio.status().last_error, error.message);
    const pid = (await Deno.readTextFile(`${t.dir}/set.pid`)).trim();
    const alive = await new Deno.Command("sh", { args: ["-c", `kill -0 ${pid}`], stderr: "null" }).output();
    assert.equal(alive.success, false, "the hung gpioset is gone");
  } finally {
    await t.close();
  }
});

Deno.test("one line named twice is refused, naming both settings", () => {
  assert.throws(
    () =>
      new GpioDevice({
        lines: { bell: line(17), door: line(17, { direction: "out" }) },
        clock: new FakeClock(),
        logger: getLogger(["test"]),
      }),
    new TypeError("devices.gpio.door: gpiochip0 line 17 is already devices.gpio.bell; a line may be named once"),
  );
});
