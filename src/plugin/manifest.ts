/**
 * `skill.json`, HomeAgent's plugin manifest (schema in DESIGN.md, "skill.json"), checked by the same JSON Schema
 * validator as tool arguments: identity (name, version, author, description), the Lua script that holds the tools'
 * handlers and what it is granted (hosts for `http.request`, a key-value store), and the tools, each with a JSON Schema
 * and a handler (a Lua function, or an exec template: a program run with the call's arguments, no shell); a channel
 * of its own (`io`: what it shows, the Lua functions that show output and poll for input), or a device built by a
 * factory compiled into homed (`native`). Every path stays inside the plugin's folder.
 *
 * @module
 */

import { resolve } from "node:path";
import { isInside } from "../fs/contained.ts";
import { compileSchema } from "../tools/json_schema.ts";

/** An exec handler: a program run with arguments filled from the call, no shell. */
export interface ExecHandler {
  /** The program (a name on PATH or an absolute path) and its arguments; `{field}` is replaced by that argument. */
  argv: string[];
  /** Most bytes of output kept (64 KiB by default); more stops the program. */
  maxOutputBytes: number;
}

/** One tool a manifest declares. */
export interface ManifestTool {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
  /** Who may cause it (default `household`). */
  allow: "anyone" | "household" | "owner";
  /** The Lua function that handles it, or the program to run. */
  lua?: string;
  exec?: ExecHandler;
  /** Milliseconds one call may take (default: the registry's). */
  timeoutMs?: number;
}

/** A plugin's own channel: what it can show, the Lua function that shows it, and a poll that may emit inputs. */
export interface ManifestIo {
  /** Capability names (`text`, `file`, `image`, `audio`, `structured`). */
  capabilities: string[];
  /** The Lua function an output goes to (the output event as JSON text). */
  onOutput?: string;
  /** A Lua function run every `everyMs` (it may call `io.emit`). */
  poll?: { lua: string; everyMs: number };
}

/** A checked manifest. */
export interface Manifest {
  name: string;
  version: string;
  author?: string;
  description: string;
  /** Absolute path of the Lua script, inside the plugin folder. */
  lua?: string;
  grants: { http: string[]; kv: boolean };
  tools: ManifestTool[];
  /** A device factory compiled into homed (`onebot`), which builds this plugin's device. */
  native?: string;
  io?: ManifestIo;
}

const TOOL = {
  type: "object",
  properties: {
    name: { type: "string", pattern: "^[a-zA-Z0-9_-]{1,64}$" },
    description: { type: "string", minLength: 1, maxLength: 1024 },
    parameters: { type: "object", properties: { type: { const: "object" } }, required: ["type"] },
    allow: { enum: ["anyone", "household", "owner"] },
    timeout_ms: { type: "integer", minimum: 100, maximum: 600_000 },
    handler: {
      type: "object",
      properties: {
        lua: { type: "string", pattern: "^[A-Za-z_][A-Za-z0-9_]*$" },
        exec: {
          type: "object",
          properties: {
            argv: { type: "array", items: { type: "string", maxLength: 1000 }, minItems: 1, maxItems: 64 },
            max_output_bytes: { type: "integer", minimum: 1, maximum: 16_777_216 },
          },
          required: ["argv"],
          additionalProperties: false,
        },
      },
      minProperties: 1,
      maxProperties: 1,
      additionalProperties: false,
    },
  },
  required: ["name", "description", "parameters", "handler"],
  additionalProperties: false,
};

/** The manifest's JSON Schema (documented in DESIGN.md). */
export const MANIFEST_SCHEMA = {
  type: "object",
  properties: {
    name: { type: "string", pattern: "^[a-z0-9]+(-[a-z0-9]+)*$", maxLength: 64 },
    version: { type: "string", pattern: "^\\d+\\.\\d+\\.\\d+([-+][0-9A-Za-z.-]+)?$" },
    author: { type: "string", maxLength: 200 },
    description: { type: "string", minLength: 1, maxLength: 1024 },
    lua: { type: "string", minLength: 1, maxLength: 300 },
    grants: {
      type: "object",
      properties: {
        http: { type: "array", items: { type: "string", pattern: "^[A-Za-z0-9.-]+(:\\d{1,5})?$" }, maxItems: 50 },
        kv: { type: "boolean" },
      },
      additionalProperties: false,
    },
    tools: { type: "array", items: TOOL, maxItems: 100 },
    io: {
      type: "object",
      properties: {
        capabilities: {
          type: "array",
          items: { enum: ["text", "file", "image", "audio", "structured"] },
          uniqueItems: true,
        },
        on_output: { type: "string", pattern: "^[A-Za-z_][A-Za-z0-9_]*$" },
        poll: {
          type: "object",
          properties: {
            lua: { type: "string", pattern: "^[A-Za-z_][A-Za-z0-9_]*$" },
            every_ms: { type: "integer", minimum: 1_000, maximum: 86_400_000 },
          },
          required: ["lua", "every_ms"],
          additionalProperties: false,
        },
      },
      additionalProperties: false,
    },
    native: { type: "string" },
  },
  required: ["name", "version", "description"],
  additionalProperties: false,
};

