/**
 * Which tools one turn offers the model when there are more than it accepts. DeepSeek and OpenAI take at most 128
 * tools in a request, and one MCP server can bring hundreds: sent whole, every turn of everyone would fail. Within the
 * limit every tool is offered, the same list for everyone (a stable prompt prefix); over it, a turn offers first
 * homed's own tools and the devices' (always), then — leaving out what the sender's trust could not call anyway — the
 * plugin and MCP tools whose names and descriptions share the most words with the message.
 *
 * @module
 */

import { permits, type ToolAllow, type Trust } from "../identity/trust.ts";
import { compareText } from "../text/compare_text.ts";
import type { ToolSpec } from "./tool.ts";

/** The most tools DeepSeek's and OpenAI's chat APIs accept in one request. */
export const DEFAULT_MAX_TOOLS = 128;

/** One registered tool as the choice sees it. */
export interface ListedTool {
  spec: ToolSpec;
  /** The registry's owner key: `core`, `device:<name>`, `plugin:<name>` or `mcp:<name>`. */
  owner: string;
  allow: ToolAllow;
}

/** What a turn offers, and what it leaves out (sorted by name). */
export interface ToolOffer {
  specs: ToolSpec[];
  leftOut: string[];
}

/** True for the tools every turn offers whatever the limit: homed's own and the configured devices'. */
export function alwaysOffered(tool: Pick<ListedTool, "owner">): boolean {
  return tool.owner === "core" || tool.owner.startsWith("device:");
}

/**
 * The tools of one turn: all of them when they fit `max`; otherwise the always-offered ones, then those the sender
 * may call, most related to `text` first (ties: plugins before MCP servers, then by name). The specs come back sorted
 * by name, like the registry's.
 *
 * @example
 * ```ts
 * const spec = (name: string, description = "") => ({ name, description, parameters: { type: "object" } });
 * const offer = chooseTools([
 *   { spec: spec("knowledge_search"), owner: "core", allow: "anyone" },
 *   { spec: spec("mcp__files__read_file", "Read a file"), owner: "mcp:files", allow: "owner" },
 *   { spec: spec("mcp__weather__forecast", "Weather forecast for a city"), owner: "mcp:weather", allow: "anyone" },
 * ], { max: 2, trust: "owner", text: "What is the weather tomorrow?" });
 * offer.specs.map((s) => s.name); // ["knowledge_search", "mcp__weather__forecast"]
 * offer.leftOut; // ["mcp__files__read_file"]
 * ```
 */
export function chooseTools(
  tools: readonly ListedTool[],
  options: { max: number; trust: Trust; text: string },
): ToolOffer {
  const byName = (a: ListedTool, b: ListedTool) => compareText(a.spec.name, b.spec.name);
  const sorted = [...tools].sort(byName);
  if (sorted.length <= options.max) return { specs: sorted.map((tool) => tool.spec), leftOut: [] };
  const pinned = sorted.filter(alwaysOffered);
  const words = wordsOf(options.text);
  const ranked = sorted
    .filter((tool) => !alwaysOffered(tool) && permits(tool.allow, options.trust))
    .map((tool) => ({ tool, score: overlap(words, wordsOf(`${tool.spec.name} ${tool.spec.description}`)) }))
    .sort((a, b) =>
      b.score - a.score || rank(a.tool.owner) - rank(b.tool.owner) || compareText(a.tool.spec.name, b.tool.spec.name)
    );
  const room = Math.max(0, options.max - pinned.length);
  const kept = new Set([...pinned.slice(0, options.max), ...ranked.slice(0, room).map((entry) => entry.tool)]);
  return {
    specs: sorted.filter((tool) => kept.has(tool)).map((tool) => tool.spec),
    leftOut: sorted.filter((tool) => !kept.has(tool)).map((tool) => tool.spec.name),
  };
}

const CJK = "\\p{Script=Han}\\p{Script=Hiragana}\\p{Script=Katakana}\\p{Script=Hangul}";
const CJK_RUN = new RegExp(`([${CJK}]+)`, "gu");
const CJK_ONLY = new RegExp(`^[${CJK}]+$`, "u");

function rank(owner: string): number {
  return owner.startsWith("plugin:") ? 0 : 1;
}

/**
 * The words of a text for relevance: Latin words and numbers of two or more characters (lower case, split at `_`,
 * `-` and camel case), and every pair of neighbouring CJK characters (Chinese has no spaces).
 */
function wordsOf(text: string): Set<string> {
  const words = new Set<string>();
  const spaced = text.replace(/([a-z])([A-Z])/g, "$1 $2").replace(CJK_RUN, " $1 ").toLowerCase();
  for (const word of spaced.match(/[\p{L}\p{N}]+/gu) ?? []) {
    if (CJK_ONLY.test(word)) {
      for (let i = 0; i + 1 < word.length; i++) words.add(word.slice(i, i + 2));
      if (word.length === 1) words.add(word);
    } else if (word.length >= 2) {
      words.add(word);
    }
  }
  return words;
}

function overlap(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  let shared = 0;
  for (const word of a) if (b.has(word)) shared++;
  return shared;
}

/**
 * Why a configuration's own tools cannot fit, or undefined: homed's and the devices' tools are offered on every turn,
 * so more of them than `llm.max_tools` would fail every request — refused at start, naming the key and what it must be.
 *
 * @example
 * ```ts
 * toolRoomProblem([], 128); // undefined
 * ```
 */
export function toolRoomProblem(listing: readonly Pick<ListedTool, "owner">[], maxTools: number): string | undefined {
  const always = listing.filter(alwaysOffered).length;
  if (always <= maxTools) return undefined;
  return `llm.max_tools: got ${maxTools}, but homed's own tools and the configured devices' come to ${always}, and ` +
    `every turn offers them all; allowed: at least ${always} (DeepSeek and OpenAI accept up to ${DEFAULT_MAX_TOOLS})`;
}
