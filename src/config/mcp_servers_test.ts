import assert from "node:assert/strict";
import { parseConfig } from "./load.ts";
import { mcpServers } from "./mcp_servers.ts";

const configOf = (text: string) =>
  parseConfig({
    text,
    location: { path: "/etc/homed/homed.yaml", origin: "--config" },
    readEnv: () => undefined,
    cwd: "/",
  })
    .config;

Deno.test("MCP servers: the config's and a Claude-Desktop mcp.json's, the config's winning; bad ones named", () => {
  const config = configOf([
    "mcp:",
    "  import: mcp.json",
    "  servers:",
    "    files: { command: npx, args: [-y, '@modelcontextprotocol/server-filesystem', /srv/share], trust: household }",
    "",
  ].join("\n"));
  const file = JSON.stringify({
    mcpServers: {
      files: { command: "ignored" },
      ha: { type: "http", url: "http://homeassistant.local:8123/api/mcp", headers: { Authorization: "Bearer x" } },
      everything: { command: "node", args: ["server.js", "stdio"], env: { DEBUG: "1" } },
    },
  });
  const read: string[] = [];
  const servers = mcpServers(config, "/etc/homed/homed.yaml", (path) => (read.push(path), file));
  assert.deepEqual(read, ["/etc/homed/mcp.json"], "relative to the config file");
  assert.deepEqual(servers.map((server) => [server.name, server.source, server.command ?? server.url, server.trust]), [
    ["files", "mcp.servers", "npx", "household"],
    ["ha", "/etc/homed/mcp.json", "http://homeassistant.local:8123/api/mcp", "owner"],
    ["everything", "/etc/homed/mcp.json", "node", "owner"],
  ]);
  assert.deepEqual(servers[2]!.env, { DEBUG: "1" });

  const bad = (json: unknown) => () =>
    mcpServers(configOf("mcp: { import: /x/mcp.json }\n"), undefined, () => JSON.stringify(json));
  assert.throws(bad({}), /^TypeError: mcp\.import: \/x\/mcp\.json has no "mcpServers" object/);
  assert.throws(
    bad({ mcpServers: { a: { command: "x", url: "http://y/" } } }),
    /mcpServers\.a\.command: either command .* or url/,
  );
  assert.throws(bad({ mcpServers: { a: { url: "ftp://y" } } }), /mcpServers\.a\.url: an http:\/\/ or https:\/\/ URL/);
  assert.throws(
    bad({ mcpServers: { a: { type: "websocket", url: "http://y/" } } }),
    /mcpServers\.a\.type: got "websocket"/,
  );
  assert.throws(
    () => mcpServers(configOf("mcp: { import: /x/mcp.json }\n"), undefined, () => "{not json"),
    /could not be read as JSON/,
  );
  assert.throws(
    () => configOf("mcp:\n  servers:\n    both: { command: x, url: 'http://y/' }\n"),
    /mcp\.servers\.both\.command: got "x"; allowed: either command \(a stdio server\) or url/,
  );
});
