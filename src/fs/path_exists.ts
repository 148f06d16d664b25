/**
 * Whether something exists at `path` (any kind); an unreadable place counts as absent.
 *
 * @example
 * ```ts
 * pathExists("/etc/homed/homed.yaml"); // true once init wrote it
 * ```
 */
export function pathExists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
}
