/**
 * The SDK `Client` homed opens a session with: named `homed` at its version, with no capabilities of its own, and
 * checking a tool's `structuredContent` with homed's own JSON Schema validator instead of the SDK's default (ajv:
 * megabytes of memory for a check homed already has).
 *
 * @module
 */

import { Client } from "@modelcontextprotocol/sdk/client";
import type {
  JsonSchemaType,
  JsonSchemaValidator,
  jsonSchemaValidator,
} from "@modelcontextprotocol/sdk/validation/types";
import { compileSchema } from "../tools/json_schema.ts";
import { VERSION } from "../version.ts";

/**
 * The SDK checks a tool's `structuredContent` against its `outputSchema`; with homed's validator instead of the
 * SDK's default (ajv: megabytes of memory for a check homed already has). A schema homed cannot compile is not
 * enforced — the result still comes back.
 */
const homedValidator: jsonSchemaValidator = {
  getValidator<T>(schema: JsonSchemaType): JsonSchemaValidator<T> {
    let check: ((value: unknown) => { path: string; message: string }[]) | undefined;
    try {
      check = compileSchema(schema);
    } catch {
      check = undefined;
    }
    return (input: unknown) => {
      const violations = check?.(input) ?? [];
      if (!violations.length) return { valid: true, data: input as T, errorMessage: undefined };
      const message = violations.map(({ path, message }) => `${path || "the value"} ${message}`).join("; ");
      return { valid: false, data: undefined, errorMessage: message };
    };
  },
};

/**
 * A new client, for one transport (the streamable-HTTP attempt and its SSE fallback each get their own).
 *
 * @example
 * ```ts
 * const client = newClient();
 * ```
 */
export function newClient(): Client {
  return new Client({ name: "homed", version: VERSION }, { capabilities: {}, jsonSchemaValidator: homedValidator });
}
