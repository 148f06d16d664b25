/**
 * What every LLM request of a homed on default settings must look like, for the fake server's checks.
 *
 * @module
 */

import { DEFAULT_PERSONA_TEXT } from "../../src/agent/personal.ts";
import type { FakeExpectations } from "./fake_llm.ts";

/** The API key end-to-end tests configure. */
export const TEST_KEY = "sk-test-0123456789";

/** Persona first, thinking off, the default model and max_tokens, the test key. */
export const DEFAULT_CONTRACT: FakeExpectations = {
  personaPrefix: DEFAULT_PERSONA_TEXT,
  thinking: false,
  model: "deepseek-v4-flash",
  maxTokens: 4096,
  apiKey: TEST_KEY,
};
