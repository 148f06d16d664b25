/**
 * What this build of homed is: written by `deno task compile` / the release script before a binary is built; a run
 * from a checkout says `dev`.
 *
 * @module
 */

/** The git commit a release was built from, or `dev`. */
export const COMMIT = "dev";
