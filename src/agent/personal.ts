/**
 * The persona: `personal.md`, loaded once at start-up and never changed while homed runs.
 *
 * @module
 */

import defaultPersonaText from "../../personal.md" with { type: "text" };
import { sha256Hex } from "../text/sha256_hex.ts";

/** The loaded persona. Frozen: nothing can change it after loading. */
export interface Persona {
  readonly text: string;
  /** The file it came from, or `embedded default`. */
  readonly source: string;
  /** Hex SHA-256 of the text, shown in `/api/status` so a change between runs is visible. */
  readonly sha256: string;
}

/** Largest persona accepted; it is sent with every request. */
export const MAX_PERSONA_BYTES = 32 * 1024;

/** Options of {@link loadPersona}. */
export interface LoadPersonaOptions {
  path: string;
  /** True when the config names the file; a missing file is then an error instead of using the embedded default. */
  explicit: boolean;
}

/**
 * Loads the persona. Throws `TypeError` naming `paths.personal` and the path when the file is missing (and was
 * named explicitly), empty, too large or unreadable.
 *
 * @example
 * ```ts
 * const persona = await loadPersona({ path: "/etc/homed/personal.md", explicit: true });
 * persona.text.startsWith("# "); // true
 * ```
 */
export async function loadPersona(options: LoadPersonaOptions): Promise<Persona> {
  let bytes: Uint8Array;
  try {
    bytes = await Deno.readFile(options.path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound && !options.explicit) {
      return Object.freeze({
        text: defaultPersonaText,
        source: "embedded default",
        sha256: await sha256Hex(defaultPersonaText),
      });
    }
    const why = error instanceof Deno.errors.NotFound ? "does not exist" : (error as Error).message;
    throw new TypeError(`paths.personal: ${options.path} ${why}`);
  }
  if (bytes.length > MAX_PERSONA_BYTES) {
    throw new TypeError(
      `paths.personal: ${options.path} has ${bytes.length} bytes; allowed: at most ${MAX_PERSONA_BYTES}`,
    );
  }
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new TypeError(`paths.personal: ${options.path} is not valid UTF-8 text`);
  }
  if (text.trim() === "") throw new TypeError(`paths.personal: ${options.path} is empty`);
  return Object.freeze({ text, source: options.path, sha256: await sha256Hex(text) });
}

/** The persona shipped with homed. */
export const DEFAULT_PERSONA_TEXT: string = defaultPersonaText;

/**
 * The names the persona gives the butler ("名叫「阿福」", "You are Alfred"), so memory never records facts about them:
 * the butler's identity is personal.md alone.
 *
 * @example
 * ```ts
 * personaNames("你是管家，名叫「阿福」(Alfred)。You are Alfred (阿福)."); // ["阿福", "Alfred"]
 * ```
 */
export function personaNames(persona: string): string[] {
  const names = new Set<string>();
  for (const match of persona.matchAll(/(?:名叫|叫做|叫)「([^」]{1,20})」(?:\s*[(（]([^)）]{1,30})[)）])?/gu)) {
    names.add(match[1]!.trim());
    if (match[2]) names.add(match[2].trim());
  }
  for (const match of persona.matchAll(/\b(?:You are|Your name is|I am) ([A-Z][\w-]{1,30})/g)) names.add(match[1]!);
  return [...names];
}
