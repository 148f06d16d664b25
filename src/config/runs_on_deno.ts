/**
 * Whether this process is `deno` running homed's sources (a checkout, the bundle) rather than a compiled homed.
 *
 * @example
 * ```ts
 * runsOnDeno("/usr/local/bin/deno"); // true
 * runsOnDeno("/usr/local/bin/homed"); // false
 * ```
 */
export function runsOnDeno(program: string = Deno.execPath()): boolean {
  return /(^|[/\\])deno(\.exe)?$/.test(program);
}