const check = compileSchema(MANIFEST_SCHEMA);

/** A manifest that cannot be used; each problem names the field. */
export class ManifestError extends Error {
  readonly problems: string[];
  /**
   * @example
   * ```ts
   * const error = new ManifestError("/srv/homed/plugins/lamp/skill.json", ["version: must match pattern"]);
   * error.message; // "/srv/homed/plugins/lamp/skill.json: version: must match pattern"
   * ```
   */
  constructor(path: string, problems: string[]) {
    super(`${path}: ${problems.join("; ")}`);
    this.name = "ManifestError";
    this.problems = problems;
  }
}

/**
 * Parses and checks a `skill.json` of the plugin in `dir`.
 *
 * @example
 * ```ts
 * const dir = "/srv/homed/plugins/lamp";
 * const manifest = readManifest(await Deno.readTextFile(`${dir}/skill.json`), dir, `${dir}/skill.json`);
 * manifest.tools.map((tool) => tool.name); // the tools it declares
 * ```
 */
export function readManifest(text: string, dir: string, path: string): Manifest {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new ManifestError(path, [`not JSON (${(error as Error).message})`]);
  }
  const violations = check(raw);
  if (violations.length) {
    throw new ManifestError(path, violations.map((v) => `${v.path || "(top level)"}: ${v.message}`));
  }
  const manifest = raw as {
    name: string;
    version: string;
    author?: string;
    description: string;
    lua?: string;
    grants?: { http?: string[]; kv?: boolean };
    tools?: Array<typeof TOOL & Record<string, unknown>>;
    io?: { capabilities?: string[]; on_output?: string; poll?: { lua: string; every_ms: number } };
    native?: string;
  };
  const problems: string[] = [];
  const io = manifest.io;
  if (io) {
    if (manifest.lua === undefined) problems.push("io: a plugin's channel needs the lua script that serves it");
    if ((io.capabilities ?? []).length && !io.on_output) {
      problems.push("io.on_output: a channel that shows output needs the Lua function that shows it");
    }
    if (manifest.native !== undefined) {
      problems.push("io: a native plugin's device comes from its factory, not from io");
    }
  }
  let lua: string | undefined;
  if (manifest.lua !== undefined) {
    lua = resolve(dir, manifest.lua);
    if (!isInside(dir, lua)) {
      problems.push(`lua: ${JSON.stringify(manifest.lua)} is outside the plugin's folder`);
    }
  }
  const tools: ManifestTool[] = [];
  (manifest.tools ?? []).forEach((tool, index) => {
    const spec = tool as unknown as {
      name: string;
      description: string;
      parameters: Record<string, unknown>;
      allow?: ManifestTool["allow"];
      timeout_ms?: number;
      handler: { lua?: string; exec?: { argv: string[]; max_output_bytes?: number } };
    };
    const { exec } = spec.handler;
    if (exec) {
      const program = exec.argv[0]!;
      if (program.includes("{") || !/^(\/[^\0]+|[\w.+-]+)$/.test(program)) {
        problems.push(
          `tools.${index}.handler.exec.argv.0: ${
            JSON.stringify(program)
          } must be a program name or an absolute path, without {placeholders}`,
        );
      }
    } else if (lua === undefined) problems.push(`tools.${index}.handler.lua: the manifest names no lua script`);
    tools.push({
      name: spec.name,
      description: spec.description,
      parameters: spec.parameters,
      allow: spec.allow ?? "household",
      ...(exec
        ? { exec: { argv: exec.argv, maxOutputBytes: exec.max_output_bytes ?? 65_536 } }
        : { lua: spec.handler.lua! }),
      ...(spec.timeout_ms === undefined ? {} : { timeoutMs: spec.timeout_ms }),
    });
  });
  if (problems.length) throw new ManifestError(path, problems);
  return {
    name: manifest.name,
    version: manifest.version,
    ...(manifest.author === undefined ? {} : { author: manifest.author }),
    description: manifest.description,
    ...(lua === undefined ? {} : { lua }),
    grants: { http: manifest.grants?.http ?? [], kv: manifest.grants?.kv ?? false },
    tools,
    ...(manifest.native === undefined ? {} : { native: manifest.native }),
    ...(io
      ? {
        io: {
          capabilities: io.capabilities ?? [],
          ...(io.on_output ? { onOutput: io.on_output } : {}),
          ...(io.poll ? { poll: { lua: io.poll.lua, everyMs: io.poll.every_ms } } : {}),
        },
      }
      : {}),
  };
}
