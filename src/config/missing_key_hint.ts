/**
 * The one sentence homed says when no LLM key is set (start-up, `homed doctor`): the variable or key to set, where.
 *
 * @module
 */

import type { LoadedConfig } from "./load.ts";

/**
 * What to tell the user when no LLM key is set: which variable or key, in which file.
 *
 * @example
 * ```ts
 * import type { LoadedConfig } from "./load.ts";
 *
 * declare const loaded: LoadedConfig; // llm.api_key: "${DEEPSEEK_API_KEY}", unset
 * missingKeyHint(loaded); // "No LLM API key is set, so homed cannot answer yet: set the DEEPSEEK_API_KEY …"
 * ```
 */
export function missingKeyHint(loaded: LoadedConfig): string {
  const where = loaded.location.path ?? "the embedded defaults";
  const variable = /^\$\{([A-Za-z_][A-Za-z0-9_]*)/.exec(loaded.apiKeySource)?.[1];
  const how = variable
    ? `set the ${variable} environment variable for homed (llm.api_key is "${loaded.apiKeySource}" in ${where})`
    : `set llm.api_key in ${where}`;
  return `No LLM API key is set, so homed cannot answer yet: ${how}, then restart homed`;
}
