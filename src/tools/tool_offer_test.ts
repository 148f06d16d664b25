import assert from "node:assert/strict";
import { chooseTools, type ListedTool } from "./tool_offer.ts";

const tool = (name: string, owner: string, allow: ListedTool["allow"] = "anyone", description = ""): ListedTool => ({
  spec: { name, description, parameters: { type: "object" } },
  owner,
  allow,
});

Deno.test("within the limit every tool is offered, the same list whoever asks", () => {
  const tools = [tool("b", "mcp:x", "owner"), tool("a", "core")];
  for (const trust of ["owner", "guest"] as const) {
    const offer = chooseTools(tools, { max: 2, trust, text: "hi" });
    assert.deepEqual(offer.specs.map((s) => s.name), ["a", "b"]);
    assert.deepEqual(offer.leftOut, []);
  }
});

Deno.test("over the limit: homed's and the devices' tools always, then what the sender may call, nearest the message", () => {
  const tools = [
    tool("knowledge_search", "core"),
    tool("gpio_set", "device:gpio", "household"),
    tool("mcp__files__read_file", "mcp:files", "owner", "Read a file"),
    tool("mcp__weather__forecast", "mcp:weather", "anyone", "Weather forecast for a city"),
    tool("mcp__weather__alerts", "mcp:weather", "anyone", "Storm alerts"),
    tool("lamp_set", "plugin:lamp", "anyone", "Switch the lamp"),
  ];
  const guest = chooseTools(tools, { max: 4, trust: "guest", text: "明天的天气 forecast?" });
  assert.deepEqual(guest.specs.map((s) => s.name), [
    "gpio_set",
    "knowledge_search",
    "lamp_set",
    "mcp__weather__forecast",
  ]);
  assert.deepEqual(guest.leftOut, ["mcp__files__read_file", "mcp__weather__alerts"]);
  // Chinese words count too: 天气 is in the description.
  const chinese = chooseTools([...tools.slice(0, 2), tool("mcp__w__f", "mcp:w", "anyone", "查询天气预报")], {
    max: 3,
    trust: "owner",
    text: "明天天气怎么样",
  });
  assert.ok(chinese.specs.some((s) => s.name === "mcp__w__f"));
  // No word in common: plugins before MCP servers, then by name.
  const plain = chooseTools(tools, { max: 3, trust: "owner", text: "hello" });
  assert.deepEqual(plain.specs.map((s) => s.name), ["gpio_set", "knowledge_search", "lamp_set"]);
});
