/**
 * The intent data files shipped in `config/intents/`, embedded so a compiled or bundled homed has them without the
 * repository. They come first when the matcher is compiled; the user's files add to them.
 *
 * @module
 */

import en from "../../config/intents/en.yaml" with { type: "text" };
import zh from "../../config/intents/zh.yaml" with { type: "text" };

/**
 * The shipped data files, Chinese first, as `{ name, text }` for `IntentMatcher.compile`.
 *
 * @example
 * ```ts
 * import { IntentMatcher } from "./matcher.ts";
 *
 * const mine = { name: "mine.yaml", text: 'language: en\nintents:\n  HassTurnOn:\n    - "wake up [the] {name}"\n' };
 * const matcher = IntentMatcher.compile([...EMBEDDED_INTENT_FILES, mine]);
 * EMBEDDED_INTENT_FILES.map((file) => file.name); // ["zh.yaml", "en.yaml"]
 * ```
 */
export const EMBEDDED_INTENT_FILES: readonly { name: string; text: string }[] = [
  { name: "zh.yaml", text: zh },
  { name: "en.yaml", text: en },
];
