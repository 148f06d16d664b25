/**
 * What the tests of `src/devices/gpio/` share: stand-ins for libgpiod's tools — shell scripts that answer `--version`
 * like libgpiod 1.6.3 or 2.2.1, print gpiomon's event lines in that version's format (as `tools/gpiomon.c` prints
 * them), record the command lines they were given, and hang or exit on demand — and those event lines themselves.
 *
 * @module
 */

import type { GpioTools, GpioVersion } from "../libgpiod_commands.ts";

/** What `<tool> --version` prints (`print_version()` of each branch's `tools/tools-common.c`). */
export function versionText(tool: string, version: GpioVersion): string {
  return version === "v1"
    ? `${tool} (libgpiod) v1.6.3\nCopyright (C) 2017-2018 Bartosz Golaszewski\nLicense: LGPLv2.1\n` +
      "This is free software: you are free to change and redistribute it.\n" +
      "There is NO WARRANTY, to the extent permitted by law.\n"
    : `${tool} (libgpiod) v2.2.1\nCopyright (C) 2017-2023 Bartosz Golaszewski\nLicense: GPL-2.0-or-later\n` +
      "This is free software: you are free to change and redistribute it.\n" +
      "There is NO WARRANTY, to the extent permitted by law.\n";
}

/** v1 gpiomon: `printf("event: %s offset: %u timestamp: [%8ld.%09ld]\n", " RISING EDGE" | "FALLING EDGE", …)`. */
export function v1Line(edge: "rising" | "falling", offset: number, seconds: number, nanos: number): string {
  const name = edge === "rising" ? " RISING EDGE" : "FALLING EDGE";
  return `event: ${name} offset: ${offset} timestamp: [${String(seconds).padStart(8)}.${
    String(nanos).padStart(9, "0")
  }]`;
}

/** v2 gpiomon with `-c`: `<s>.<%09 ns>\t<edge>\t<chip> <offset>`, then ` "<name>"` for a line the kernel names. */
export function v2Line(
  edge: "rising" | "falling",
  offset: number,
  seconds: number,
  nanos: number,
  lineName?: string,
): string {
  return `${seconds}.${String(nanos).padStart(9, "0")}\t${edge}\tgpiochip0 ${offset}${
    lineName ? ` "${lineName}"` : ""
  }`;
}

const version = (tool: string, v: GpioVersion) =>
  `if [ "$1" = "--version" ]; then\ncat <<'EOF'\n${versionText(tool, v)}EOF\nexit 0\nfi\n`;

/**
 * Writes stand-ins for gpiomon, gpioget and gpioset into `dir`. gpiomon appends its arguments to `mon.args`, prints
 * `mon.<chip>.<run>.out`, then exits like a failed gpiomon when `mon.<chip>.<run>.exit` exists, else waits to be
 * killed; gpioget appends to `get.args` and prints `get.<run>.out` (else a 0 per offset); gpioset appends to
 * `set.args`, and hangs when `set.hang` exists.
 */
export async function writeStandIns(dir: string, v: GpioVersion): Promise<GpioTools> {
  const scripts = {
    mon: `#!/bin/sh\n${version("gpiomon", v)}D='${dir}'\nprintf '%s\\n' "$*" >> "$D/mon.args"\n` +
      `chip=""\nfor a in "$@"; do case "$a" in gpiochip*) chip="$a";; esac; done\n` +
      `echo x >> "$D/mon.$chip.runs"\nrun=$(( $(wc -l < "$D/mon.$chip.runs") ))\n` +
      `if [ -f "$D/mon.$chip.$run.out" ]; then cat "$D/mon.$chip.$run.out"; fi\n` +
      `if [ -f "$D/mon.$chip.$run.exit" ]; then\n` +
      `  echo "$0: error waiting for events: No such file or directory" >&2\n  exit 1\nfi\n` +
      // exec: the stop's SIGTERM reaches the waiting program itself, which then closes the pipe.
      `exec sleep 600\n`,
    get: `#!/bin/sh\n${version("gpioget", v)}D='${dir}'\nprintf '%s\\n' "$*" >> "$D/get.args"\n` +
      `run=$(( $(wc -l < "$D/get.args") ))\n` +
      `if [ -f "$D/get.$run.out" ]; then cat "$D/get.$run.out"; exit 0; fi\n` +
      `out=""\nfor a in "$@"; do case "$a" in *[!0-9]*|"") ;; *) out="$out 0";; esac; done\n` +
      `printf '%s\\n' "\${out# }"\n`,
    set: `#!/bin/sh\n${version("gpioset", v)}D='${dir}'\nprintf '%s\\n' "$*" >> "$D/set.args"\n` +
      `if [ -f "$D/set.hang" ]; then echo $$ > "$D/set.pid"; exec sleep 30; fi\n`,
  };
  const tools = { mon: `${dir}/gpiomon`, get: `${dir}/gpioget`, set: `${dir}/gpioset` };
  for (const key of ["mon", "get", "set"] as const) {
    await Deno.writeTextFile(tools[key], scripts[key]);
    await Deno.chmod(tools[key], 0o755);
  }
  return tools;
}
