/**
 * Creates links for tests. `Deno.symlink` needs unscoped read and write rights, which the test task does not grant;
 * the test task may run `ln` (coreutils) instead.
 *
 * @module
 */

async function ln(args: string[]): Promise<void> {
  const result = await new Deno.Command("ln", { args, stdout: "null", stderr: "piped" }).output();
  if (!result.success) throw new Error(`ln ${args.join(" ")} failed: ${new TextDecoder().decode(result.stderr)}`);
}

/**
 * `path` becomes a symbolic link to `target`.
 *
 * @example
 * ```ts
 * const dir = await Deno.makeTempDir({ prefix: "homed-links-" });
 * await symlink("/etc/passwd", `${dir}/content.md`);
 * ```
 */
export function symlink(target: string, path: string): Promise<void> {
  return ln(["-s", target, path]);
}

/** `path` becomes a second hard link to `target`. */
export function hardlink(target: string, path: string): Promise<void> {
  return ln([target, path]);
}
