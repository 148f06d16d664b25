/**
 * The environment for a Deno child that may reach a package registry (`deno install`, `deno bundle` fetching
 * esbuild, `deno compile` fetching denort): the system's certificate store trusted beside Deno's own Mozilla roots,
 * so a TLS-inspecting proxy whose CA the machine trusts works. A `DENO_TLS_CA_STORE` the user set is kept.
 *
 * @module
 */

/**
 * Variables to add to the inherited environment of such a child.
 *
 * @example
 * ```ts
 * await new Deno.Command(Deno.execPath(), { args: ["install", "--frozen"], env: denoRegistryEnv() }).output();
 * ```
 */
export function denoRegistryEnv(): Record<string, string> {
  return { DENO_TLS_CA_STORE: Deno.env.get("DENO_TLS_CA_STORE") ?? "mozilla,system" };
}
