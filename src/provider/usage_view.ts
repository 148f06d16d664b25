/**
 * Token counts as the API shows them: snake_case, with DeepSeek's names for the prefix-cache counts.
 *
 * @module
 */

import type { Usage } from "./provider.ts";

/** One response's (or a total's) token counts, as `/api/status` and `/api/turns` show them. */
export interface UsageView {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_cache_hit_tokens: number;
  prompt_cache_miss_tokens: number;
}

/**
 * The API's view of token counts.
 *
 * @example
 * ```ts
 * usageView({ promptTokens: 12, completionTokens: 3, totalTokens: 15, cacheHitTokens: 0, cacheMissTokens: 12 });
 * // { prompt_tokens: 12, completion_tokens: 3, total_tokens: 15, prompt_cache_hit_tokens: 0, prompt_cache_miss_tokens: 12 }
 * ```
 */
export function usageView(usage: Usage): UsageView {
  return {
    prompt_tokens: usage.promptTokens,
    completion_tokens: usage.completionTokens,
    total_tokens: usage.totalTokens,
    prompt_cache_hit_tokens: usage.cacheHitTokens,
    prompt_cache_miss_tokens: usage.cacheMissTokens,
  };
}
