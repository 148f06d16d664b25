/**
 * The command lines of libgpiod's tools (`gpioget`, `gpioset`, `gpiomon`, Debian package `gpiod`) in both of their
 * syntaxes, told apart once at start by `gpiomon --version` ("gpiomon (libgpiod) v1.6.3", "gpiomon (libgpiod)
 * v2.2.1"). Apart from `gpio_device.ts` so that what homed runs, version by version, can be read and checked in one
 * place; as read in libgpiod's `tools/` on the v1.6.x and v2.2.x branches:
 *
 * | | v1 (1.6.x, Debian bookworm) | v2 (2.x, Debian trixie) |
 * | --- | --- | --- |
 * | watch | `gpiomon -b <chip> <offset>…` | `gpiomon -C homed -c <chip> -e both <offset>…` |
 * | event line | `event:  RISING EDGE offset: 17 timestamp: [1700000000.123456789]` | `1700000000.123456789\trising\tgpiochip0 17` |
 * | set | `gpioset <chip> <offset>=<0\|1>` | `gpioset -t0 -C homed -c <chip> <offset>=<0\|1>` |
 * | read | `gpioget <chip> <offset>…` → `1 0` | `gpioget [--as-is] --numeric -C homed -c <chip> <offset>…` → `1 0` |
 *
 * - v1 gpiomon's standard output is a pipe here, so fully buffered: `-b` makes it line-buffered. Its timestamp is
 *   printed `%8ld.%09ld`, so seconds since boot come padded (`[     512.000000001]`).
 * - v2 gpiomon flushes after every poll; its line id is `<chip> <offset>`, followed by ` "<name>"` when the kernel
 *   names the line (a Raspberry Pi's `"GPIO17"`).
 * - Both watch both edges here whatever the lines asked for: one gpiomon serves every input line of a chip (the
 *   edge option applies to all of them), and seeing every edge keeps each line's level known — gpioget cannot read a
 *   line gpiomon holds (the kernel grants a line to one request). The line's `edge` is applied by homed.
 * - v2 gpioset keeps the line requested until it is killed unless told otherwise; `-t0` (a toggle sequence whose last
 *   period is 0: "gpioset exits") makes it set the value and exit, like v1's default `--mode=exit`. In both, the
 *   kernel releases the line then; libgpiod warns that the level after that is not guaranteed, though common
 *   drivers keep driving it.
 * - v2 gpioget forces the line to input unless `--as-is`: outputs are read `--as-is`. v1 gpioget has no such option
 *   and would turn an output into an input, so a v1 output reads as the value homed last set.
 *
 * What the tools print is read in `libgpiod_output.ts`.
 *
 * @module
 */

/**
 * The programs the device runs (tests pass stand-in scripts).
 *
 * @example
 * ```ts
 * const tools: GpioTools = { get: "/usr/bin/gpioget", set: "/usr/bin/gpioset", mon: "/usr/bin/gpiomon" };
 * ```
 */
export interface GpioTools {
  get: string;
  set: string;
  mon: string;
}

/**
 * libgpiod's tools, found on PATH: what `--allow-run` must name.
 *
 * @example
 * ```ts
 * Object.values(GPIO_TOOLS).join(","); // "gpioget,gpioset,gpiomon"
 * ```
 */
export const GPIO_TOOLS: Readonly<GpioTools> = { get: "gpioget", set: "gpioset", mon: "gpiomon" };

/**
 * The two command-line syntaxes of libgpiod's tools.
 *
 * @example
 * ```ts
 * const bookworm: GpioVersion = "v1"; // libgpiod 1.6.3
 * ```
 */
export type GpioVersion = "v1" | "v2";

/** The label v2 puts on the lines homed requests (`gpioinfo` shows it). */
const CONSUMER = "homed";

/**
 * The command that watches `offsets` of `chip`, both edges, in `version`'s syntax.
 *
 * @example
 * ```ts
 * monitorArgv("v1", "gpiomon", "gpiochip0", [17, 27]); // ["gpiomon", "-b", "gpiochip0", "17", "27"]
 * monitorArgv("v2", "gpiomon", "gpiochip0", [17]); // ["gpiomon", "-C", "homed", "-c", "gpiochip0", "-e", "both", "17"]
 * ```
 */
export function monitorArgv(version: GpioVersion, program: string, chip: string, offsets: readonly number[]): string[] {
  const lines = offsets.map(String);
  return version === "v1"
    ? [program, "-b", chip, ...lines]
    : [program, "-C", CONSUMER, "-c", chip, "-e", "both", ...lines];
}

/**
 * The command that drives line `offset` of `chip` to the wire level `level` and exits, in `version`'s syntax.
 *
 * @example
 * ```ts
 * setArgv("v1", "gpioset", "gpiochip0", 22, 1); // ["gpioset", "gpiochip0", "22=1"]
 * setArgv("v2", "gpioset", "gpiochip0", 22, 0); // ["gpioset", "-t0", "-C", "homed", "-c", "gpiochip0", "22=0"]
 * ```
 */
export function setArgv(version: GpioVersion, program: string, chip: string, offset: number, level: 0 | 1): string[] {
  return version === "v1"
    ? [program, chip, `${offset}=${level}`]
    : [program, "-t0", "-C", CONSUMER, "-c", chip, `${offset}=${level}`];
}

/**
 * The command that prints the wire levels of `offsets` of `chip` (`1 0`), in `version`'s syntax; `asIs` (v2 only)
 * leaves an output's direction alone.
 *
 * @example
 * ```ts
 * getArgv("v1", "gpioget", "gpiochip0", [17, 27], false); // ["gpioget", "gpiochip0", "17", "27"]
 * getArgv("v2", "gpioget", "gpiochip0", [22], true);
 * // ["gpioget", "--as-is", "--numeric", "-C", "homed", "-c", "gpiochip0", "22"]
 * ```
 */
export function getArgv(
  version: GpioVersion,
  program: string,
  chip: string,
  offsets: readonly number[],
  asIs: boolean,
): string[] {
  const lines = offsets.map(String);
  return version === "v1"
    ? [program, chip, ...lines]
    : [program, ...(asIs ? ["--as-is"] : []), "--numeric", "-C", CONSUMER, "-c", chip, ...lines];
}
