/**
 * A small MCP server over stdio for the tests of `src/mcp/`, on the SDK's low-level `Server` so that its tool list
 * and schemas are exactly what a test needs (the reference servers cannot send 10 MB, count cancellations or change
 * their list on request):
 *
 * - `big {chars}`: that many characters of text;
 * - `slow`: waits until cancelled (at most 60 s), and counts the cancellations it saw;
 * - `cancellations`: that count;
 * - `add_tool`: adds the tool `late` and sends `notifications/tools/list_changed`;
 * - `strict {n}`: a schema with `if`/`then` (homed cannot check those), and the server's own check that `n` > 0;
 * - `fail`: the tool's own failure (`isError: true`);
 * - with the argument `--gadgets=N`, N more tools `gadget_<i>` (a server that offers more than a model accepts) and
 *   `weather_forecast`, which answers `sunny in <city>`.
 *
 * Run: `deno run --no-prompt --allow-read=. src/mcp/testdata/fixture_server.ts` from the repository root.
 *
 * @module
 */

// @ts-types="@modelcontextprotocol/sdk/server/index"
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
// @ts-types="@modelcontextprotocol/sdk/server/stdio"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import { CallToolRequestSchema, type CallToolResult, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const server = new Server({ name: "homed-fixture", version: "1.0.0" }, {
  capabilities: { tools: { listChanged: true } },
});

const tools: Array<{ name: string; description: string; inputSchema: Record<string, unknown> & { type: "object" } }> = [
  {
    name: "big",
    description: "Returns that many characters",
    inputSchema: { type: "object", properties: { chars: { type: "integer", minimum: 0 } }, required: ["chars"] },
  },
  { name: "slow", description: "Waits until cancelled", inputSchema: { type: "object", properties: {} } },
  { name: "cancellations", description: "How many calls were cancelled", inputSchema: { type: "object" } },
  { name: "add_tool", description: "Adds the tool late", inputSchema: { type: "object" } },
  {
    name: "strict",
    description: "A schema homed cannot check whole",
    inputSchema: {
      type: "object",
      properties: { n: { type: "integer", description: "A positive number" } },
      required: ["n"],
      if: { properties: { n: { minimum: 100 } } },
      then: { required: ["big"] },
    },
  },
  { name: "fail", description: "Always fails", inputSchema: { type: "object" } },
];
const gadgets = Number(/^--gadgets=(\d+)$/.exec(Deno.args.find((arg) => arg.startsWith("--gadgets=")) ?? "")?.[1] ?? 0);
for (let i = 1; i <= gadgets; i++) {
  tools.push({ name: `gadget_${i}`, description: `Switches gadget number ${i}`, inputSchema: { type: "object" } });
}
if (gadgets) {
  tools.push({
    name: "weather_forecast",
    description: "The weather forecast for a city",
    inputSchema: { type: "object", properties: { city: { type: "string" } } },
  });
}
let cancelled = 0;

const text = (value: string): CallToolResult => ({ content: [{ type: "text", text: value }] });

server.setRequestHandler(ListToolsRequestSchema, () => ({ tools }));

server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
  const args = request.params.arguments ?? {};
  switch (request.params.name) {
    case "big":
      return text("x".repeat(Number(args.chars)));
    case "slow":
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 60_000);
        extra.signal.addEventListener("abort", () => {
          cancelled++;
          clearTimeout(timer);
          resolve();
        }, { once: true });
      });
      return text("slow finished");
    case "cancellations":
      return text(String(cancelled));
    case "add_tool":
      if (!tools.some((tool) => tool.name === "late")) {
        tools.push({ name: "late", description: "Added later", inputSchema: { type: "object" } });
      }
      await server.sendToolListChanged();
      return text("added");
    case "late":
      return text("late tool here");
    case "strict":
      return Number(args.n) > 0
        ? text(`n is ${args.n}`)
        : { content: [{ type: "text", text: "n must be positive (the server's own check)" }], isError: true };
    case "weather_forecast":
      return text(`sunny in ${args.city}`);
    case "fail":
      return { content: [{ type: "text", text: "it broke" }], isError: true };
    default:
      return { content: [{ type: "text", text: `no tool ${request.params.name}` }], isError: true };
  }
});

await server.connect(new StdioServerTransport());
